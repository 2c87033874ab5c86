#!/usr/bin/env python3
"""Compare the peer oracles with each other and with the guest's own truth.

    compare.py CAPDIR [--json OUT]

Reads CAPDIR/slabinfo.final (printed by the guest as its last action),
CAPDIR/gt/profile (the guest's /proc/profile, taken a few seconds before the
dump), and every CAPDIR/oracles/drgn.<dump>.json and crash.<dump>.tsv that
tests/linux/run_oracles.sh wrote. Prints how many caches agree on which
field; exits 1 if the oracles disagree with each other (crash ALLOCATED vs
drgn's exact count, TOTAL/SLABS vs the node counters) or if the same tool
gives different answers on different formats of the same dump.
Differences against slabinfo.final are reported, not fatal: the guest may
allocate between its print and the stop.
"""
import glob
import json
import os
import struct
import sys

PAGE = 4096


def parse_slabinfo(path):
    caches = {}
    for line in open(path):
        if line.startswith('slabinfo') or line.startswith('#') or not line.strip():
            continue
        f = line.split()
        # name active num objsize objperslab pagesperslab : tunables l b s : slabdata act num shared
        caches[f[0]] = {
            'active_objs': int(f[1]), 'num_objs': int(f[2]), 'objsize': int(f[3]),
            'objperslab': int(f[4]), 'pagesperslab': int(f[5]),
            'active_slabs': int(f[13]), 'num_slabs': int(f[14]),
        }
    return caches


def parse_crash(path):
    caches = {}
    lines = open(path).read().splitlines()
    for line in lines[1:]:
        name, cache, objsize, alloc, total, slabs, ssize = line.split('\t')
        k = int(ssize[:-1]) * (1024 if ssize.endswith('k') else 1024 * 1024)
        caches[name] = {'cache': cache, 'objsize': int(objsize), 'allocated': int(alloc),
                        'total': int(total), 'slabs': int(slabs), 'ssize': k}
    return caches


