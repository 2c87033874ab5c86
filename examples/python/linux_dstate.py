#!/usr/bin/env python3
"""The tasks of a Linux dump in uninterruptible sleep (ps's D), with the
kernel functions on top of each one's stack.

    linux_dstate.py [--all] CORE [VMLINUX]
    kvmstat -M CORE shell linux_dstate.py [--all]

For each task whose state letter is D (--all: every task), prints
"PID STATE COMM" and then the first kernel text symbols found on its
kernel stack from its saved stack pointer up (a scan, as crash's bt -t
does: return addresses, and stale ones, in the order they lie).
"""
import sys

import _path  # noqa: F401
import kvmstat
from kvmstat.helpers.linux import for_each_task, task_state_to_char

TOP = 5


def stack_symbols(prog, task, top=TOP):
    """Text symbols among the words of task's kernel stack, from its saved
    stack pointer to the stack's end."""
    stack = task.stack.value_()
    # THREAD_SIZE: the size of init_task's stack, as the kernel links it
    try:
        size = prog.symbol('init_stack').size or 16384
    except LookupError:
        size = 16384
    sp = task.thread.sp.value_()
    if not (stack <= sp < stack + size):
        sp = stack
    stext, etext = prog.symbol('_stext').address, prog.symbol('_etext').address
    out = []
    try:
        data = prog.read(sp, stack + size - sp)
    except kvmstat.FaultError:
        return out
    for i in range(0, len(data) - 7, 8):
        w = int.from_bytes(data[i:i + 8], 'little')
        if stext <= w < etext:
            hit = prog.symbol_at(w)
            if hit is not None:
                out.append('%s+0x%x' % hit)
                if len(out) == top:
                    break
    return out


def dstate(prog, everyone=False, out=sys.stdout):
    for task in for_each_task(prog):
        st = task_state_to_char(task)
        if st != 'D' and not everyone:
            continue
        print('%6d %s %s' % (task.pid.value_(), st,
                             task.comm.string_().decode('utf-8', 'backslashreplace')), file=out)
        for s in stack_symbols(prog, task):
            print('        %s' % s, file=out)


def main(argv):
    args = [a for a in argv[1:] if a != '--all']
    if len(args) not in (1, 2):
        print('usage: linux_dstate.py [--all] CORE [VMLINUX]', file=sys.stderr)
        return 2
    try:
        with kvmstat.open(core=args[0], kernel=args[1] if len(args) == 2 else None) as prog:
            dstate(prog, '--all' in argv)
    except kvmstat.Error as e:
        print('linux_dstate: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    if 'prog' in globals():             # kvmstat shell linux_dstate.py
        dstate(globals()['prog'], '--all' in sys.argv)
    else:
        sys.exit(main(sys.argv))
