#!/usr/bin/env python3
"""Write the kernel's gprof buffers as kgmon's gmon.out.

    write_gmon.py KERNEL CORE OUTPUT
"""
import sys

import _path  # noqa: F401
import kvmstat


def main(argv):
    if len(argv) != 4:
        print('usage: write_gmon.py KERNEL CORE OUTPUT', file=sys.stderr)
        return 2
    try:
        with kvmstat.open(core=argv[2], kernel=argv[1]) as k:
            g = k.gmon()
            g.write(argv[3], force=True)
            print('%s: %d bins of %d bytes, %d arcs, %d Hz' % (
                argv[3], len(g.bins), g.binsize, len(g.arcs), g.profrate))
    except (kvmstat.Error, OSError) as e:
        print('write_gmon: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
