"""The example programs (examples/c built by meson, examples/python), run on
the fixtures and checked against the generator's truth.json, GNU gprof and
the live fixture generator (fixtures/gen/live.sh).

Environment: KVS_EXAMPLES (the build's examples/ directory), KVMSTAT_LIB,
KVS_BUILDDIR (for kvmstat), KVS_FIXTURES, KVS_SRCDIR.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get('KVS_SRCDIR') or os.path.dirname(os.path.dirname(HERE))
FIX = os.environ.get('KVS_FIXTURES') or os.path.join(SRC, 'fixtures', 'cores')
BUILD = os.environ.get('KVS_BUILDDIR') or os.path.join(SRC, 'build')
CBIN = os.environ.get('KVS_EXAMPLES') or os.path.join(BUILD, 'examples')
PYEX = os.path.join(SRC, 'examples', 'python')
ALLOW_MISSING = os.environ.get('KVS_ALLOW_MISSING_ORACLES') == '1'

K14 = os.path.join(FIX, 'fbsd14', 'kernel')
C14 = os.path.join(FIX, 'fbsd14', 'vmcore.minidump3')


def truth(fixture):
    with open(os.path.join(FIX, fixture, 'truth.json')) as f:
        return json.load(f)


def num(v):
    return int(v, 16) if isinstance(v, str) else v


def variants(name):
    """The C and the Python version of an example, as argv prefixes."""
    return [('C', [os.path.join(CBIN, name)]),
            ('Python', [sys.executable, os.path.join(PYEX, name + '.py')])]


def run(argv, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, **kw)
    return r.returncode, r.stdout.decode('utf-8', 'surrogateescape'), \
        r.stderr.decode('utf-8', 'surrogateescape')


class Examples(unittest.TestCase):
    def run_ok(self, argv):
        rc, out, err = run(argv)
        self.assertEqual(rc, 0, '%s: exit %d\n%s' % (' '.join(argv), rc, err))
        return out

    def test_member(self):
        t = truth('fbsd14')
        names = {num(x['addr']): x['name'] for x in t['malloc']['types']}
        devbuf = num(t['symbols']['M_DEVBUF']['addr'])
        lx = truth('linux-kaslr')
        L = os.path.join(FIX, 'linux-kaslr')
        for lang, argv in variants('member'):
            with self.subTest(lang=lang):
                out = self.run_ok(argv + [K14, C14, 'struct malloc_type', 'ks_shortdesc',
                                          'M_DEVBUF'])
                m = re.fullmatch(r'struct malloc_type\.ks_shortdesc = 0x[0-9a-f]+ "(.*)"\n', out)
                self.assertIsNotNone(m, out)
                self.assertEqual(m.group(1), names[devbuf])
                for c in lx['caches'][:4]:
                    for member, key in (('size', 'size'), ('object_size', 'object_size')):
                        out = self.run_ok(argv + [os.path.join(L, 'vmlinux'),
                                                  os.path.join(L, 'vmcore'), 'kmem_cache',
                                                  member, c['address']])
                        self.assertEqual(out.split(' = ')[1].strip(), str(c[key]), out)
                # An unmapped address is an error naming it, not a crash.
                rc, out, err = run(argv + [K14, C14, 'struct malloc_type', 'ks_next',
                                           t['unmapped'][0]])
                self.assertEqual(rc, 1)
                self.assertIn(t['unmapped'][0][2:], err)

    def test_malloc_top(self):
        for fixture, core in (('fbsd14', 'vmcore.minidump3'), ('fbsd12', 'vmcore.minidump2'),
                              ('fbsd5', 'vmcore.elf')):
            t = truth(fixture)
            want = sorted((x['memuse_bytes'], x['inuse'], x['numallocs'], x['name'])
                          for x in t['malloc']['types'])
            for lang, argv in variants('malloc_top'):
                with self.subTest(lang=lang, fixture=fixture):
                    out = self.run_ok(argv + [os.path.join(FIX, fixture, 'kernel'),
                                              os.path.join(FIX, fixture, core)])
                    rows = []
                    for line in out.split('\n')[:-1]:
                        b, c, r, name = line.split(' ', 3)
                        rows.append((int(b), int(c), int(r), name))
                    self.assertEqual(sorted(rows), want)
                    self.assertEqual([r[0] for r in rows],
                                     sorted((r[0] for r in rows), reverse=True))
                    out = self.run_ok(argv + [os.path.join(FIX, fixture, 'kernel'),
                                              os.path.join(FIX, fixture, core), '3'])
                    self.assertEqual(len(out.split('\n')) - 1, 3)

    def test_malloc_grew(self):
        """The growth between the fixture's two moments, from the two
        truth files: types matched by address, then by name."""
        a, b = truth('fbsd14'), json.load(open(os.path.join(FIX, 'fbsd14', 'truth.t2.json')))
        ta = {(num(x['addr']), x['name']): x['memuse_bytes'] for x in a['malloc']['types']}
        tb = {(num(x['addr']), x['name']): x['memuse_bytes'] for x in b['malloc']['types']}
        want = []
        used = set()
        for (addr, name), vb in tb.items():
            if (addr, name) in ta:
                used.add((addr, name))
                want.append((vb - ta[(addr, name)], name))
            else:
                old = [k for k in ta if k[1] == name and k not in tb and k not in used]
                if old:
                    used.add(old[0])
                want.append((vb - (ta[old[0]] if old else 0), name))
        want += [(-v, k[1]) for k, v in ta.items() if k not in used]
        want.sort(key=lambda r: (-r[0], r[1]))
        out = self.run_ok([sys.executable, os.path.join(PYEX, 'malloc_grew.py'),
                           os.path.join(FIX, 'fbsd14', 'kernel'),
                           os.path.join(FIX, 'fbsd14', 'vmcore.minidump3'),
                           os.path.join(FIX, 'fbsd14', 'vmcore.minidump3.t2'), '10'])
        got = [(int(line.split(' ', 3)[0]), line.split(' ', 3)[3])
               for line in out.split('\n')[:-1]]
        self.assertEqual(got, want[:10])

    def test_freebsd_ps(self):
        t = truth('fbsd14')
        for how in ('script', 'shell'):
            with self.subTest(how=how):
                k, c = os.path.join(FIX, 'fbsd14', 'kernel'), os.path.join(FIX, 'fbsd14',
                                                                           'vmcore.minidump3')
                if how == 'script':
                    argv = [sys.executable, os.path.join(PYEX, 'freebsd_ps.py'), k, c]
                else:
                    argv = [os.path.join(BUILD, 'analyzers', 'kvmstat'), '-M', c, '-N', k,
                            'shell', os.path.join(PYEX, 'freebsd_ps.py')]
                out = self.run_ok(argv)
                rows = [line.split(None, 2) for line in out.split('\n')[1:-1]]
                self.assertEqual([(int(r[0]), r[2]) for r in rows],
                                 [(p['pid'], p['comm']) for p in t['procs']])

    TICK = re.compile(r'tick (\d+): types (\d+) requests (\d+) bytes (\d+) '
                      r'\+requests (\d+) top (.*)')

    def ticks(self, out):
        rows = [self.TICK.fullmatch(line) for line in out.split('\n')[:-1]]
        self.assertTrue(all(rows), out)
        return [tuple(int(x) for x in m.groups()[:5]) + (m.group(6),) for m in rows]

    def test_follow_dump(self):
        """A dump does not change: every tick shows the truth's totals."""
        t = truth('fbsd14')['malloc']['types']
        want = (len(t), sum(x['numallocs'] for x in t), sum(x['memuse_bytes'] for x in t))
        for lang, argv in variants('follow'):
            with self.subTest(lang=lang):
                rows = self.ticks(self.run_ok(argv + ['-w', '0.05', '-n', '3', K14, C14]))
                self.assertEqual([r[0] for r in rows], [1, 2, 3])
                for r in rows:
                    self.assertEqual(r[1:4], want)
                    self.assertEqual((r[4], r[5]), (0, '-'))

    def test_follow_live(self):
        """A raw image the fixture generator keeps changing (3000 allocations
        a second): after the first tick every tick sees new requests, and
        when no type left or came back the total grew by exactly them."""
        if shutil.which('gcc') is None:
            self.fail('gcc needed by fixtures/gen/live.sh') if not ALLOW_MISSING else \
                self.skipTest('SKIPPED: gcc missing')
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, 'live.raw')
            gen = subprocess.Popen(['bash', os.path.join(SRC, 'fixtures', 'gen', 'live.sh'),
                                    raw, '3000', '60'], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                for _ in range(600):
                    if os.path.exists(raw):
                        break
                    time.sleep(0.1)
                self.assertTrue(os.path.exists(raw), 'live.sh wrote no image')
                for lang, argv in variants('follow'):
                    with self.subTest(lang=lang):
                        rows = self.ticks(self.run_ok(argv + ['-r', '-w', '0.5', '-n', '4',
                                                              K14, raw]))
                        self.assertEqual(len(rows), 4)
                        self.assertEqual(rows[0][4], 0)
                        for prev, cur in zip(rows, rows[1:]):
                            self.assertGreater(cur[4], 0, rows)
                            self.assertNotEqual(cur[5], '-')
                            if cur[1] == prev[1]:
                                self.assertEqual(cur[2] - prev[2], cur[4], rows)
            finally:
                os.killpg(gen.pid, signal.SIGTERM)
                gen.wait()

    def test_write_gmon(self):
        """Byte for byte what `kvmstat gmon` writes, and GNU gprof reads the
        generator's ticks and call counts from it."""
        g = truth('fbsd14')['gprof']
        with tempfile.TemporaryDirectory() as d:
            ref = os.path.join(d, 'ref.out')
            self.run_ok([os.path.join(BUILD, 'analyzers', 'kvmstat'), '-N', K14, '-M', C14,
                         'gmon', '-o', ref])
            for lang, argv in variants('write_gmon'):
                with self.subTest(lang=lang):
                    out = os.path.join(d, lang + '.out')
                    self.run_ok(argv + [K14, C14, out])
                    with open(out, 'rb') as a, open(ref, 'rb') as b:
                        self.assertEqual(a.read(), b.read())
            if shutil.which('gprof') is None:
                if ALLOW_MISSING:
                    self.skipTest('SKIPPED: GNU gprof not installed')
                self.fail('GNU gprof not installed (apt-get install binutils)')
            flat = self.run_ok(['gprof', '-b', '-p', K14, os.path.join(d, 'C.out')])
            for f in g['functions']:
                calls = sum(a['count'] for a in g['arcs']
                            if a['callee'] == f['name'] and a['caller'] != f['name'])
                line = [ln for ln in flat.split('\n') if ln.split()[-1:] == [f['name']]]
                if not f['ticks'] and not calls:
                    continue
                self.assertEqual(len(line), 1, '%s not in gprof output:\n%s' % (f['name'], flat))
                cols = line[0].split()
                self.assertAlmostEqual(float(cols[2]), f['seconds'], delta=0.006, msg=f['name'])
                if calls:
                    self.assertEqual(int(cols[3]), calls, f['name'])


if __name__ == '__main__':
    unittest.main()
