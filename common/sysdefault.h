/*
 * sysdefault.h - where kvmstat and kvmtop look when no -M/-N is given: the
 * running system's kernel (as vmstat does; the core then defaults to the
 * live memory device), and where the bundled demo dump lives (--demo).
 * Nothing here is a path of the source tree.
 */
#ifndef KVS_COMMON_SYSDEFAULT_H
#define KVS_COMMON_SYSDEFAULT_H

#include <stddef.h>

/* The booted kernel's file with symbols.  Returns 0 with the path in buf,
 * or -1 with a one-line explanation of what is missing in buf. */
int sys_default_kernel(char *buf, size_t len);

/* The bundled demo dump: kernel and core paths.  argv0 is the program's
 * argv[0] (used when /proc/self/exe is not available); datadir is the
 * installed data directory (meson's datadir/kvmstat/demo).  Looked for
 * beside the executable (an uninstalled build), in ../share/kvmstat/demo
 * relative to it (a moved installation), then in datadir.  Returns 0, or
 * -1 with an explanation in kernel. */
int sys_demo_paths(const char *argv0, const char *datadir, char *kernel, char *core,
    size_t len);

#endif
