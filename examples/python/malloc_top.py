#!/usr/bin/env python3
"""The malloc(9) types of a FreeBSD dump, most memory first.

    malloc_top.py KERNEL CORE [N]

Prints "bytes count requests name" per type, N types (default all).
"""
import sys

import _path  # noqa: F401
import kvmstat


def main(argv):
    if len(argv) not in (3, 4):
        print('usage: malloc_top.py KERNEL CORE [N]', file=sys.stderr)
        return 2
    n = int(argv[3]) if len(argv) == 4 else None
    try:
        with kvmstat.open(core=argv[2], kernel=argv[1]) as k:
            types = sorted(k.malloc_types(), key=lambda t: t.bytes, reverse=True)
            for t in types[:n]:
                print(t.bytes, t.count, t.requests, t.name)
    except kvmstat.Error as e:
        print('malloc_top: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
