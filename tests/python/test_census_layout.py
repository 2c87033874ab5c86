"""The census records' ctypes declarations (python/kvmstat/_census.py) laid
out as the C compiler lays out census.h's structs: census_layout (built from
the header with offsetof/sizeof) prints the compiler's figures."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.environ.get('KVS_SRCDIR', '.'), 'python'))
from kvmstat import _census  # noqa: E402

CLASSES = {
    'kvs_counter': _census._Counter, 'kvs_pzone': _census._PZone,
    'kvs_varea': _census._VArea, 'kvs_arena': _census._Arena,
    'kvs_slab_object': _census._SlabObject, 'kvs_whatis': _census._WhatIs,
    'kvs_pzone_pcp': _census._PZonePcp,
}


class Layout(unittest.TestCase):
    def test_ctypes_matches_compiler(self):
        exe = os.environ.get('KVS_CENSUS_LAYOUT')
        self.assertTrue(exe and os.path.exists(exe),
                        'KVS_CENSUS_LAYOUT (the census_layout program) is not set or missing')
        lines = subprocess.run([exe], check=True, capture_output=True,
                               text=True).stdout.split('\n')
        seen = set()
        nfields = 0
        for line in filter(None, lines):
            sname, field, off, size = line.split()
            self.assertIn(sname, CLASSES, 'census.h struct %s has no ctypes class' % sname)
            cls = CLASSES[sname]
            seen.add(sname)
            if field == '-':
                self.assertEqual(ctypes_sizeof(cls), int(size), 'sizeof(struct %s)' % sname)
                continue
            desc = getattr(cls, field, None)
            self.assertIsNotNone(desc, 'struct %s.%s missing in ctypes' % (sname, field))
            self.assertEqual(desc.offset, int(off), 'offset of %s.%s' % (sname, field))
            self.assertEqual(desc.size, int(size), 'size of %s.%s' % (sname, field))
            nfields += 1
        self.assertEqual(seen, set(CLASSES))
        # Every ctypes field is one the compiler knows.
        total = sum(len(c._fields_) for c in CLASSES.values())
        self.assertEqual(nfields, total)


def ctypes_sizeof(cls):
    import ctypes
    return ctypes.sizeof(cls)


if __name__ == '__main__':
    unittest.main()
