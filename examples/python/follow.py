#!/usr/bin/env python3
"""Follow a live source (/dev/mem, or a raw image another program keeps
changing) every second: one line per refresh with the malloc types' totals
and what changed since the previous refresh.

    follow.py [-r] [-w SECONDS] [-n ITERATIONS] KERNEL CORE

The list is refreshed in place, and its entries are the same Python
objects from one refresh to the next.
"""
import argparse
import sys
import time

import _path  # noqa: F401
import kvmstat


def main(argv):
    ap = argparse.ArgumentParser(prog='follow.py')
    ap.add_argument('-r', action='store_true', help='CORE is a raw memory image')
    ap.add_argument('-w', type=float, default=1.0, metavar='SECONDS')
    ap.add_argument('-n', type=int, default=-1, metavar='ITERATIONS')
    ap.add_argument('kernel')
    ap.add_argument('core')
    a = ap.parse_args(argv[1:])
    try:
        with kvmstat.open(core=a.core, kernel=a.kernel, raw=a.r) as k:
            lst = kvmstat.MemoryTypeList(k, 'malloc', percpu=False)
            before = {}                         # entry -> requests at the last tick
            tick = 1
            while a.n < 0 or tick <= a.n:
                if tick > 1:
                    time.sleep(a.w)
                lst.refresh()
                lst.sweep()
                delta, best, top = 0, 0, '-'
                now = {}
                for t in lst:
                    now[t] = t.requests
                    d = now[t] - before[t] if t in before and now[t] >= before[t] else 0
                    delta += d
                    if d > best:
                        best, top = d, t.name
                before = now
                print('tick %d: types %d requests %d bytes %d +requests %d top %s' % (
                    tick, len(now), sum(now.values()), sum(t.bytes for t in now),
                    delta, top), flush=True)
                tick += 1
    except kvmstat.Error as e:
        print('follow: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
