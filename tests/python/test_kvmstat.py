"""The Python module against the fixture generator's ground truth
(fixtures/cores/*/truth.json), never against kvmstat's own output.

Run: KVMSTAT_LIB=build/libkvmstat/libkvmstat.so.0 PYTHONPATH=python \
     python3 -m unittest discover -s tests/python -v
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get('KVS_SRCDIR') or os.path.dirname(os.path.dirname(HERE))
FIX = os.environ.get('KVS_FIXTURES') or os.path.join(SRC, 'fixtures', 'cores')
sys.path.insert(0, os.path.join(SRC, 'python'))

import kvmstat  # noqa: E402

_open = open                            # the builtin

# (fixture, core file) of each FreeBSD generation.
FREEBSD = [('fbsd5', 'vmcore.elf'), ('fbsd11', 'vmcore.minidump2'),
           ('fbsd12', 'vmcore.minidump2'), ('fbsd14', 'vmcore.minidump3'),
           ('fbsd14-s2', 'vmcore.minidump3')]


def truth(fixture, name='truth.json'):
    with open(os.path.join(FIX, fixture, name)) as f:
        return json.load(f)


def num(v):
    return int(v, 16) if isinstance(v, str) else v


def kernel_of(fixture):
    # fbsd14-s2 is a second seed of the fbsd14 kernel.
    d = 'fbsd14' if fixture == 'fbsd14-s2' else fixture
    return os.path.join(FIX, d, 'kernel')


def open_fbsd(fixture='fbsd14', core='vmcore.minidump3', **kw):
    return kvmstat.open(core=os.path.join(FIX, fixture, core), kernel=kernel_of(fixture), **kw)


class Handle(unittest.TestCase):
    def test_context_manager_closes(self):
        with open_fbsd() as k:
            self.assertEqual(k.kernel_info().os, 'FreeBSD')
        with self.assertRaises(ValueError):
            k.read(0xffffffff80000000, 8)
        k.close()                                   # twice is fine

    def test_open_error_names_the_file(self):
        missing = os.path.join(FIX, 'fbsd14', 'no-such-core')
        with self.assertRaises(kvmstat.Error) as cm:
            kvmstat.open(core=missing, kernel=kernel_of('fbsd14'))
        self.assertIn('no-such-core', str(cm.exception))

    def test_open_without_kernel(self):
        # kernel=None is no longer refused by the module: the library says
        # what the dump lacks.  A FreeBSD dump does not name its kernel, and
        # none is installed: an Error with its code; no_kernel=True opens
        # it for its bytes alone.
        mini = os.path.join(FIX, 'fbsd14', 'vmcore.minidump3')
        old = os.environ.get('KVS_DEBUG_ROOT')
        os.environ['KVS_DEBUG_ROOT'] = '/nonexistent'
        try:
            with self.assertRaises(kvmstat.Error) as cm:
                kvmstat.open(core=mini)
        finally:
            if old is None:
                del os.environ['KVS_DEBUG_ROOT']
            else:
                os.environ['KVS_DEBUG_ROOT'] = old
        self.assertIsNotNone(cm.exception.code)
        self.assertNotEqual(cm.exception.code, 0)
        self.assertIn('installed', str(cm.exception))
        with kvmstat.open(core=mini, no_kernel=True) as k:
            self.assertEqual(k.dumpinfo().format, 'minidump')
            self.assertEqual(k.dumpinfo().dumped_pages, truth('fbsd14')['dumped_pages']['minidump3'])
            with self.assertRaises(kvmstat.Error) as cm:
                k.read(0xffffffff80200000, 8)
            self.assertIn('bytes alone', str(cm.exception))
        with self.assertRaises(ValueError):
            kvmstat.open(core=mini, kernel=kernel_of('fbsd14'), no_kernel=True)

    def test_open_error_codes(self):
        # .code is kvs_status_t, .status its text, as for errors on a handle.
        codes = {}
        with kvmstat.open(kernel=kernel_of('fbsd14'), kernel_only=True) as k:
            lib = k._lib
            for i in range(16):
                codes[kvmstat._s(lib.kvs_status_str(i))] = i
        missing = os.path.join(FIX, 'fbsd14', 'no-such-core')
        with self.assertRaises(kvmstat.Error) as cm:
            kvmstat.open(core=missing, kernel=kernel_of('fbsd14'))
        self.assertEqual(cm.exception.code, codes['I/O error'])
        self.assertEqual(cm.exception.status, 'I/O error')
        with self.assertRaises(kvmstat.Error) as cm:
            kvmstat.open(core=os.path.join(FIX, 'fbsd14', 'vmcore.minidump3'),
                         kernel=os.path.join(FIX, 'fbsd14', 'kernel.other'))
        self.assertEqual(cm.exception.code, codes['kernel does not match dump'])

    def test_mismatched_kernel_refused(self):
        with self.assertRaises(kvmstat.Error) as cm:
            kvmstat.open(core=os.path.join(FIX, 'fbsd14', 'vmcore.minidump3'),
                         kernel=os.path.join(FIX, 'fbsd14', 'kernel.other'))
        self.assertIn('does not match', str(cm.exception))

    def test_kernel_only(self):
        t = truth('fbsd14')
        with kvmstat.open(kernel=kernel_of('fbsd14'), kernel_only=True) as k:
            self.assertEqual(k.symbol('kmemstatistics'), num(t['symbols']['kmemstatistics']['addr']))
            with self.assertRaises(kvmstat.Error):
                k.read(num(t['symbols']['version']['addr']), 8)

    def test_library_from_env(self):
        env = dict(os.environ, KVMSTAT_LIB='/nonexistent/libkvmstat.so.0',
                   PYTHONPATH=os.path.join(SRC, 'python'))
        r = subprocess.run([sys.executable, '-c', 'import kvmstat; kvmstat.load_library()'],
                           env=env, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('/nonexistent/libkvmstat.so.0', r.stderr)


class Memory(unittest.TestCase):
    def test_reads_symbols_translations(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k:
                for name, s in t['symbols'].items():
                    sym = k.symbol(name)
                    self.assertEqual(sym, num(s['addr']), name)
                    self.assertEqual(sym.size, s['size'], name)
                    if s['size']:
                        at = k.symbol_at(num(s['addr']))
                        self.assertIsNotNone(at, name)
                        self.assertEqual(at[1], 0)
                for r in t['reads']:
                    self.assertEqual(k.read(num(r['va']), r['len']).hex(), r['hex'], r['va'])
                for tr in t['translations']:
                    va = num(tr['va'])
                    self.assertEqual(k.kvtop(va), tr['pa'], tr['va'])
                    self.assertEqual(k.read_phys(tr['pa'], 24), k.read(va, 24))
                with self.assertRaises(kvmstat.Error):
                    k.symbol('no_such_symbol_anywhere')

    def test_unmapped_reports_fault_address(self):
        t = truth('fbsd14')
        with open_fbsd() as k:
            for va in t['unmapped']:
                va = num(va)
                if va >= 1 << 63:
                    with self.assertRaises(kvmstat.Error) as cm:
                        k.read(va, 8)
                    self.assertEqual(cm.exception.fault_addr, va)
                    self.assertIn('%x' % va, str(cm.exception))

    def test_info_msgbuf(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k:
                ki = k.kernel_info()
                self.assertEqual(ki.version, t['version'].split('\n')[0])
                self.assertEqual(ki.panic, t['panicstr'])
                self.assertEqual(ki.ncpus, t['mp_ncpus'])
                self.assertEqual(ki.maxid, t['mp_maxid'])
                self.assertEqual(k.msgbuf(), t['msgbuf_text'].rstrip('\0'))
                di = k.dumpinfo()
                self.assertEqual(di.dumped_pages, t['dumped_pages'][
                    'elf' if core.endswith('elf') else core.split('.')[1]])


class Types(unittest.TestCase):
    def test_cache_warning_is_a_python_warning(self):
        # A layout cache directory that cannot be written costs one warning
        # (kvs_set_notify): a KvmstatWarning naming it, nothing on stderr,
        # and the answer is still the generator's.
        import warnings
        with tempfile.TemporaryDirectory() as tmp:
            if os.geteuid() == 0:               # root ignores mode bits
                ro = '/proc/self/kvmstat-no'
            else:
                ro = os.path.join(tmp, 'ro')
                os.mkdir(ro, 0o555)
            old = os.environ.get('XDG_CACHE_HOME')
            os.environ['XDG_CACHE_HOME'] = ro
            errpath = os.path.join(tmp, 'stderr')
            saved = os.dup(2)
            try:
                with _open(errpath, 'wb') as ef, \
                        warnings.catch_warnings(record=True) as got:
                    warnings.simplefilter('always')
                    os.dup2(ef.fileno(), 2)
                    k = kvmstat.open(kernel=kernel_of('fbsd14'), kernel_only=True)
                    size = k.type('struct malloc_type').size
                    k.close()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                if old is None:
                    del os.environ['XDG_CACHE_HOME']
                else:
                    os.environ['XDG_CACHE_HOME'] = old
            with _open(errpath, 'rb') as ef:
                self.assertEqual(ef.read(), b'')
        self.assertEqual(size, truth('fbsd14')['layouts']['struct malloc_type']['size'])
        mine = [w for w in got if issubclass(w.category, kvmstat.KvmstatWarning)]
        self.assertEqual(len(mine), 1, [str(w.message) for w in got])
        self.assertIn('layout cache', str(mine[0].message))
        self.assertIn(ro, str(mine[0].message))

    def test_layouts(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k:
                checked = 0
                for tname, lay in t['layouts'].items():
                    try:
                        ti = k.type(tname)
                    except kvmstat.Error as e:
                        # A type the generator describes but this kernel's
                        # DWARF never uses (fbsd5: struct mtx).
                        self.assertEqual(e.code, 8, '%s: %s' % (tname, e))  # KVS_E_NOTYPE
                        self.assertNotEqual(tname, 'struct malloc_type')
                        continue
                    checked += 1
                    self.assertEqual(ti.size, lay['size'], tname)
                    for path, m in lay.get('members', {}).items():
                        ti = k.member(tname, path)
                        self.assertEqual((ti.offset, ti.size), (m['offset'], m['size']),
                                         '%s.%s' % (tname, path))
                        self.assertTrue(k.has_member(tname, path))
                    self.assertFalse(k.has_member(tname, 'no_such_member_x'))
                self.assertGreaterEqual(checked, 3)

    def test_members_walk(self):
        t = truth('fbsd14')['layouts']['struct malloc_type']
        with open_fbsd() as k:
            ms = k.members('malloc_type')
            top = {m.name: m for m in ms if m.depth == 0}
            for path, m in t['members'].items():
                if '.' not in path:
                    self.assertEqual((top[path].offset, top[path].size),
                                     (m['offset'], m['size']))

    def test_read_struct_walks_kmemstatistics(self):
        """Follow ks_next by member name from the list head: the addresses
        and names are the generator's, on every malloc layout generation."""
        for fixture, core in FREEBSD:
            t = truth(fixture)
            want = {num(x['addr']): x['name'] for x in t['malloc']['types']}
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k:
                addr = k.read_pointer(k.symbol('kmemstatistics'))
                self.assertEqual(addr, num(t['malloc']['head']))
                seen = {}
                while addr and len(seen) < 1000:
                    mt = k.read_struct('malloc_type', addr)
                    self.assertEqual(mt._kaddr, addr)
                    self.assertEqual(mt._size, t['layouts']['struct malloc_type']['size'])
                    seen[addr] = k.read_string(mt.ks_shortdesc)
                    addr = mt.ks_next
                skipped = {num(a) for a in t['malloc']['skipped']}
                self.assertEqual(set(seen) - skipped, set(want))
                for a, name in want.items():
                    # libmemstat keeps MEMTYPE_MAXNAME - 1 bytes of a name.
                    self.assertEqual(seen[a][:31], name)
                self.assertEqual(len(seen), t['malloc']['count'])

    def test_read_struct_nested_and_items(self):
        t = truth('fbsd14')
        lay = t['layouts']['struct malloc_type']['members']
        with open_fbsd() as k:
            a = num(t['malloc']['types'][0]['addr'])
            mt = k.read_struct('struct malloc_type', a)
            raw = k.read(a, t['layouts']['struct malloc_type']['size'])
            off = lay['ks_mti.mti_stats']['offset']
            want = int.from_bytes(raw[off:off + 8], 'little')
            self.assertEqual(mt['ks_mti.mti_stats'], want)
            self.assertEqual(mt.ks_mti.mti_stats, want)
            self.assertEqual(mt.ks_mti._kaddr, a + lay['ks_mti']['offset'])
            self.assertIn('ks_next', dir(mt))
            with self.assertRaises(AttributeError):
                mt.no_such_member
            with self.assertRaises(AttributeError):
                mt.ks_next = 0


