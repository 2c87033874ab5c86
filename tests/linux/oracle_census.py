#!/usr/bin/python3
"""drgn's (python3-drgn 0.0.22) reading of the memory census on a Linux dump,
an oracle independent of kvmstat for `mem`, `zoneinfo`, `buddyinfo`,
`vmalloc` and `whatis`.

    oracle_census.py DUMP VMLINUX [--image-alias] [--ram] [--sample N] [--seed S]

Prints JSON on stdout:
  zones: every zone of every online node: node, zone (name), populated
    (present_pages > 0), free (free_area[order].nr_free, one per order),
    pages_free (vm_stat[NR_FREE_PAGES]), min/low/high (watermark plus
    boost), spanned, present, managed, cma, start_pfn, stats (zone vm_stat by
    enum zone_stat_item name, lower case as /proc/zoneinfo prints them).
  node_stats: vm_node_stat per node; zone_global / node_global: the global
    vm_zone_stat / vm_node_stat atomics (what /proc/meminfo reads).
  meminfo: the /proc/meminfo lines drgn computes from plain counters (kB, or
    a count for HugePages_*), only lines whose formula is a sum of counters.
  vmalloc: the areas on vmap_area_list: start, end, size (vm->size, guard
    page included), caller (symbol+0xoff/0xsize), caller_address, pages, flags.
  sample: addresses to ask `whatis` about, drawn from this dump with a fixed
    seed: objects of every slab cache (inside objects, allocated and free),
    struct pages, direct-map pages of non-slab memory, vmalloc areas, kernel
    text and data, task stacks, unmapped addresses. Each: address, what
    (how it was drawn), expect (the kind), and drgn's answer: for slab
    addresses slab_object_info (cache, object, allocated) and
    find_containing_slab_cache; pfn for pages; area for vmalloc; symbol for
    text/data; pid for stacks.
"""
import json
import random
import sys
import time

import drgn
from drgn import FaultError, Object, cast
from drgn.helpers.linux.list import list_for_each_entry
from drgn.helpers.linux.mm import (decode_page_flags, page_to_pfn, page_to_virt, pfn_to_page,
                                   virt_to_page)
from drgn.helpers.linux.pid import for_each_task
from drgn.helpers.linux.slab import (find_containing_slab_cache, for_each_slab_cache,
                                     slab_object_info)

sys.path.insert(0, __import__('os').path.dirname(__file__))
import oracle_drgn  # noqa: E402  (program setup: image alias, raw RAM)

PAGE = 4096


def enum_names(prog, tname, count_name):
    t = prog.type(f'enum {tname}')
    n = {v: k for k, v in t.enumerators}
    return [n.get(i, f'#{i}').lower() for i in range(prog[count_name].value_())]


def load(dump, vmlinux, ram, image_alias):
    prog = drgn.Program()
    if ram:
        oracle_drgn.setup_ram(prog, dump)
    else:
        prog.set_core_dump(dump)
        if image_alias:
            oracle_drgn.add_image_alias(prog, dump)
    prog.load_debug_info([vmlinux])
    return prog


def zones(prog):
    zitems = enum_names(prog, 'zone_stat_item', 'NR_VM_ZONE_STAT_ITEMS')
    nitems = enum_names(prog, 'node_stat_item', 'NR_VM_NODE_STAT_ITEMS')
    out, nodes = [], []
    nr = prog['nr_node_ids'].value_() if 'nr_node_ids' in prog else 1
    for nid in range(nr):
        try:
            pgdat = prog['node_data'][nid]
        except KeyError:
            pgdat = prog['contig_page_data'].address_of_()
        if not pgdat.value_():
            continue
        nodes.append({'node': nid, 'stats': {nitems[i]: pgdat.vm_stat[i].counter.value_()
                                             for i in range(len(nitems))}})
        for z in range(len(pgdat.node_zones)):
            zone = pgdat.node_zones[z]
            wm = [zone._watermark[i].value_() for i in range(3)]
            boost = zone.watermark_boost.value_()
            norders = len(zone.free_area)
            out.append({
                'node': nid, 'zone': zone.name.string_().decode(),
                'populated': zone.present_pages.value_() > 0,
                'free': [zone.free_area[o].nr_free.value_() for o in range(norders)],
                'pages_free': zone.vm_stat[0].counter.value_(),
                'min': wm[0] + boost, 'low': wm[1] + boost, 'high': wm[2] + boost,
                'spanned': zone.spanned_pages.value_(), 'present': zone.present_pages.value_(),
                'managed': zone.managed_pages.counter.value_(),
                'cma': zone.cma_pages.value_() if hasattr(zone, 'cma_pages') else 0,
                'start_pfn': zone.zone_start_pfn.value_(),
                'stats': {zitems[i]: zone.vm_stat[i].counter.value_() for i in range(len(zitems))},
            })
    zg = {zitems[i]: prog['vm_zone_stat'][i].counter.value_() for i in range(len(zitems))}
    ng = {nitems[i]: prog['vm_node_stat'][i].counter.value_() for i in range(len(nitems))}
    return out, nodes, zg, ng


