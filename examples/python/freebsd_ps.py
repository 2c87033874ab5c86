#!/usr/bin/env python3
"""Every process of a FreeBSD dump: pid, state and name, as ps would list
them, walked with the object layer (allproc, struct proc).

    freebsd_ps.py KERNEL CORE
    kvmstat -M CORE -N KERNEL shell freebsd_ps.py

Prints "PID STATE COMM" per process in allproc's order; STATE is the
kernel's p_state by its enum's name when the kernel's types name it
(PRS_NEW, PRS_NORMAL, PRS_ZOMBIE), else its number.
"""
import sys

import _path  # noqa: F401
import kvmstat
from kvmstat.helpers.freebsd import for_each_proc


def state_names(prog):
    try:
        return {e.value: e.name for e in prog.type('enum p_states').enumerators}
    except LookupError:
        return {}


def ps(prog, out=sys.stdout):
    names = state_names(prog)
    print('%6s %-10s %s' % ('PID', 'STATE', 'COMM'), file=out)
    for p in for_each_proc(prog):
        st = p.p_state.value_()
        print('%6d %-10s %s' % (p.p_pid.value_(), names.get(st, str(st)),
                                p.p_comm.string_().decode('utf-8', 'backslashreplace')),
              file=out)


def main(argv):
    if len(argv) != 3:
        print('usage: freebsd_ps.py KERNEL CORE', file=sys.stderr)
        return 2
    try:
        with kvmstat.open(core=argv[2], kernel=argv[1]) as prog:
            ps(prog)
    except kvmstat.Error as e:
        print('freebsd_ps: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    if 'prog' in globals():             # kvmstat shell freebsd_ps.py
        ps(globals()['prog'])
    else:
        sys.exit(main(sys.argv))