def guest_profile(path):
    data = open(path, 'rb').read()
    step, = struct.unpack_from('<I', data, 0)
    n = len(data) // 4 - 1
    bins = {}
    zero = bytes(4096)
    for base in range(4, len(data), 4096):
        part = data[base:base + 4096]
        if part == zero[:len(part)]:
            continue
        for j, c in enumerate(struct.unpack(f'<{len(part) // 4}I', part)):
            if c:
                bins[(base - 4) // 4 + j] = c
    return step, n, bins


def agree(pairs):
    """pairs: list of (name, a, b) -> (count equal, list of differing)"""
    diff = [(n, a, b) for n, a, b in pairs if a != b]
    return len(pairs) - len(diff), diff


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cap = sys.argv[1]
    json_out = sys.argv[sys.argv.index('--json') + 1] if '--json' in sys.argv else None
    odir = os.path.join(cap, 'oracles')
    truth = parse_slabinfo(os.path.join(cap, 'slabinfo.final'))
    gt_early = os.path.join(cap, 'gt', 'slabinfo')
    early = parse_slabinfo(gt_early) if os.path.exists(gt_early) else None

    drgn = {os.path.basename(p)[5:-5]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(odir, 'drgn.*.json')))}
    crash = {os.path.basename(p)[6:-4]: parse_crash(p)
             for p in sorted(glob.glob(os.path.join(odir, 'crash.*.tsv')))}
    if not drgn or not crash:
        sys.exit(f'compare: need oracles/drgn.*.json and oracles/crash.*.tsv in {cap} (run run_oracles.sh)')
    fatal = []
    summary = {'capture': cap, 'slabinfo_final_caches': len(truth), 'drgn_dumps': sorted(drgn),
               'crash_dumps': sorted(crash)}
    out = []
    p = out.append

    # 1. each tool identical across formats
    def canon_drgn(d):
        return json.dumps([{k: v for k, v in c.items()} for c in d['caches']], sort_keys=True)
    ref_d = sorted(drgn)[0]
    same_d = [k for k in drgn if canon_drgn(drgn[k]) == canon_drgn(drgn[ref_d])]
    ref_c = sorted(crash)[0]
    same_c = [k for k in crash if crash[k] == crash[ref_c]]
    p(f'drgn  identical on {len(same_d)}/{len(drgn)} formats: {", ".join(sorted(drgn))}')
    p(f'crash identical on {len(same_c)}/{len(crash)} formats: {", ".join(sorted(crash))}')
    if len(same_d) != len(drgn):
        fatal.append('drgn differs between formats: ' + ', '.join(sorted(set(drgn) - set(same_d))))
    if len(same_c) != len(crash):
        fatal.append('crash differs between formats: ' + ', '.join(sorted(set(crash) - set(same_c))))
    summary['drgn_identical_formats'] = len(same_d)
    summary['crash_identical_formats'] = len(same_c)

    d = {c['name']: c for c in drgn[ref_d]['caches']}
    c = crash[ref_c]
    n_d, n_c, n_t = set(d), set(c), set(truth)
    p(f'cache names: slabinfo.final {len(n_t)}, drgn {len(n_d)}, crash {len(n_c)}, '
      f'common {len(n_t & n_d & n_c)}')
    if n_d != n_c:
        fatal.append(f'name sets differ: drgn-only {sorted(n_d - n_c)}, crash-only {sorted(n_c - n_d)}')
    if len(d) != len(drgn[ref_d]['caches']):
        p(f'  note: duplicate names on slab_caches ({len(drgn[ref_d]["caches"])} entries)')
    summary['names'] = {'slabinfo': len(n_t), 'drgn': len(n_d), 'crash': len(n_c),
                        'common': len(n_t & n_d & n_c)}
    common = sorted(n_t & n_d & n_c)
    N = len(common)

    def report(label, pairs, key, fatal_if_diff=False, show=6):
        ok, diff = agree(pairs)
        summary[key] = {'agree': ok, 'of': len(pairs),
                        'diff': [{'name': n, 'a': a, 'b': b} for n, a, b in diff]}
        line = f'{label:58s} {ok:4d}/{len(pairs)}'
        if diff:
            absd = sum(abs(a - b) for _, a, b in diff if isinstance(a, int) and isinstance(b, int))
            line += f'   sum|diff|={absd}  e.g. ' + ', '.join(f'{n} {a}/{b}' for n, a, b in diff[:show])
            if fatal_if_diff:
                fatal.append(f'{label}: {len(diff)} caches differ')
        p(line)

    p('')
    p('-- oracles with each other --')
    report('crash ALLOCATED == drgn exact allocated', [(n, c[n]['allocated'], d[n]['allocated']) for n in common],
           'crash_alloc_vs_drgn_exact', True)
    report('drgn exact allocated == drgn page-walk allocated',
           [(n, d[n]['allocated'], d[n].get('allocated_pagewalk')) for n in common], 'drgn_exact_vs_pagewalk', True)
    report('crash TOTAL == drgn num_objs', [(n, c[n]['total'], d[n]['num_objs']) for n in common],
           'crash_total_vs_drgn', True)
    report('crash SLABS == drgn num_slabs', [(n, c[n]['slabs'], d[n]['num_slabs']) for n in common],
           'crash_slabs_vs_drgn', True)
    report('drgn num_slabs == PG_slab pages found by the page walk',
           [(n, d[n]['num_slabs'], d[n].get('slabs_pagewalk')) for n in common], 'drgn_slabs_vs_pagewalk', True)
    report('crash OBJSIZE == drgn object_size', [(n, c[n]['objsize'], d[n]['object_size']) for n in common],
           'crash_objsize_vs_drgn', True)
    report('crash SSIZE == PAGE << drgn order', [(n, c[n]['ssize'], PAGE << d[n]['order']) for n in common],
           'crash_ssize_vs_drgn', True)

    p('')
    p('-- oracles against slabinfo.final (the guest\'s last print) --')
    t = truth
    report('drgn num_objs == num_objs', [(n, d[n]['num_objs'], t[n]['num_objs']) for n in common], 'drgn_num_objs')
    report('drgn active_objs == active_objs', [(n, d[n]['active_objs'], t[n]['active_objs']) for n in common],
           'drgn_active_objs')
    report('drgn num_slabs == num_slabs', [(n, d[n]['num_slabs'], t[n]['num_slabs']) for n in common],
           'drgn_num_slabs')
    report('drgn size == objsize', [(n, d[n]['size'], t[n]['objsize']) for n in common], 'drgn_size')
    report('drgn objects_per_slab == objperslab',
           [(n, d[n]['objects_per_slab'], t[n]['objperslab']) for n in common], 'drgn_objperslab')
    report('drgn 1<<order == pagesperslab', [(n, 1 << d[n]['order'], t[n]['pagesperslab']) for n in common],
           'drgn_pagesperslab')
    all_d = [(n, tuple(d[n][k] for k in ('num_objs', 'active_objs', 'num_slabs', 'size', 'objects_per_slab'))
              + (1 << d[n]['order'],),
              tuple(t[n][k] for k in ('num_objs', 'active_objs', 'num_slabs', 'objsize', 'objperslab',
                                      'pagesperslab'))) for n in common]
    report('drgn all six slabinfo fields', all_d, 'drgn_all_fields', show=0)
    report('crash TOTAL == num_objs', [(n, c[n]['total'], t[n]['num_objs']) for n in common], 'crash_total')
    report('crash SLABS == num_slabs', [(n, c[n]['slabs'], t[n]['num_slabs']) for n in common], 'crash_slabs')
    report('crash SSIZE == pagesperslab*PAGE', [(n, c[n]['ssize'], t[n]['pagesperslab'] * PAGE) for n in common],
           'crash_ssize')
    report('crash ALLOCATED == active_objs (different semantics)',
           [(n, c[n]['allocated'], t[n]['active_objs']) for n in common], 'crash_alloc_vs_active', show=4)
    tot = {k: sum(t[n][k] for n in common) for k in ('num_objs', 'active_objs')}
    tot['allocated(crash)'] = sum(c[n]['allocated'] for n in common)
    p(f'totals: num_objs {tot["num_objs"]}, active_objs {tot["active_objs"]}, exact allocated '
      f'{tot["allocated(crash)"]}')
    summary['totals'] = tot
    if early:
        ce = sorted(set(early) & set(t))
        ok, diff = agree([(n, (early[n]['num_objs'], early[n]['active_objs']), (t[n]['num_objs'], t[n]['active_objs']))
                          for n in ce])
        p(f'(gt/slabinfo, taken before the tar write, equals slabinfo.final in {ok}/{len(ce)} caches)')
        summary['gt_slabinfo_vs_final'] = {'agree': ok, 'of': len(ce)}

    # drgn on the RAM of the running guest (live_check.sh), before the stop
    lr = os.path.join(cap, 'live', 'drgn.running.json')
    if os.path.exists(lr):
        live = {x['name']: x for x in json.load(open(lr))['caches']}
        lc = sorted(set(live) & set(d))
        p('')
        p('-- drgn on the running guest (before stop) vs drgn on the dump --')
        report('live exact allocated == dump exact allocated',
               [(n, live[n]['allocated'], d[n]['allocated']) for n in lc], 'live_alloc_vs_dump', show=4)
        report('live num_objs == dump num_objs', [(n, live[n]['num_objs'], d[n]['num_objs']) for n in lc],
               'live_num_objs_vs_dump', show=4)
        report('live active_objs == slabinfo.final active_objs',
               [(n, live[n]['active_objs'], t[n]['active_objs']) for n in lc if n in t], 'live_active_vs_final',
               show=4)

    # profile
    prof = drgn[ref_d].get('profile')
    gp = os.path.join(cap, 'gt', 'profile')
    if prof and os.path.exists(gp):
        p('')
        p('-- profile: drgn prof_buffer vs the guest\'s /proc/profile --')
        step, glen, gbins = guest_profile(gp)
        dbins = {int(k): v for k, v in prof['bins'].items()}
        gtot, dtot = sum(gbins.values()), sum(dbins.values())
        decreased = [i for i, v in gbins.items() if dbins.get(i, 0) < v]
        p(f'step {step} (1<<prof_shift {1 << prof["prof_shift"]}), length {glen} (prof_len {prof["prof_len"]})')
        p(f'ticks: guest {gtot} in {len(gbins)} bins, dump {dtot} in {len(dbins)} bins; '
          f'bins that went down (must be 0): {len(decreased)}')
        gtop = [i for i, _ in sorted(gbins.items(), key=lambda kv: -kv[1])[:10]]
        dtop = [i for i, _ in sorted(dbins.items(), key=lambda kv: -kv[1])[:10]]
        p(f'top-10 bins in common: {len(set(gtop) & set(dtop))}/10')
        summary['profile'] = {'step': step, 'len_guest': glen, 'prof_len': prof['prof_len'],
                              'ticks_guest': gtot, 'ticks_dump': dtot, 'bins_guest': len(gbins),
                              'bins_dump': len(dbins), 'bins_decreased': len(decreased),
                              'top10_common': len(set(gtop) & set(dtop))}
        if step != 1 << prof['prof_shift'] or glen != prof['prof_len'] or decreased:
            fatal.append('profile: the dump contradicts /proc/profile')

    p('')
    if fatal:
        p('ORACLES DISAGREE:')
        for f in fatal:
            p('  ' + f)
    else:
        p('oracles agree with each other on every cache and field compared')
    summary['fatal'] = fatal
    print('\n'.join(out))
    if json_out:
        with open(json_out, 'w') as f:
            json.dump(summary, f, indent=1)
    sys.exit(1 if fatal else 0)


if __name__ == '__main__':
    main()