def meminfo(prog, zg, ng):
    """The meminfo lines that are plain sums of counters (kB)."""
    kb = PAGE // 1024
    m = {}

    def z(n):
        return max(zg.get(n, 0), 0)

    def n(name):
        return max(ng.get(name, 0), 0)
    m['MemTotal'] = prog['_totalram_pages'].counter.value_() * kb
    m['MemFree'] = z('nr_free_pages') * kb
    for line, item in (('Active(anon)', 'nr_active_anon'), ('Inactive(anon)', 'nr_inactive_anon'),
                       ('Active(file)', 'nr_active_file'), ('Inactive(file)', 'nr_inactive_file'),
                       ('Unevictable', 'nr_unevictable'), ('Dirty', 'nr_file_dirty'),
                       ('Writeback', 'nr_writeback'), ('AnonPages', 'nr_anon_mapped'),
                       ('Mapped', 'nr_file_mapped'), ('Shmem', 'nr_shmem'),
                       ('SReclaimable', 'nr_slab_reclaimable_b'), ('SUnreclaim', 'nr_slab_unreclaimable_b'),
                       ('PageTables', 'nr_pagetable'), ('SecPageTables', 'nr_secondary_pagetable'),
                       ('NFS_Unstable', None), ('Bounce', None), ('WritebackTmp', 'nr_writeback_temp')):
        if item is None:
            continue
        if item in ng:
            m[line] = n(item) * kb
    m['Active'] = m['Active(anon)'] + m['Active(file)']
    m['Inactive'] = m['Inactive(anon)'] + m['Inactive(file)']
    m['Mlocked'] = z('nr_mlock') * kb
    m['Bounce'] = z('nr_bounce') * kb
    m['KernelStack'] = n('nr_kernel_stack_kb')   # already in kB
    if 'nr_kernel_scs_kb' in ng:
        m['ShadowCallStack'] = n('nr_kernel_scs_kb')
    m['KReclaimable'] = m['SReclaimable'] + n('nr_kernel_misc_reclaimable') * kb
    m['Slab'] = m['SReclaimable'] + m['SUnreclaim']
    m['VmallocUsed'] = prog['nr_vmalloc_pages'].counter.value_() * kb
    m['Percpu'] = prog['pcpu_nr_populated'].value_() * prog['pcpu_nr_units'].value_() * kb
    if 'nr_zspages' in zg:
        pass
    if 'hstates' in prog:
        hs = [prog['hstates'][i] for i in range(prog['hugetlb_max_hstate'].value_())]
        m['HugePages_Total'] = hs[0].nr_huge_pages.value_() if hs else 0
        m['HugePages_Free'] = hs[0].free_huge_pages.value_() if hs else 0
    return m


def vmalloc(prog):
    out = []
    head = prog['vmap_area_list']
    seen = 0
    for va in list_for_each_entry('struct vmap_area', head.address_of_(), 'list'):
        seen += 1
        if seen > 1 << 20:
            raise RuntimeError('vmap_area_list does not end')
        vm = va.vm
        if not vm.value_():
            out.append({'start': va.va_start.value_(), 'end': va.va_end.value_(), 'vm': None})
            continue
        caller = vm.caller.value_()
        try:
            sym = prog.symbol(caller)
            cs = f'{sym.name}+{hex(caller - sym.address)}/{hex(sym.size)}'
        except LookupError:
            cs = None
        out.append({'start': vm.addr.value_(), 'end': vm.addr.value_() + vm.size.value_(),
                    'va_start': va.va_start.value_(), 'va_end': va.va_end.value_(),
                    'size': vm.size.value_(), 'caller': cs, 'caller_address': caller,
                    'pages': vm.nr_pages.value_(), 'flags': vm.flags.value_(),
                    'phys': vm.phys_addr.value_()})
    return out