def by_addr(rows):
    return {num(r.get('addr', r.get('address'))): r for r in rows}


class Allocators(unittest.TestCase):
    def test_malloc_types(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            want = by_addr(t['malloc']['types'])
            zones = t['malloc']['zone_sizes']
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k:
                got = k.malloc_types()
                self.assertEqual(len(got), len(want))
                for m in got:
                    w = want[m.kaddr]
                    self.assertEqual(m.allocator, 'malloc')
                    self.assertEqual(m.name, w['name'])
                    self.assertEqual(m.bytes, w['memuse_bytes'], m.name)
                    self.assertEqual(m.count, w['inuse'], m.name)
                    self.assertEqual(m.requests, w['numallocs'], m.name)
                    self.assertEqual(m.sizemask, w['sizemask'], m.name)
                    if t['malloc']['layout'] == 5:      # counters of 5.x: no frees
                        self.assertEqual(m.maxused, w['maxused'], m.name)
                        continue
                    self.assertEqual(m.numfrees, w['numfrees'], m.name)
                    if zones:
                        self.assertEqual(m.sizes, w['sizes'], m.name)
                    for pc in w.get('percpu', []):
                        p = m.percpu(pc['cpu'])
                        self.assertEqual(p['numallocs'], pc['numallocs'])
                        self.assertEqual(p['memalloced'], pc['memalloced'])

    def test_partial_dump_flags(self):
        """A copy of the dump without a page holding a type's name and one
        holding another's statistics (pages from the generator's model, as
        tests/check_partial_freebsd.py picks them): those rows are flagged,
        every other one is the truth's; a refresh from the whole dump
        clears the flags."""
        sys.path.insert(0, os.path.join(SRC, 'tests'))
        import check_partial_freebsd as cp
        for fixture, core in (('fbsd12', 'vmcore.minidump2'), ('fbsd11', 'vmcore.minidump2')):
            t = truth(fixture)
            picks = cp.pick_malloc(t)
            # the page a type's statistics are read from last (its last
            # CPU's record): the CPUs before it were read, and must not show
            headers = {p for pl in t['malloc']['places'] for p in pl['header']}
            # (6-11: the generator puts temp's records across a page right
            # after CPU 0's)
            temp = {num(r['addr']) for r in t['malloc']['types'] if r['name'] == 'temp'}
            owner = next((pl for pl in t['malloc']['places'] if num(pl['addr']) in temp and
                          len(pl['counters']) > 1 and pl['counters'][-1] not in headers),
                         None) or \
                next(pl for pl in t['malloc']['places'] if picks['counters'] in pl['counters'])
            last = owner['counters'][-1]
            gone = {picks['name'], last if last not in headers else picks['counters']}
            want, cut = cp.malloc_expect(t['malloc']['places'], gone)
            with self.subTest(fixture=fixture), tempfile.TemporaryDirectory() as d:
                copy = os.path.join(d, 'partial')
                cp.minidump_drop(os.path.join(FIX, fixture, core), copy, gone)
                cutcopy = os.path.join(d, 'cut')
                cp.minidump_drop(os.path.join(FIX, fixture, core), cutcopy, {picks['cut']})
                truth_rows = by_addr(t['malloc']['types'])
                with kvmstat.open(core=copy, kernel=kernel_of(fixture)) as k, \
                        kvmstat.open(core=cutcopy, kernel=kernel_of(fixture)) as kcut, \
                        open_fbsd(fixture, core) as whole:
                    lst = kvmstat.MemoryTypeList(k, 'malloc').refresh()
                    self.assertEqual(lst.incomplete, cut)
                    self.assertEqual({m.kaddr for m in lst}, set(want))
                    for m in lst:
                        name_ok, counts_ok = want[m.kaddr]
                        self.assertEqual(m.name_unreadable, not name_ok)
                        self.assertEqual(m.counts_unreadable, not counts_ok)
                        self.assertEqual(m.flags, (0 if name_ok else kvmstat.NAME_UNREADABLE) |
                                         (0 if counts_ok else kvmstat.COUNTS_UNREADABLE))
                        if name_ok:
                            self.assertEqual(m.name, truth_rows[m.kaddr]['name'])
                        if counts_ok:
                            self.assertEqual(m.requests, truth_rows[m.kaddr]['numallocs'])
                        else:
                            self.assertEqual(m.requests, 0)
                            for c in range(m.maxcpus):
                                self.assertEqual(m.percpu(c)['numallocs'], 0)
                                self.assertEqual(m.percpu(c)['memalloced'], 0)
                    self.assertTrue(any(m.flags for m in lst))
                    # a list cut at a page: the rows before it stand, those
                    # after it vanish, and the list says it is incomplete
                    lst.refresh(kcut)
                    wcut, _ = cp.malloc_expect(t['malloc']['places'], {picks['cut']})
                    self.assertTrue(lst.incomplete)
                    self.assertEqual({m.kaddr for m in lst if not m.vanished}, set(wcut))
                    lst.refresh(whole)
                    self.assertFalse(lst.incomplete)
                    for m in lst:
                        self.assertEqual(m.flags, 0)
                        self.assertEqual(m.name, truth_rows[m.kaddr]['name'])
                        self.assertEqual(m.requests, truth_rows[m.kaddr]['numallocs'])
                    lst.free()

    def test_uma_zones(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            if 'uma' not in t:
                continue
            want = by_addr(t['uma']['zones'])
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k:
                got = k.uma_zones()
                self.assertEqual(len(got), len(want))
                for z in got:
                    w = want[z.kaddr]
                    self.assertEqual(z.allocator, 'uma')
                    for attr, key in (('name', 'name'), ('bytes', 'bytes'), ('count', 'count'),
                                      ('requests', 'numallocs'), ('size', 'size'),
                                      ('free', 'free'), ('failures', 'failures'),
                                      ('sleeps', 'sleeps'), ('xdomain', 'xdomain')):
                        self.assertEqual(getattr(z, attr), w[key], '%s.%s' % (w['name'], attr))

    def test_list_refresh_keeps_identity(self):
        """A list refreshed from the second moment of the same system: the
        same Python objects, the generator's t2 values, new types added."""
        for fixture, core in (('fbsd14', 'vmcore.minidump3'), ('fbsd12', 'vmcore.minidump2')):
            t2 = truth(fixture, 'truth.t2.json')
            with self.subTest(fixture=fixture), open_fbsd(fixture, core) as k1, \
                    open_fbsd(fixture, core + '.t2') as k2:
                lst = k1.memory_type_list('malloc')
                before = {m.kaddr: m for m in lst}
                lst.refresh(k2)
                after = {m.kaddr: m for m in lst}
                for a, m in before.items():
                    if a in after:
                        self.assertIs(after[a], m)
                want = by_addr(t2['malloc']['types'])
                for a, w in want.items():
                    self.assertIn(a, after, w['name'])
                    self.assertEqual(after[a].requests, w['numallocs'], w['name'])
                    self.assertEqual(after[a].bytes, w['memuse_bytes'], w['name'])
                    self.assertFalse(after[a].vanished)
                self.assertEqual(len(lst), len(after))
                self.assertEqual(lst.find(t2['malloc']['types'][0]['name']).kaddr,
                                 num(t2['malloc']['types'][0]['addr']))
                gone = [m for m in lst if m.vanished]
                self.assertEqual(lst.sweep(), len(gone))
                self.assertEqual({m.kaddr for m in lst}, set(want))

    def test_percpu_range_and_refresh_errors(self):
        with open_fbsd() as k:
            m = k.malloc_types()[0]
            self.assertIsInstance(m.percpu(0), dict)
            for bad in (m.maxcpus, 99, -1):
                with self.assertRaises(IndexError):
                    m.percpu(bad)
            # A walker of the other family: the handle's message, no
            # "KVM error:" in front.
            with self.assertRaises(kvmstat.Error) as cm:
                k.memory_type_list('slab')
            self.assertFalse(str(cm.exception).startswith('KVM error'), str(cm.exception))
            self.assertTrue(str(cm.exception))

    def test_slab_caches(self):
        t = truth('linux-kaslr')
        with kvmstat.open(core=os.path.join(FIX, 'linux-kaslr', 'vmcore'),
                          kernel=os.path.join(FIX, 'linux-kaslr', 'vmlinux')) as k:
            self.assertEqual(k.kernel_info().os, 'Linux')
            got = k.slab_caches()
            want = by_addr(t['caches'])
            self.assertEqual(len(got), len(want))
            for c in got:
                w = want[c.kaddr]
                self.assertEqual(c.allocator, 'slab')
                for attr, key in (('name', 'name'), ('count', 'allocated'), ('bytes', 'bytes'),
                                  ('size', 'object_size'), ('rsize', 'size'), ('free', 'free'),
                                  ('slab_numobjs', 'num_objs'), ('slab_active', 'active_objs'),
                                  ('slab_objperslab', 'objects_per_slab'),
                                  ('slab_pagesperslab', 'pages_per_slab'),
                                  ('slab_numslabs', 'num_slabs')):
                    self.assertEqual(getattr(c, attr), w[key], '%s.%s' % (w['name'], attr))
                # The example: a member read by name.
                kc = k.read_struct('kmem_cache', c.kaddr)
                self.assertEqual(kc.size, w['size'], w['name'])
                self.assertEqual(kc.object_size, w['object_size'], w['name'])
                self.assertEqual(k.read_string(kc.name), w['name'])


class Profiling(unittest.TestCase):
    def test_gmon(self):
        g = truth('fbsd14')['gprof']
        with open_fbsd() as k:
            gm = k.gmon()
            self.assertEqual(gm.lowpc, num(g['lowpc']))
            self.assertEqual(gm.highpc, num(g['highpc']))
            self.assertEqual(gm.profrate, g['profrate'])
            self.assertEqual(gm.state, g['state'])
            self.assertEqual(gm.counter_bits, g['histcounter_type'])
            self.assertEqual(sorted(gm.arcs), sorted(
                (num(a['frompc']), num(a['selfpc']), a['count']) for a in g['arcs']))
            funcs, total, unknown = gm.flat()
            self.assertEqual(total, sum(gm.bins))
            want = {f['name']: f for f in g['functions'] if f['ticks'] or f['calls']}
            self.assertEqual({f.name for f in funcs}, set(want))
            for f in funcs:
                self.assertEqual((f.ticks, f.calls), (want[f.name]['ticks'], want[f.name]['calls']))
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, 'gmon.out')
                gm.write(p)
                self.assertGreater(os.path.getsize(p), 20)
                with self.assertRaises(OSError):
                    gm.write(p)                     # no force: refused
                gm.write(p, force=True)

    def test_probes(self):
        d = truth('fbsd14')['dtrace']
        with open_fbsd(module_dir=os.path.join(FIX, 'fbsd14')) as k:
            got = {p.id: p for p in k.probes()}
            want = {p['id']: p for p in d['probes'] if p['provider'] == 'profile'}
            self.assertEqual(set(got), set(want))
            for i, w in want.items():
                p = got[i]
                self.assertEqual((p.name, p.enabled, p.interval_ns, p.kind),
                                 (w['name'], w['enabled'], w['interval_ns'], w['kind']))
                for cpu, ns in w.get('next_fire_ns_percpu', {}).items():
                    self.assertEqual(p.next_fire_percpu[int(cpu)], ns)
            # dtrace_nprobes counts ids; the table has a probe per truth row.
            self.assertEqual(sorted(p.id for p in k.probes(all=True)),
                             sorted(p['id'] for p in d['probes']))

    def test_profil(self):
        procs = truth('fbsd14')['procs']
        with open_fbsd() as k:
            got = {p.pid: p for p in k.profil()}
            want = {p['pid']: p for p in procs if p['profil']}
            self.assertEqual(set(got), set(want))
            for pid, w in want.items():
                self.assertEqual((got[pid].comm, got[pid].pr_base, got[pid].pr_scale),
                                 (w['comm'], w['pr_base'], w['pr_scale']))


if __name__ == '__main__':
    unittest.main()
