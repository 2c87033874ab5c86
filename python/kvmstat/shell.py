"""kvmstat shell: Python with `prog` bound, as `drgn -c vmcore` gives.

    python3 -m kvmstat.shell [--core CORE] [--kernel KERNEL] [--raw]
                             [--no-verify] [--] [SCRIPT [ARG...]]

(`kvmstat [-M CORE] [-N KERNEL] shell [SCRIPT [ARG...]]` runs this.)  The
namespace holds prog, the kvmstat module's object names (Object, cast,
sizeof, container_of, FaultError...), and every helper of the kernel's
family (kvmstat.helpers.linux or kvmstat.helpers.freebsd).  With SCRIPT,
the script runs as __main__ with that namespace as its globals and
sys.argv = [SCRIPT, ARG...]; without, an interactive console with tab
completion."""
import argparse
import code
import os
import runpy
import sys

import kvmstat


def namespace(prog):
    """What a shell or a script starts with: prog and the helpers."""
    ns = {'prog': prog, 'kvmstat': kvmstat}
    for name in ('Object', 'Type', 'TypeKind', 'TypeMember', 'FaultError', 'NotFoundError',
                 'cast', 'reinterpret', 'sizeof', 'offsetof', 'container_of', 'NULL',
                 'Program'):
        ns[name] = getattr(kvmstat, name)
    os_name = prog.kernel_info().os
    if os_name == 'Linux':
        from kvmstat.helpers import linux as helpers
    elif os_name == 'FreeBSD':
        from kvmstat.helpers import freebsd as helpers
    else:
        helpers = None
    if helpers is not None:
        for name in helpers.__all__:
            ns[name] = getattr(helpers, name)
    return ns


def main(argv=None):
    ap = argparse.ArgumentParser(prog='kvmstat shell', description=__doc__.split('\n')[0])
    ap.add_argument('--core')
    ap.add_argument('--kernel')
    ap.add_argument('--raw', action='store_true')
    ap.add_argument('--no-verify', action='store_true')
    ap.add_argument('script', nargs='?')
    ap.add_argument('args', nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    try:
        prog = kvmstat.open(core=a.core, kernel=a.kernel, raw=a.raw, verify=not a.no_verify)
    except kvmstat.Error as e:
        print('kvmstat: %s' % e, file=sys.stderr)
        return 1
    ns = namespace(prog)
    if a.script is not None:
        sys.argv = [a.script] + list(a.args)
        sys.path.insert(0, os.path.dirname(os.path.abspath(a.script)))
        try:
            runpy.run_path(a.script, init_globals=ns, run_name='__main__')
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return 0
    try:
        import readline
        import rlcompleter
        readline.set_completer(rlcompleter.Completer(ns).complete)
        readline.parse_and_bind('tab: complete')
    except ImportError:
        pass
    ki = prog.kernel_info()
    banner = ('kvmstat shell: %s %s\n%s\n'
              'prog is the kernel; helpers of its family are imported '
              '(dir() lists them).' % (ki.os or 'unknown', a.core or 'live memory',
                                       ki.version or ''))
    code.interact(banner=banner, local=ns, exitmsg='')
    return 0


if __name__ == '__main__':
    sys.exit(main())