def slab_answer(prog, addr):
    a = {}
    try:
        info = slab_object_info(prog, addr)
    except (FaultError, ValueError) as e:
        a['error'] = str(e)
        info = None
    if info is not None:
        a['cache'] = info.slab_cache.name.string_().decode()
        a['object'] = info.address
        a['allocated'] = bool(info.allocated)
    try:
        c = find_containing_slab_cache(prog, addr)
        a['containing_cache'] = c.name.string_().decode() if c.value_() else None
    except FaultError as e:
        a['containing_cache_error'] = str(e)
    return a


def sample(prog, areas, nwant, seed):
    rnd = random.Random(seed)
    out = []
    seen = set()

    def add(addr, what, expect, **kw):
        addr &= (1 << 64) - 1
        if addr in seen:
            return
        seen.add(addr)
        e = {'address': addr, 'what': what, 'expect': expect}
        e.update(kw)
        out.append(e)
    # slab objects: pages with PG_slab, grouped by cache; a few addresses
    # per cache, anywhere in the slab (allocated, free, CPU freelists alike)
    max_pfn = prog['max_pfn'].value_()
    min_pfn = prog['min_low_pfn'].value_() if 'min_low_pfn' in prog else 0
    PG_slab = prog['PG_slab'].value_()
    by_cache = {}
    nonslab = []
    for pfn in range(min_pfn, max_pfn):
        page = pfn_to_page(prog, pfn)
        try:
            flags = page.flags.value_()
        except FaultError:
            continue
        if flags & (1 << PG_slab):
            slab = cast('struct slab *', page)
            try:
                c = slab.slab_cache.value_()
            except FaultError:
                continue
            by_cache.setdefault(c, []).append(pfn)
        elif rnd.random() < 0.002:
            nonslab.append(pfn)
    per_cache = max(4, (nwant // 2) // max(1, len(by_cache)))
    for c, pfns in sorted(by_cache.items()):
        cache = Object(prog, 'struct kmem_cache *', c)
        size = cache.size.value_()
        order = cache.oo.x.value_() >> 16
        objs = cache.oo.x.value_() & 0xffff
        for _ in range(per_cache):
            pfn = rnd.choice(pfns)
            page = pfn_to_page(prog, pfn)   # PG_slab: a head or order-0 page
            base = page_to_virt(page).value_()
            span = min(objs * size, (PAGE << order))
            a = base + rnd.randrange(span)
            add(a, 'slab object', 'slab', **slab_answer(prog, a))
    # struct pages (the vmemmap) and direct-map pages of non-slab memory
    for _ in range(nwant // 10):
        pfn = rnd.randrange(min_pfn, max_pfn)
        page = pfn_to_page(prog, pfn)
        add(page.value_() + rnd.randrange(prog.type('struct page').size), 'struct page', 'page', pfn=pfn)
    for pfn in nonslab[: nwant // 10]:
        page = pfn_to_page(prog, pfn)
        a = page_to_virt(page).value_() + rnd.randrange(PAGE)
        try:
            fl = decode_page_flags(page)
        except (FaultError, ValueError):
            fl = None
        ans = slab_answer(prog, a)
        if ans.get('containing_cache'):
            # a tail page of a compound slab (PG_slab is on the head only)
            add(a, 'slab object (tail page)', 'slab', **ans)
        else:
            add(a, 'direct map, non-slab page', 'page', pfn=pfn, page=page.value_(), page_flags=fl, **ans)
    # vmalloc areas (not stacks: those are checked as stacks)
    stacks = {}
    for task in for_each_task(prog):
        try:
            stacks[task.stack.value_()] = (task.pid.value_(), task.comm.string_().decode(), task.value_())
        except FaultError:
            continue
    va = [a for a in areas if a.get('vm', 1) is not None and a['size'] > PAGE]
    for _ in range(nwant // 10):
        a = rnd.choice(va)
        if a['start'] in stacks:
            continue
        add(a['start'] + rnd.randrange(a['size'] - PAGE), 'vmalloc area', 'vmalloc',
            area_start=a['start'], area_end=a['end'], caller=a['caller'])
    # task stacks
    tsize = prog['THREAD_SIZE'].value_() if 'THREAD_SIZE' in prog else 4 * PAGE
    for base, (pid, comm, task) in sorted(stacks.items()):
        add(base + rnd.randrange(tsize), 'task stack', 'stack', pid=pid, comm=comm, task=task)
    # kernel text and data symbols
    names = ['_stext', 'start_kernel', 'schedule', 'do_sys_open', 'kmem_cache_alloc', 'vfs_read',
             'init_task', 'slab_caches', 'linux_banner', 'vm_zone_stat',
             'vm_node_stat', 'totalram_pages', 'init_mm', 'printk', 'panic', 'memcpy',
             'node_data', 'contig_page_data', 'vmap_area_list', 'kmalloc_caches', 'nr_cpu_ids']
    for nm in names:
        try:
            s = prog.symbol(nm)
        except LookupError:
            continue
        # past the first byte where it can be: aliases (jiffies/jiffies_64)
        # share their start, and which name a tool prints there is its choice
        off = rnd.randrange(1, s.size) if s.size > 1 else 0
        add(s.address + off, 'kernel symbol', 'symbol', symbol=f'{s.name}+{hex(off)}')
    # unmapped / not kernel memory
    for a in (0x0, 0x1000, 0x400000, 0x7fffffffe000, 0xdead000000000100, 0xffff800000000000):
        add(a, 'unmapped', 'unknown')
    return out, by_cache


OBJECT_CACHES = ('kmalloc-64', 'kmem_cache', 'dentry', 'task_struct')


def objects(prog, by_cache):
    """Every object of a few caches, through their PG_slab pages (full slabs
    too, which SLUB keeps on no list): [address, allocated] by
    slab_object_info."""
    out = {}
    for c, pfns in by_cache.items():
        cache = Object(prog, 'struct kmem_cache *', c)
        name = cache.name.string_().decode()
        if name not in OBJECT_CACHES:
            continue
        size = cache.size.value_()
        objs = []
        for pfn in sorted(pfns):
            slab = cast('struct slab *', pfn_to_page(prog, pfn))
            base = page_to_virt(pfn_to_page(prog, pfn)).value_()
            for i in range(slab.objects.value_()):
                info = slab_object_info(prog, base + i * size)
                objs.append([hex(info.address), bool(info.allocated)])
        out[name] = objs
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    opts = sys.argv[1:]
    n = 1600
    seed = 26
    if '--sample' in opts:
        n = int(opts[opts.index('--sample') + 1])
        args.remove(str(n))
    if '--seed' in opts:
        seed = int(opts[opts.index('--seed') + 1])
        args.remove(str(seed))
    if len(args) != 2:
        sys.exit(__doc__)
    dump, vmlinux = args
    t0 = time.monotonic()
    prog = load(dump, vmlinux, '--ram' in opts or dump.endswith('.ram'), '--image-alias' in opts)
    t1 = time.monotonic()
    zs, nodes, zg, ng = zones(prog)
    mi = meminfo(prog, zg, ng)
    areas = vmalloc(prog)
    t2 = time.monotonic()
    smp, by_cache = sample(prog, areas, n, seed)
    t3 = time.monotonic()
    objs = objects(prog, by_cache)
    t4 = time.monotonic()
    for e in smp:
        for k in ('address', 'object', 'area_start', 'area_end', 'page', 'task'):
            if isinstance(e.get(k), int):
                e[k] = hex(e[k])
    for a in areas:
        for k in ('start', 'end', 'va_start', 'va_end', 'caller_address', 'phys'):
            if isinstance(a.get(k), int):
                a[k] = hex(a[k])
    json.dump({'tool': f'drgn {drgn.__version__}', 'dump': dump, 'zones': zs, 'node_stats': nodes,
               'zone_global': zg, 'node_global': ng, 'meminfo': mi, 'vmalloc': areas, 'sample': smp,
               'objects': objs,
               'seconds': {'load': round(t1 - t0, 2), 'census': round(t2 - t1, 2),
                           'sample': round(t3 - t2, 2), 'objects': round(t4 - t3, 2)}}, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
