#!/usr/bin/python3
"""kernel_compare.py WHAT ARGS... - the comparisons of tests/linux/kernel_check.sh,
each against a truth that is not kvmstat's.  Prints one summary line (and
the first differences); exit 0 when equal, 1 when not, 2 on unusable input.

  slab GUEST_SLABINFO KVMSTAT_SLAB [partial]
      kvmstat's slabinfo table against the guest's own /proc/slabinfo, every
      field of every row.  With "partial" (a filtered dump that lost pages),
      rows kvmstat marks unreadable ('?') are counted apart; every other row
      must still be equal.
  crash CRASH_KMEM_S KVMSTAT_CRASH
      crash's own `kmem -s` output against `kvmstat slab --format crash`:
      object size, exactly allocated, total, slabs, slab size per cache.
  drgn ORACLE_JSON KVMSTAT_CRASH KVMSTAT_WHATIS_JSON KVMSTAT_PROFILE_JSON
      oracle_drgn_generic.py's reading against kvmstat's: every cache's
      exactly allocated objects, whatis on its sample of addresses (cache,
      object start, allocated or free), and the profile's total ticks.
  vmalloc GUEST_READ_1 GUEST_READ_2 KVMSTAT_VMALLOC
      /proc/vmallocinfo read twice by the guest before the dump: every line
      both reads hold must be in kvmstat's output, and each of kvmstat's
      lines in one of them.
  nokernel WITH_N_JSON NO_N_JSON [all]
      `kvmstat --json slab` without a kernel file against the same with -N
      (whose table the guest's own slabinfo checks): every field of every
      row equal, except that a kernel whose symbols give no per-CPU offsets
      (kallsyms of text only) leaves count, free and bytes null on rows it
      marks incomplete.  Prints how many rows lacked the CPUs' slabs; with
      "all" (a kernel built with CONFIG_KALLSYMS_ALL) there must be none."""
import json
import sys


def slab_rows(path, unnamed=None):
    d = {}
    for line in open(path):
        if line.startswith(('#', 'slabinfo')):
            continue
        f = line.split()
        if len(f) > 5:
            if f[0] == '?' and unnamed is not None:
                unnamed.append(f[1:6] + f[-3:])     # a cache whose name was lost
            else:
                d[f[0]] = f[1:6] + f[-3:]
    return d


def crash_rows(path):
    """name -> (objsize, allocated, total, slabs, ssize) from a kmem -s table."""
    d, hdr = {}, False
    for line in open(path):
        f = line.split()
        if f[:3] == ['CACHE', 'OBJSIZE', 'ALLOCATED']:
            hdr = True
            continue
        if hdr and len(f) >= 7 and all(c in '0123456789abcdef' for c in f[0]):
            d[' '.join(f[6:])] = tuple(f[1:6])
    return d


def report(what, n, diff):
    print('%s: %d compared, %d equal' % (what, n, n - len(diff)))
    for x in diff[:10]:
        print('  ' + x)
    return 1 if diff else 0


def cmd_slab(guest, mine, partial=None):
    unnamed = [] if partial else None
    g, k = slab_rows(guest), slab_rows(mine, unnamed)
    if len(g) < 50:
        print('slab: the guest read holds %d caches: not a slabinfo' % len(g))
        return 2
    diff = []
    # a row kvmstat marks unreadable: every field it did read must be right
    unread = sorted(n for n, v in k.items() if '?' in v) if partial else []
    for n in unread:
        if n not in g or any(a != '?' and a != b for a, b in zip(k[n], g[n])):
            diff.append('%s (partly read) guest %s kvmstat %s' % (n, g.get(n), k[n]))
    # a row whose name was lost must equal, field by field, one guest row
    # kvmstat names nowhere else (matched one to one)
    orphans, lost = [n for n in sorted(g) if n not in k], []
    for row in unnamed or []:
        m = next((n for n in orphans if g[n] == row), None)
        if m is None:
            diff.append('a row with no name matches no guest row: %s' % row)
        else:
            orphans.remove(m)
            lost.append(m)
    skip = set(unread) | set(lost)
    diff += ['%s guest %s kvmstat %s' % (n, g.get(n), k.get(n))
             for n in sorted(set(g) | set(k)) if n not in skip and g.get(n) != k.get(n)]
    if skip:
        print('slab: %d rows partly read (pages the filter left out): %s%s'
              % (len(skip), ', '.join(unread), ''.join(', %s (name lost)' % n for n in lost)))
    return report('slab against the guest', len(g), diff)


def cmd_crash(theirs, mine):
    c, k = crash_rows(theirs), crash_rows(mine)
    if len(c) < 50:
        print('crash: its kmem -s table holds %d caches: crash did not read the dump' % len(c))
        return 2
    diff = ['%s crash %s kvmstat %s' % (n, c.get(n), k.get(n))
            for n in sorted(set(c) | set(k)) if c.get(n) != k.get(n)]
    return report('kmem -s against crash', len(c), diff)


