#!/usr/bin/env python3
"""The malloc(9) types that grew most between two dumps of one FreeBSD kernel.

    malloc_grew.py KERNEL CORE_A CORE_B [N]

Prints "delta_bytes bytes_a bytes_b name" for the N types (default 10) whose
memory in use grew most from CORE_A to CORE_B; a type is the same type in
both when it has the same address (a module's types move when it is
reloaded: then the name matches), as `kvmstat diff` matches them.  A type
in one dump only counts from (or to) zero.
"""
import sys

import _path  # noqa: F401
import kvmstat


def by_key(prog):
    out = {}
    for t in prog.malloc_types():
        out[(t.kaddr, t.name)] = t.bytes
    return out


def grew(a, b, n):
    names_a = {}
    for (addr, name), v in a.items():
        names_a.setdefault(name, []).append((addr, v))
    rows = []
    seen = set()
    for (addr, name), vb in b.items():
        if (addr, name) in a:
            va = a[(addr, name)]
            seen.add((addr, name))
        else:
            # moved: the same name at another address, not matched yet
            cand = [(x, v) for x, v in names_a.get(name, []) if (x, name) not in b]
            if cand:
                seen.add((cand[0][0], name))
            va = cand[0][1] if cand else 0
        rows.append((vb - va, va, vb, name))
    for (addr, name), va in a.items():
        if (addr, name) not in seen:
            rows.append((-va, va, 0, name))
    rows.sort(key=lambda r: (-r[0], r[3]))
    return rows[:n]


def main(argv):
    if len(argv) not in (4, 5):
        print('usage: malloc_grew.py KERNEL CORE_A CORE_B [N]', file=sys.stderr)
        return 2
    n = int(argv[4]) if len(argv) == 5 else 10
    try:
        with kvmstat.open(core=argv[2], kernel=argv[1]) as pa, \
                kvmstat.open(core=argv[3], kernel=argv[1]) as pb:
            rows = grew(by_key(pa), by_key(pb), n)
    except kvmstat.Error as e:
        print('malloc_grew: %s' % e, file=sys.stderr)
        return 1
    for d, va, vb, name in rows:
        print(d, va, vb, name)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
