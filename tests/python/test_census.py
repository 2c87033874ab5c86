"""The memory census through Python (kvmstat.Program's meminfo, zones,
vmalloc, arenas, slab_objects, whatis) against the fixture generator's
truth: Linux's truth.json["census"] and caches, FreeBSD's truth.json["vm"]."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_kvmstat import FIX, kernel_of, num, truth  # noqa: E402

import kvmstat  # noqa: E402


def linux():
    return kvmstat.open(core=os.path.join(FIX, 'linux-kaslr', 'vmcore'),
                        kernel=os.path.join(FIX, 'linux-kaslr', 'vmlinux'))


class LinuxCensus(unittest.TestCase):
    def test_meminfo_lines(self):
        t = truth('linux-kaslr')['census']
        with linux() as prog:
            got = [(c.name, c.value) for c in prog.meminfo()]
        self.assertEqual(got, [tuple(x) for x in t['meminfo']])

    def test_zones_free_blocks(self):
        t = truth('linux-kaslr')['census']
        with linux() as prog:
            zones = prog.zones()
        want = [l.split() for l in t['buddyinfo']] if isinstance(t['buddyinfo'][0], str) \
            else None
        got = [z for z in zones if z.populated]
        self.assertTrue(got)
        if want:
            self.assertEqual(len(got), len(want))
            for z, w in zip(got, want):
                self.assertEqual(z.free, [int(x) for x in w[4:]], z.name)

    def test_slab_objects_and_whatis(self):
        t = truth('linux-kaslr')
        with linux() as prog:
            n = 0
            for cache in t['caches'][:6]:
                objs = prog.slab_objects(cache['name'])
                self.assertTrue(objs.complete)
                alloc = [o for o in objs if o.allocated]
                if not alloc:
                    continue
                o = alloc[len(alloc) // 2]
                w = prog.whatis(o.address + 1)
                self.assertEqual((w.kind, w.cache, w.object, w.offset, w.allocated),
                                 ('slab', cache['name'], o.address, 1, True))
                n += 1
            self.assertGreater(n, 0)
            w = prog.whatis(0x10)
            self.assertEqual(w.kind, 'unknown')


class FreeBSDCensus(unittest.TestCase):
    def test_vm_queues_arenas(self):
        vm = truth('fbsd14')['vm']
        with kvmstat.open(core=os.path.join(FIX, 'fbsd14', 'vmcore.minidump3'),
                          kernel=kernel_of('fbsd14')) as prog:
            m = prog.meminfo()
            self.assertTrue(m.complete)
            self.assertEqual([(c.key, c.value) for c in m if c.group == 'vm'],
                             [(r['key'], r['value']) for r in vm['vmstat_s']])
            self.assertEqual([(c.name, c.value) for c in m if c.group == 'queues'],
                             [(q['name'], q['value']) for q in vm['queues']])
            got = sorted((a.name, a.address, a.size, a.inuse) for a in prog.arenas())
            self.assertEqual(got, sorted((a['name'], num(a['address']), a['size'], a['inuse'])
                                         for a in vm['arenas']))
            pools = [list(z.pools.values()) for z in prog.zones()]
            self.assertEqual(pools, [f['pools'] for f in vm['phys_free']])

    def test_whatis_kernel_map(self):
        # every probe of the generator's kernel_map model (truth "vmmap"),
        # 13+'s threaded tree and 12's
        for fx, core in (('fbsd14', 'vmcore.minidump3'), ('fbsd12', 'vmcore.minidump2')):
            probes = truth(fx)['vmmap']['probes']
            self.assertTrue(probes)
            with kvmstat.open(core=os.path.join(FIX, fx, core), kernel=kernel_of(fx)) as prog:
                for p in probes:
                    w = prog.whatis(num(p['addr']))
                    self.assertTrue(w.complete)
                    if p['kind'] == 'outside':
                        self.assertEqual((w.kind, getattr(w, 'map', None)), ('unknown', None))
                    elif p['kind'] == 'vmalloc':
                        self.assertEqual(
                            (w.kind, w.map, w.map_entry, w.area_start, w.area_end,
                             w.map_object, w.map_offset, w.map_eflags, w.map_protection,
                             w.map_max_protection),
                            ('vmalloc', p['map'], num(p['entry']), num(p['start']),
                             num(p['end']), num(p['object']) or None, num(p['offset']),
                             p['eflags'], p['protection'], p['max_protection']), fx)
                    else:
                        self.assertEqual(
                            (w.kind, w.map, w.gap_start, w.gap_end, w.prev_entry,
                             w.next_entry),
                            ('unknown', p['map'], num(p['gap_start']), num(p['gap_end']),
                             num(p['prev_entry']) or None, num(p['next_entry']) or None), fx)


if __name__ == '__main__':
    unittest.main()

    def test_uma_items_whatis_stacks(self):
        """prog.slab_objects() and prog.whatis() on UMA zones, item by item,
        and on 14's thread stacks, against truth.json's zslab/zthread."""
        for fixture, gen in (('fbsd14', 14), ('fbsd12', 12), ('fbsd11', 11)):
            t = truth(fixture)
            with kvmstat.open(core=os.path.join(FIX, fixture, 'mem.raw'),
                              kernel=kernel_of(fixture)) as prog:
                for name, zt in sorted(t['zslab']['zones'].items()):
                    objs = prog.slab_objects(name)
                    self.assertTrue(objs.complete, name)
                    got = {o.address: (o.state, o.cpu, o.slab, o.index) for o in objs}
                    want = {num(o['address']): (o['state'], o['cpu'], num(o['slab']), o['index'])
                            for o in zt['objects']}
                    self.assertEqual(got, want, '%s %s' % (fixture, name))
                    for o in zt['objects'][::5]:
                        w = prog.whatis(num(o['address']) + 2)
                        self.assertEqual((w.kind, w.cache, w.object, w.offset, w.state, w.cpu,
                                          w.allocated, w.malloc_zone, w.pfn),
                                         ('slab', name, num(o['address']), 2, o['state'],
                                          o['cpu'], o['state'] == 'allocated', zt['malloc_zone'],
                                          o['pfn']))
                threads = t.get('zthread', {}).get('threads', [])
                self.assertEqual(bool(threads), gen == 14)
                for th in threads:
                    w = prog.whatis(num(th['kstack']) + 16)
                    self.assertEqual((w.kind, w.pid, w.tid, w.comm, w.thread),
                                     ('stack', th['pid'], th['tid'], th['comm'],
                                      num(th['thread'])))
