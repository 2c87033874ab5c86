"""The type stubs (python/kvmstat/*.pyi) declare every public name of the
module and of its helpers, and mypy accepts them and the Python examples
checked against them.  mypy is the oracle: without it the test fails."""
import ast
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get('KVS_SRCDIR') or os.path.dirname(os.path.dirname(HERE))
PY = os.path.join(SRC, 'python')
sys.path.insert(0, PY)

import kvmstat  # noqa: E402
from kvmstat.helpers import freebsd, linux  # noqa: E402


def declared(path):
    names = set()
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Name):
                    names.add(t.id)
    return names


class Stubs(unittest.TestCase):
    def test_every_public_name_declared(self):
        for mod, stub in ((kvmstat, 'kvmstat/__init__.pyi'),
                          (linux, 'kvmstat/helpers/linux.pyi'),
                          (freebsd, 'kvmstat/helpers/freebsd.pyi')):
            have = declared(os.path.join(PY, stub))
            missing = sorted(set(mod.__all__) - have)
            self.assertEqual(missing, [], '%s lacks %s' % (stub, missing))
            for n in mod.__all__:
                self.assertTrue(getattr(getattr(mod, n), '__doc__', None), '%s.%s has no docstring'
                                % (mod.__name__, n))

    def test_mypy_accepts_stubs_and_examples(self):
        mypy = shutil.which('mypy')
        self.assertIsNotNone(mypy, 'mypy is not installed (scripts/setup.sh installs it)')
        stubs = [os.path.join(PY, 'kvmstat', f) for f in ('__init__.pyi', '_object.pyi')]
        stubs += [os.path.join(PY, 'kvmstat', 'helpers', f) for f in ('linux.pyi', 'freebsd.pyi')]
        ex = os.path.join(SRC, 'examples', 'python')
        examples = [os.path.join(ex, f) for f in ('freebsd_ps.py', 'linux_dstate.py',
                                                 'malloc_grew.py')]
        env = dict(os.environ, MYPYPATH=PY)
        r = subprocess.run([mypy, '--no-error-summary', '--ignore-missing-imports',
                            '--cache-dir', '/dev/null'] + stubs + examples,
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == '__main__':
    unittest.main()
