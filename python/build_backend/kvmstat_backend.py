"""A PEP 517 build backend for the kvmstat Python module, on the standard
library alone (pip runs it offline): the wheel holds python/kvmstat as it
is, plus the dist-info pip needs; the sdist the files a wheel is built
from.  The project's metadata is pyproject.toml's [project] table."""
import base64
import hashlib
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, 'python', 'kvmstat')


def _project():
    with open(os.path.join(ROOT, 'pyproject.toml'), 'rb') as f:
        return tomllib.load(f)['project']


def _files():
    for d, dirs, files in os.walk(PKG):
        dirs[:] = sorted(x for x in dirs if x != '__pycache__')
        for f in sorted(files):
            if f.endswith(('.py', '.pyi')) or f == 'py.typed':
                full = os.path.join(d, f)
                yield full, os.path.relpath(full, os.path.dirname(PKG))


def _metadata(p):
    return ('Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n'
            'Requires-Python: %s\n' % (p['name'], p['version'], p['description'],
                                       p.get('requires-python', '>=3')))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return '%s,sha256=%s,%d' % (name, digest, len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    base = '%s-%s' % (p['name'], p['version'])
    name = base + '-py3-none-any.whl'
    info = base + '.dist-info/'
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), 'w',
                         zipfile.ZIP_DEFLATED) as z:
        for full, arc in _files():
            with open(full, 'rb') as f:
                data = f.read()
            z.writestr(arc, data)
            records.append(_record_line(arc, data))
        for fname, text in (('METADATA', _metadata(p)),
                            ('WHEEL', 'Wheel-Version: 1.0\nGenerator: kvmstat_backend\n'
                                      'Root-Is-Purelib: true\nTag: py3-none-any\n')):
            data = text.encode()
            z.writestr(info + fname, data)
            records.append(_record_line(info + fname, data))
        records.append(info + 'RECORD,,')
        z.writestr(info + 'RECORD', '\n'.join(records) + '\n')
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = '%s-%s' % (p['name'], p['version'])
    name = base + '.tar.gz'
    with tarfile.open(os.path.join(sdist_directory, name), 'w:gz') as t:
        t.add(os.path.join(ROOT, 'pyproject.toml'), base + '/pyproject.toml')
        t.add(os.path.join(ROOT, 'python', 'build_backend', 'kvmstat_backend.py'),
              base + '/python/build_backend/kvmstat_backend.py')
        for full, arc in _files():
            t.add(full, base + '/python/' + arc)
        info = tarfile.TarInfo(base + '/PKG-INFO')
        data = _metadata(p).encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name
