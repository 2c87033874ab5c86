"""Helpers for kernel data structures, under the names drgn users know
(kvmstat.helpers.linux) and their FreeBSD counterparts
(kvmstat.helpers.freebsd).  Each works on kvmstat.Object values from a
kvmstat.Program."""
