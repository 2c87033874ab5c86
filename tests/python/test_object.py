"""The drgn-like object layer (kvmstat.Program, Object, the helpers) against
the fixture generator's ground truth: every FreeBSD generation's process
list, malloc types and their per-CPU statistics, layouts, CPUs, version and
unmapped addresses; the Linux fixtures' slab caches.  The truth is the
generator's model (truth.json), never kvmstat's own output."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_kvmstat import FIX, FREEBSD, kernel_of, num, truth  # noqa: E402

import kvmstat  # noqa: E402
from kvmstat import (Object, FaultError, TypeKind, cast, container_of,  # noqa: E402
                     sizeof, offsetof)
from kvmstat.helpers import freebsd as fb  # noqa: E402
from kvmstat.helpers import linux as lx  # noqa: E402


def prog_of(fixture, core):
    return kvmstat.open(core=os.path.join(FIX, fixture, core), kernel=kernel_of(fixture))


class FreeBSDObjects(unittest.TestCase):
    def test_processes(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            if not t.get('procs'):
                continue
            with self.subTest(fixture=fixture), prog_of(fixture, core) as prog:
                if 'allproc' not in prog:
                    continue
                got = [(p.p_pid.value_(), p.p_comm.string_().decode())
                       for p in fb.for_each_proc(prog)]
                self.assertEqual(got, [(p['pid'], p['comm']) for p in t['procs']])
                self.assertEqual(fb.find_proc(prog, t['procs'][-1]['pid']).p_comm.string_(),
                                 t['procs'][-1]['comm'].encode())
                self.assertFalse(fb.find_proc(prog, 99999))

    def test_malloc_types_and_names(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with self.subTest(fixture=fixture), prog_of(fixture, core) as prog:
                # the truth's names are vmstat's: at most 31 bytes
                names = [mt.ks_shortdesc.string_()[:31].decode('utf-8', 'surrogateescape')
                         for mt in fb.for_each_malloc_type(prog)]
                want = [ty['name'] for ty in t['malloc']['types']]
                self.assertEqual(sorted(set(names) & set(want)), sorted(set(want)))
                self.assertEqual(len(names), t['malloc']['count'])
                # each type's address is the generator's
                addrs = {mt.value_() for mt in fb.for_each_malloc_type(prog)}
                for ty in t['malloc']['types']:
                    self.assertIn(num(ty['addr']), addrs, ty['name'])

    def test_percpu_malloc_stats_13(self):
        """13+: zpcpu_get over mti_stats (an offset from __pcpu) gives each
        CPU's record; their sums are the generator's totals."""
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with prog_of(fixture, core) as prog:
                if not prog.type('struct malloc_type').has_member('ks_mti'):
                    continue
                with self.subTest(fixture=fixture):
                    checked = 0
                    for ty in t['malloc']['types']:
                        mt = Object(prog, 'struct malloc_type *', value=num(ty['addr']))
                        stats = mt.ks_mti.mti_stats
                        per = {p['cpu']: p for p in ty.get('percpu', [])}
                        for cpu, p in per.items():
                            rec = fb.zpcpu_get(stats, cpu)
                            self.assertEqual(rec.mts_memalloced.value_(), p['memalloced'],
                                             '%s cpu %d' % (ty['name'], cpu))
                            self.assertEqual(rec.mts_numallocs.value_(), p['numallocs'])
                            checked += 1
                    self.assertGreater(checked, 10)

    def test_counters(self):
        """counter(9) sums over the CPUs the kernel has (sparse ids too):
        each UMA zone's uz_fails and uz_xdomain as the generator summed them."""
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with prog_of(fixture, core) as prog:
                try:
                    zt = prog.type('struct uma_zone')
                except LookupError:
                    continue                            # fbsd5: no UMA
                if not zt.has_member('uz_fails') or \
                        zt.member('uz_fails').type.type_name() != 'counter_u64_t':
                    continue
                with self.subTest(fixture=fixture):
                    n = 0
                    for z in t['uma']['zones']:
                        zone = Object(prog, 'struct uma_zone *', value=num(z['addr']))
                        self.assertEqual(fb.counter_u64_fetch(zone.uz_fails), z['failures'],
                                         z['name'])
                        if zt.has_member('uz_xdomain'):
                            self.assertEqual(fb.counter_u64_fetch(zone.uz_xdomain),
                                             z['xdomain'], z['name'])
                        n += 1
                    self.assertGreater(n, 5)

    def test_layouts_through_types(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with self.subTest(fixture=fixture), prog_of(fixture, core) as prog:
                n = 0
                for tname, lay in t['layouts'].items():
                    try:
                        ty = prog.type(tname)
                    except LookupError:
                        continue
                    self.assertEqual(sizeof(ty), lay['size'], tname)
                    for path, m in lay.get('members', {}).items():
                        self.assertEqual(offsetof(ty, path), m['offset'], '%s.%s' % (tname, path))
                        n += 1
                self.assertGreater(n, 10)

    def test_scalars_strings_faults(self):
        for fixture, core in FREEBSD:
            t = truth(fixture)
            with self.subTest(fixture=fixture), prog_of(fixture, core) as prog:
                if 'mp_ncpus' in t and 'mp_ncpus' in prog:
                    self.assertEqual(prog['mp_ncpus'].value_(), t['mp_ncpus'])
                    self.assertEqual(int(prog['mp_ncpus']), t['mp_ncpus'])
                v = prog['version']
                self.assertEqual(v.type_.kind, TypeKind.ARRAY)
                self.assertEqual(v.string_().decode(), t['version'])
                bad = num(t['unmapped'][0])
                with self.assertRaises(FaultError) as cm:
                    Object(prog, 'int', address=bad).value_()
                self.assertEqual(cm.exception.address, bad)
                if 'cpus' in t and 'all_cpus' in prog:
                    self.assertEqual(list(fb.for_each_cpu(prog)), t['cpus'])

    def test_object_algebra(self):
        with prog_of('fbsd14', 'vmcore.minidump3') as prog:
            head = prog['kmemstatistics']
            self.assertEqual(head.type_.kind, TypeKind.POINTER)
            first = head.deref_()
            self.assertEqual(first.address_, head.value_())
            self.assertEqual(first.address_of_().value_(), head.value_())
            # container_of inverts member address
            nxt = first.ks_next
            back = container_of(first.ks_next.address_of_(), 'struct malloc_type', 'ks_next')
            self.assertEqual(back.value_(), head.value_())
            # pointer arithmetic scales by the target's size
            size = sizeof(prog.type('struct malloc_type'))
            self.assertEqual((head + 2).value_(), head.value_() + 2 * size)
            self.assertEqual(head[1].address_, head.value_() + size)
            # casts and held values wrap as C does
            self.assertEqual(cast('unsigned char', Object(prog, 'int', value=-1)).value_(), 255)
            self.assertEqual(cast('int', Object(prog, 'unsigned int', value=0xffffffff)).value_(), -1)
            self.assertEqual(Object(prog, 'unsigned long', value=-1).value_(), (1 << 64) - 1)
            self.assertTrue(Object(prog, 'int', value=3) == 3)
            self.assertEqual(prog.type('unsigned long'), prog.type('long unsigned int'))
            self.assertEqual(prog.type('struct malloc_type *').type, prog.type('struct malloc_type'))
            arr = prog.type('char [16]')
            self.assertEqual((arr.kind, arr.length, arr.size), (TypeKind.ARRAY, 16, 16))
            self.assertIsInstance(nxt, Object)
            with self.assertRaises(AttributeError):
                first.no_such_member
            with self.assertRaises(KeyError):
                prog['no_such_symbol_anywhere']
            sym = prog.symbol(head.address_ + 1)
            self.assertEqual(sym.name, 'kmemstatistics')
            self.assertEqual(sym.address, head.address_)


class Shell(unittest.TestCase):
    """kvmstat shell: a script gets prog and the helpers, its own argv; the
    console reads commands from stdin."""

    def run_shell(self, args, stdin=None):
        import subprocess
        exe = os.environ.get('KVS_KVMSTAT')
        self.assertTrue(exe and os.path.exists(exe), 'KVS_KVMSTAT (the kvmstat program) missing')
        env = dict(os.environ)
        env.pop('PYTHONPATH', None)         # the program finds the module itself
        return subprocess.run([exe] + args, input=stdin, capture_output=True, text=True,
                              env=env, timeout=120)

    def test_script_and_console(self):
        import tempfile
        t = truth('fbsd14')
        with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as f:
            f.write('import sys\nprint(sys.argv[1:])\n'
                    'for p in for_each_proc(prog):\n'
                    '    print(p.p_pid.value_(), p.p_comm.string_().decode())\n')
            script = f.name
        try:
            r = self.run_shell(['-M', os.path.join(FIX, 'fbsd14', 'vmcore.minidump3'),
                                '-N', kernel_of('fbsd14'), 'shell', script, '-x', '--json'])
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.splitlines()
            self.assertEqual(lines[0], "['-x', '--json']")
            self.assertEqual(lines[1:], ['%d %s' % (p['pid'], p['comm']) for p in t['procs']])
        finally:
            os.unlink(script)
        r = self.run_shell(['-M', os.path.join(FIX, 'fbsd14', 'vmcore.minidump3'), '-N',
                            kernel_of('fbsd14'), 'shell'],
                           stdin="print('ncpus', prog['mp_ncpus'].value_())\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('ncpus %d' % t['mp_ncpus'], r.stdout)
        r = self.run_shell(['-M', '/nonexistent/core', 'shell'])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('/nonexistent/core', r.stderr)


class LinuxObjects(unittest.TestCase):
    def test_slab_caches(self):
        for fixture in ('linux-kaslr', 'linux-nokaslr'):
            t = truth(fixture)
            with self.subTest(fixture=fixture), kvmstat.open(
                    core=os.path.join(FIX, fixture, 'vmcore'),
                    kernel=os.path.join(FIX, 'linux-kaslr', 'vmlinux')) as prog:
                names = [c.name.string_().decode('utf-8', 'surrogateescape')
                         for c in lx.for_each_slab_cache(prog)]
                want = [c['name'] for c in t['caches']]
                self.assertEqual(sorted(names), sorted(want))
                c = lx.find_slab_cache(prog, want[0])
                self.assertEqual(c.name.string_().decode('utf-8', 'surrogateescape'), want[0])
                self.assertIsNone(lx.find_slab_cache(prog, 'no such cache'))


if __name__ == '__main__':
    unittest.main()
