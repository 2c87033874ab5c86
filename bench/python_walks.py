#!/usr/bin/python3
"""bench/python_walks.py DUMP_PHYS DUMP_PAGING VMLINUX - the same Python
walks under drgn and under kvmstat's object layer (issue 28), side by side
on one real Linux dump: every task (pid, comm, state) x20, every slab cache
(size, object_size, name) x20, and 20,000 struct pages' flags.  Prints a
Markdown table with medians of five runs and the ratio to drgn.  drgn reads
the paging ELF (it cannot read QEMU's phys-only one), kvmstat the phys ELF:
the same memory.  Not a test: timings move on this machine."""
import os
import statistics
import subprocess
import sys
import time

WALKS = r'''
import sys, time, json
def run(prog, Object, list_for_each_entry):
    out = {}
    t0 = time.perf_counter()
    n = 0
    for _ in range(20):
        for task in list_for_each_entry('struct task_struct',
                                        prog['init_task'].tasks.address_of_(), 'tasks'):
            n += task.pid.value_() + len(task.comm.string_()) + task.__state.value_()
    t1 = time.perf_counter()
    m = 0
    for _ in range(20):
        for c in list_for_each_entry('struct kmem_cache', prog['slab_caches'].address_of_(),
                                     'list'):
            m += c.size.value_() + c.object_size.value_() + len(c.name.string_())
    t2 = time.perf_counter()
    base = prog['vmemmap_base'].value_()
    size = prog.type('struct page').size
    page_t = prog.type('struct page *')
    s = 0
    for pfn in range(20000):
        s += Object(prog, page_t, value=base + pfn * size).flags.value_() & 1
    t3 = time.perf_counter()
    print(json.dumps({'tasks': t1 - t0, 'caches': t2 - t1, 'pages': t3 - t2,
                      'check': [n, m, s]}))
if sys.argv[1] == 'drgn':
    import drgn
    from drgn.helpers.linux.list import list_for_each_entry
    prog = drgn.Program()
    prog.set_core_dump(sys.argv[2])
    prog.load_debug_info([sys.argv[3]])
    run(prog, drgn.Object, list_for_each_entry)
else:
    import kvmstat
    from kvmstat.helpers.linux import list_for_each_entry
    prog = kvmstat.open(core=sys.argv[2], kernel=sys.argv[3])
    run(prog, kvmstat.Object, list_for_each_entry)
'''


def main():
    import json
    phys, paging, vmlinux = sys.argv[1:4]
    res = {'drgn': [], 'kvmstat': []}
    for _ in range(5):
        for tool, dump in (('drgn', paging), ('kvmstat', phys)):
            out = subprocess.run(['/usr/bin/python3', '-c', WALKS, tool, dump, vmlinux],
                                 check=True, capture_output=True, text=True).stdout
            res[tool].append(json.loads(out.splitlines()[-1]))
    checks = {tool: r[0]['check'] for tool, r in res.items()}
    if checks['drgn'] != checks['kvmstat']:
        print('python_walks: the two walks read different values: %r' % checks)
        return 1
    rows = []
    print('| walk | drgn ms | kvmstat ms | kvmstat / drgn |')
    print('| --- | --- | --- | --- |')
    for w in ('tasks', 'caches', 'pages'):
        d = statistics.median(r[w] for r in res['drgn']) * 1e3
        k = statistics.median(r[w] for r in res['kvmstat']) * 1e3
        rows.append({'walk': w, 'drgn_ms': d, 'kvmstat_ms': k, 'vs_drgn': k / d})
        print('| %s | %.1f | %.1f | %.2fx |' % (w, d, k, k / d))
    if os.environ.get('PYWALK_JSON'):
        with open(os.environ['PYWALK_JSON'], 'w') as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == '__main__':
    _ = time
    sys.exit(main())
