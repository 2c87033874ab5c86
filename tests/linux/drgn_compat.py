#!/usr/bin/python3
"""drgn_compat.py DUMP_KVMSTAT DUMP_DRGN VMLINUX - one script, run under
drgn and under kvmstat's object layer (the names imported from `kvmstat`
instead of `drgn`), on the same memory; their printed lines must be equal.

The script walks every task (pid, comm, state letter, a dozen members
each), every slab cache (name, sizes, flags), the module list, the online
CPUs and each one's runqueue, a list walk in reverse, and casts and
container_of on the way: several thousand member reads.  DUMP_DRGN is the
form drgn reads (the paging ELF, or "alias:" and the phys-only ELF, which
drgn then reads with the kernel image's range added as a segment),
DUMP_KVMSTAT any form kvmstat reads.  Exit 0 when equal; 1 with the first
differences; 2 when a tool cannot run (a missing oracle fails).

KVS_DRGN_ROOT=DIR runs the drgn half in that chroot (tests/linux/kernel_check.sh's
trixie, with a newer drgn), the dump and vmlinux at the same paths there."""
import os
import difflib
import subprocess
import sys

SCRIPT = r'''
import sys
if sys.argv[1] == 'drgn':
    import drgn
    from drgn import Object, cast, container_of, sizeof
    from drgn.helpers.linux.list import list_for_each_entry, list_for_each_entry_reverse
    from drgn.helpers.linux.pid import for_each_task
    from drgn.helpers.linux.sched import task_state_to_char
    from drgn.helpers.linux.slab import for_each_slab_cache
    from drgn.helpers.linux.cpumask import for_each_online_cpu
    from drgn.helpers.linux.percpu import per_cpu
    # the kernel image aliased for QEMU's phys-only ELF: one home for that
    sys.path.insert(0, sys.argv[5])
    from oracle_drgn_generic import open_prog
    prog = open_prog(sys.argv[2], sys.argv[3], sys.argv[4] == 'alias')
else:
    import kvmstat
    from kvmstat import Object, cast, container_of, sizeof
    from kvmstat.helpers.linux import (list_for_each_entry, list_for_each_entry_reverse,
                                       for_each_task, task_state_to_char,
                                       for_each_slab_cache, for_each_online_cpu, per_cpu)
    prog = kvmstat.open(core=sys.argv[2], kernel=sys.argv[3])

out = []
p = out.append
tasks = sorted(for_each_task(prog), key=lambda t: t.pid.value_())
for t in tasks:
    p('task %d %s %s prio=%d static=%d flags=%#x mm=%#x tgid=%d cpus=%d on_cpu=%d '
      'parent=%d exit=%d' % (
        t.pid.value_(), t.comm.string_().decode('utf-8', 'replace'), task_state_to_char(t),
        t.prio.value_(), t.static_prio.value_(), t.flags.value_(), t.mm.value_(),
        t.tgid.value_(), t.nr_cpus_allowed.value_(), t.on_cpu.value_(),
        t.real_parent.pid.value_(), t.exit_code.value_()))
p('tasks %d' % len(tasks))
n = 0
for c in for_each_slab_cache(prog):
    n += 1
    p('cache %s size=%d object=%d align=%d flags=%#x inuse=%d' % (
        c.name.string_().decode('utf-8', 'replace'), c.size.value_(),
        c.object_size.value_(), c.align.value_(), c.flags.value_(), c.inuse.value_()))
p('caches %d' % n)
for m in list_for_each_entry('struct module', prog['modules'].address_of_(), 'list'):
    p('module %s state=%d refcnt_addr=%#x' % (m.name.string_().decode(), m.state.value_(),
                                              m.refcnt.address_of_().value_()))
names = [c.name.string_() for c in list_for_each_entry_reverse(
    'struct kmem_cache', prog['slab_caches'].address_of_(), 'list')]
p('reverse first %s last %s' % (names[0].decode(), names[-1].decode()))
for cpu in for_each_online_cpu(prog):
    rq = per_cpu(prog['runqueues'], cpu)
    p('cpu %d nr_running=%d curr=%d clock_nonzero=%d' % (
        cpu, rq.nr_running.value_(), rq.curr.pid.value_(), rq.clock.value_() != 0))
init = prog['init_task']
back = container_of(init.tasks.address_of_(), 'struct task_struct', 'tasks')
p('container_of %d' % (back.value_() == init.address_of_().value_()))
p('cast %d %d' % (cast('unsigned char', init.prio).value_(),
                  cast('long', init.comm[0]).value_()))
p('sizeof %d %d' % (sizeof(prog.type('struct task_struct')), sizeof(init.comm)))
for name in ('PG_slab', 'NR_FREE_PAGES', 'TASK_COMM_LEN'):
    try:
        p('enumerator %s %d' % (name, prog[name].value_()))
    except KeyError:
        p('enumerator %s absent' % name)   # PG_slab: gone in 6.12 (a page type)
p('release %s' % prog['init_uts_ns'].name.release.string_().decode())
print('\n'.join(out))
'''


def run(tool, dump, vmlinux, extra=()):
    root = os.environ.get('KVS_DRGN_ROOT') if tool == 'drgn' else None
    pre = ['chroot', root, 'python3'] if root else ['/usr/bin/python3']
    r = subprocess.run(pre + ['-c', SCRIPT, tool, dump, vmlinux] + list(extra),
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        print('drgn_compat: %s failed on %s:\n%s' % (tool, dump, r.stderr[-2000:]))
        return None
    return r.stdout.splitlines()


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    k = run('kvmstat', sys.argv[1], sys.argv[3])
    # DUMP_DRGN "alias:FILE": the phys-only ELF FILE with the image aliased
    d = run('drgn', sys.argv[2].split(':', 1)[-1], sys.argv[3],
            ['alias' if sys.argv[2].startswith('alias:') else 'plain',
             os.path.dirname(os.path.abspath(__file__))])
    if k is None or d is None:
        return 2
    if k == d:
        print('drgn_compat: %d lines equal (%s)' % (len(k), k[-1]))
        return 0
    diff = list(difflib.unified_diff(d, k, 'drgn', 'kvmstat', lineterm='', n=0))
    print('drgn_compat: %d lines differ' % sum(1 for x in diff if x[:1] in '+-'))
    print('\n'.join(diff[:40]))
    return 1


if __name__ == '__main__':
    sys.exit(main())
