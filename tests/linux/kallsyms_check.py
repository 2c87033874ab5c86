#!/usr/bin/env python3
"""kallsyms_check.py DUMP SYSTEM_MAP - the kernel's symbols as kvmstat reads
them from a dump with no kernel file, checked symbol by symbol against the
kernel's System.map, twice: with the dump's VMCOREINFO naming the kallsyms
tables, and with those names removed from a copy of the dump (as kernels
before 6.0 write it), when the tables must be found by their shapes
(libkvmstat/os/linux/kallsyms_find.c).  Every System.map symbol whose name
is unique there must be found at its address plus the dump's KASLR offset,
and every address must name a symbol of System.map at it.  Prints the
counts; exit 1 on any mismatch, 2 when something cannot be read.

Environment: KVMSTAT_LIB (the library), PYTHONPATH naming python/."""
import collections
import os
import re
import shutil
import sys
import tempfile

import kvmstat


def read_map(path):
    rows = []
    for line in open(path):
        a, t, n = line.split()[:3]
        rows.append((int(a, 16), t, n))
    return rows


def check(dump, rows, label):
    try:
        prog = kvmstat.open(core=dump)
    except kvmstat.Error as e:
        print('%s: cannot open: %s' % (label, e))
        return None
    info = prog.dumpinfo()
    slide = 0
    # the KASLR offset: _stext in memory against System.map
    stext = [a for a, _t, n in rows if n == '_stext'][0]
    slide = prog.symbol('_stext').address - stext
    names = collections.Counter(n for _a, _t, n in rows)
    by_addr = collections.defaultdict(set)
    for a, t, n in rows:
        by_addr[a].add(n)
    found = missing = wrong = 0
    bad = []

    def moved(a):
        # per-CPU symbols (small offsets) do not move with KASLR
        return a + slide if a >= 0xffff800000000000 else a
    for a, t, n in rows:
        if names[n] != 1 or t in 'aAUw' or n.startswith('__crc_'):
            continue
        try:
            got = prog.symbol(n).address
        except kvmstat.Error:
            missing += 1
            continue
        if got == moved(a):
            found += 1
        else:
            wrong += 1
            bad.append('%s: 0x%x, System.map says 0x%x' % (n, got, moved(a)))
    at_ok = at_bad = 0
    for a in sorted(by_addr)[::97]:              # every 97th address: both ways
        if a < 0xffff800000000000:
            continue
        hit = prog.symbol_at(a + slide)
        if hit is None:
            continue
        n, off = hit
        if off == 0 and n in by_addr[a]:
            at_ok += 1
        elif off == 0:
            at_bad += 1
            bad.append('0x%x names %s, System.map %s' % (a + slide, n, sorted(by_addr[a])))
    prog.close()
    print('%s: %d unique System.map symbols at their addresses (slide 0x%x), %d not in '
          'kallsyms, %d at another address; symbol_at %d right, %d wrong' % (
              label, found, slide, missing, wrong, at_ok, at_bad))
    for b in bad[:10]:
        print('  ' + b)
    _ = info
    return found > 1000 and wrong == 0 and at_bad == 0


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    dump, smap = sys.argv[1:]
    rows = read_map(smap)
    ok1 = check(dump, rows, os.path.basename(dump) + ' (VMCOREINFO)')
    tmp = tempfile.mkdtemp(prefix='kvs-ksym-')
    try:
        copy = os.path.join(tmp, 'vmcore')
        data = open(dump, 'rb').read()
        n = data.count(b'SYMBOL(kallsyms_')
        if n == 0:
            print('%s: VMCOREINFO names no kallsyms table already' % dump)
        open(copy, 'wb').write(data.replace(b'SYMBOL(kallsyms_', b'SYMBOL(kallsyXs_'))
        del data
        ok2 = check(copy, rows, os.path.basename(dump) + ' (found by shape)')
    finally:
        shutil.rmtree(tmp)
    if ok1 is None or ok2 is None:
        return 2
    return 0 if ok1 and ok2 else 1


if __name__ == '__main__':
    _ = re
    sys.exit(main())