def cmd_drgn(oracle, mine, whatis, profile):
    o = json.load(open(oracle))
    p, op = json.load(open(profile)), o.get('profile')
    if op is None:
        print('profile: drgn found no profile buffer')
        prc = 1
    else:
        prc = report('profile ticks against drgn %s (%d still in the CPUs\' hash pages)'
                     % (o['drgn'], op['hash_hits']), 1,
                     [] if p['total'] == op['total'] else
                     ['total: drgn %d kvmstat %d' % (op['total'], p['total'])])
    k = crash_rows(mine)
    diff = ['%s allocated: drgn %d kvmstat %s' % (n, v['allocated'], k.get(n, ('-',) * 2)[1])
            for n, v in sorted(o['caches'].items())
            if n not in k or int(k[n][1]) != v['allocated']]
    diff += ['%s only in kvmstat' % n for n in sorted(set(k) - set(o['caches']))]
    rc = report('exactly allocated objects against drgn %s' % o['drgn'], len(o['caches']), diff)
    w = {int(a['address'], 16): a for a in json.load(open(whatis))['addresses']}
    diff = []
    for d in o['whatis']:
        a = w.get(d['address'])
        if a is None:
            diff.append('%#x: no answer from kvmstat' % d['address'])
            continue
        if d['cache'] is None:
            if a['kind'] == 'slab':
                diff.append('%#x: drgn no object, kvmstat %s' % (d['address'], a.get('cache')))
            continue
        got = (a.get('kind'), a.get('cache'), int(a.get('object', '0'), 16),
               a.get('allocated'))
        want = ('slab', d['cache'], d['object'], d['allocated'])
        if got != want:
            diff.append('%#x: drgn %s kvmstat %s' % (d['address'], want, got))
    nalloc = sum(1 for d in o['whatis'] if d.get('allocated'))
    print('whatis: %d addresses (%d allocated, %d free)' % (len(o['whatis']), nalloc,
                                                         len(o['whatis']) - nalloc))
    if len(o['whatis']) < 200:
        print('whatis: drgn gave a sample of %d addresses: too few' % len(o['whatis']))
        return 1
    return report('whatis against drgn %s' % o['drgn'], len(o['whatis']), diff) | rc | prc


def vmalloc_lines(path):
    return {line.rstrip('\n') for line in open(path) if line.startswith('0x')}


def cmd_vmalloc(g1, g2, mine):
    a, b, k = vmalloc_lines(g1), vmalloc_lines(g2), vmalloc_lines(mine)
    if len(a) < 20 or len(b) < 20:
        print('vmalloc: the guest reads hold %d and %d lines' % (len(a), len(b)))
        return 2
    both = a & b
    diff = ['guest (both reads), not kvmstat: ' + x for x in sorted(both - k)]
    diff += ['kvmstat, in neither guest read: ' + x for x in sorted(k - (a | b))]
    return report('vmallocinfo against the guest (%d lines in both reads)' % len(both),
                  len(both | k), diff)


def cmd_nokernel(with_n, without, all_symbols=None):
    a = json.load(open(with_n))['caches']
    b = json.load(open(without))['caches']
    if len(a) < 50:
        print('nokernel: the -N table holds %d caches: not a slab table' % len(a))
        return 2
    diff, unread = [], 0
    if len(a) != len(b):
        diff.append('%d caches with -N, %d without' % (len(a), len(b)))
    exact_only = ('count', 'free', 'bytes')
    for x, y in zip(a, b):
        nocpu = y.get('incomplete') is True and all(y.get(k) is None for k in exact_only)
        unread += nocpu
        for k in sorted(set(x) | set(y)):
            if nocpu and k in exact_only + ('incomplete',):
                continue
            if x.get(k) != y.get(k):
                diff.append('%s %s: -N %r, no -N %r' % (x.get('name'), k, x.get(k), y.get(k)))
    print('no -N: %d rows without the CPUs\' slabs (count null)' % unread)
    if all_symbols and unread:
        diff.append('kallsyms names every symbol, yet %d rows lack the CPUs\' slabs' % unread)
    return report('slab --json without a kernel file against -N', len(a), diff)


def main():
    cmds = {'slab': (cmd_slab, (2, 3)), 'crash': (cmd_crash, (2,)),
            'nokernel': (cmd_nokernel, (2, 3)),
            'drgn': (cmd_drgn, (4,)), 'vmalloc': (cmd_vmalloc, (3,))}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) - 2 not in cmds[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return cmds[sys.argv[1]][0](*sys.argv[2:])
    except (OSError, ValueError, KeyError) as e:
        print('%s: unusable input: %s' % (sys.argv[1], e))
        return 2


if __name__ == '__main__':
    sys.exit(main())
