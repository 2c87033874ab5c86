"""kvmstat - read FreeBSD and Linux kernel crash dumps and live memory.

A thin ctypes binding of libkvmstat (standard library only):

    import kvmstat
    with kvmstat.open(core='vmcore.0', kernel='kernel') as k:
        for t in sorted(k.malloc_types(), key=lambda t: t.bytes, reverse=True):
            print(t.name, t.bytes, t.count, t.requests)
        mt = k.read_struct('malloc_type', k.symbol('M_DEVBUF'))
        print(k.read_string(mt.ks_shortdesc))

The shared library is looked for in $KVMSTAT_LIB (a file), then beside this
package (a build tree, an installed prefix), then by ctypes.util.find_library.
Errors raise kvmstat.Error, with the library's message, status and faulting
address.  What the library has to say to a person (a layout cache file it
could not use or save) is a kvmstat.KvmstatWarning through Python's warnings
module, not a line on stderr.  See kvmstat(3), libmemstat(3) and kvmprof(3) for the C API.
"""
import ctypes
import ctypes.util
import glob
import os
import warnings

__all__ = ['open', 'Kvmstat', 'Error', 'Struct', 'MemoryType', 'MemoryTypeList',
           'Symbol', 'TypeInfo', 'Member', 'Gmon', 'FlatFunction', 'Probe', 'ProfilProc',
           'KvmstatWarning', 'load_library', 'Counter', 'Zone', 'VmallocArea', 'Arena',
           'SlabObject', 'WhatIs']

_open = open                            # the builtin, before open() shadows it

# ----------------------------------------------------------------- library

KVS_O_RAW = 0x01
KVS_O_NOVERIFY = 0x02
KVS_O_KERNEL_ONLY = 0x04
KVS_O_NO_CACHE = 0x10
KVS_O_FORMAT_ONLY = 0x20
KVS_ERRBUF_SIZE = 1024

ALLOCATOR_MALLOC, ALLOCATOR_UMA, ALLOCATOR_SLAB, ALLOCATOR_ANY = 1, 2, 3, 255
_ALLOCATOR_NAMES = {ALLOCATOR_MALLOC: 'malloc', ALLOCATOR_UMA: 'uma', ALLOCATOR_SLAB: 'slab'}

KIND_NAMES = ['other', 'base', 'pointer', 'array', 'struct', 'union', 'enum',
              'function', 'void']
(KIND_OTHER, KIND_BASE, KIND_POINTER, KIND_ARRAY, KIND_STRUCT, KIND_UNION,
 KIND_ENUM, KIND_FUNCTION, KIND_VOID) = range(9)

_u64 = ctypes.c_uint64
_cp = ctypes.c_char_p
_vp = ctypes.c_void_p


class _TypeInfo(ctypes.Structure):
    _fields_ = [('offset', _u64), ('size', _u64), ('kind', ctypes.c_int),
                ('count', _u64), ('elem_size', _u64), ('elem_kind', ctypes.c_int),
                ('bit_size', ctypes.c_uint), ('bit_offset', ctypes.c_uint),
                ('type_name', _cp)]


class _MemberInfo(ctypes.Structure):
    _fields_ = [('name', _cp), ('offset', _u64), ('bit_offset', _u64),
                ('bit_size', ctypes.c_uint), ('size', _u64), ('type_name', _cp),
                ('kind', ctypes.c_int), ('depth', ctypes.c_uint)]


class _DumpInfo(ctypes.Structure):
    _fields_ = [('format', _cp), ('format_version', ctypes.c_uint),
                ('page_size', ctypes.c_uint), ('dumped_pages', _u64),
                ('source_bytes', _u64), ('live', ctypes.c_int), ('path', _cp),
                ('kernel', _cp), ('dwarf_version', ctypes.c_int)]


class _KernelInfo(ctypes.Structure):
    _fields_ = [('os', _cp), ('version', _cp), ('panic', _cp),
                ('ncpus', ctypes.c_int), ('maxid', ctypes.c_int), ('arch', _cp)]


class _Func(ctypes.Structure):
    _fields_ = [('name', _cp), ('addr', _u64), ('ticks', _u64), ('calls', _u64)]


class _Probe(ctypes.Structure):
    _fields_ = [('id', ctypes.c_uint32), ('provider', _cp), ('module', _cp),
                ('function', _cp), ('name', _cp), ('enabled', ctypes.c_int),
                ('is_profile', ctypes.c_int), ('kind', ctypes.c_int),
                ('interval_sbt', _u64), ('interval_ns', _u64), ('hz', ctypes.c_double),
                ('next_fire_ns', _u64), ('next_fire_percpu', ctypes.POINTER(_u64))]


class _Proc(ctypes.Structure):
    _fields_ = [('pid', ctypes.c_int), ('comm', ctypes.c_char * 20),
                ('pr_base', _u64), ('pr_size', _u64), ('pr_off', _u64),
                ('pr_scale', _u64)]


class _TypePeel(ctypes.Structure):
    _fields_ = [('name', _cp), ('target', _cp), ('encoding', ctypes.c_int)]


_MEMBER_CB = ctypes.CFUNCTYPE(ctypes.c_int, _vp, ctypes.POINTER(_MemberInfo))
_ENUM_CB = ctypes.CFUNCTYPE(ctypes.c_int, _vp, ctypes.c_char_p, ctypes.c_int64)
_NOTIFY_CB = ctypes.CFUNCTYPE(None, _vp, ctypes.c_char_p)

_PROTOS = {
    # kvmstat.h
    'kvs_open': (_vp, [_cp, _cp, ctypes.c_int, ctypes.c_char_p]),
    'kvs_open_status': (_vp, [_cp, _cp, ctypes.c_int, ctypes.c_char_p,
                              ctypes.POINTER(ctypes.c_int)]),
    'kvs_close': (None, [_vp]),
    'kvs_read': (ctypes.c_int, [_vp, _u64, _vp, ctypes.c_size_t]),
    'kvs_read_phys': (ctypes.c_int, [_vp, _u64, _vp, ctypes.c_size_t]),
    'kvs_kvtop': (ctypes.c_int, [_vp, _u64, ctypes.POINTER(_u64)]),
    'kvs_read_string': (ctypes.c_ssize_t, [_vp, _u64, ctypes.c_char_p, ctypes.c_size_t,
                                           ctypes.POINTER(ctypes.c_int)]),
    'kvs_geterr': (_cp, [_vp]),
    'kvs_errstatus': (ctypes.c_int, [_vp]),
    'kvs_fault_addr': (_u64, [_vp, ctypes.POINTER(ctypes.c_int)]),
    'kvs_status_str': (_cp, [ctypes.c_int]),
    'kvs_symbol': (ctypes.c_int, [_vp, _cp, ctypes.POINTER(_u64), ctypes.POINTER(_u64)]),
    'kvs_symbol_at': (_cp, [_vp, _u64, ctypes.POINTER(_u64)]),
    'kvs_type': (ctypes.c_int, [_vp, _cp, ctypes.POINTER(_TypeInfo)]),
    'kvs_member': (ctypes.c_int, [_vp, _cp, _cp, ctypes.POINTER(_TypeInfo)]),
    'kvs_has_member': (ctypes.c_int, [_vp, _cp, _cp]),
    'kvs_variable': (ctypes.c_int, [_vp, _cp, ctypes.POINTER(_TypeInfo)]),
    'kvs_type_members': (ctypes.c_int, [_vp, _cp, _MEMBER_CB, _vp]),
    'kvs_type_peel': (ctypes.c_int, [_vp, _cp, ctypes.POINTER(_TypePeel)]),
    'kvs_type_enumerators': (ctypes.c_int, [_vp, _cp, _ENUM_CB, _vp]),
    'kvs_type_constant': (ctypes.c_int, [_vp, _cp, ctypes.POINTER(ctypes.c_int64),
                                         ctypes.POINTER(_cp)]),
    'kvs_dumpinfo': (ctypes.c_int, [_vp, ctypes.POINTER(_DumpInfo)]),
    'kvs_add_module': (ctypes.c_int, [_vp, _cp]),
    'kvs_add_module_dir': (ctypes.c_int, [_vp, _cp]),
    'kvs_warnings': (ctypes.c_uint, [_vp, ctypes.POINTER(_cp)]),
    'kvs_set_notify': (None, [_vp, _NOTIFY_CB, _vp]),
    'kvs_kernel_info': (ctypes.c_int, [_vp, ctypes.POINTER(_KernelInfo)]),
    'kvs_msgbuf': (ctypes.c_int, [_vp, ctypes.POINTER(_vp), ctypes.POINTER(ctypes.c_size_t)]),
    # memstat.h
    'memstat_strerror': (_cp, [ctypes.c_int]),
    'memstat_mtl_alloc': (_vp, []),
    'memstat_mtl_first': (_vp, [_vp]),
    'memstat_mtl_next': (_vp, [_vp]),
    'memstat_mtl_free': (None, [_vp]),
    'memstat_mtl_geterror': (ctypes.c_int, [_vp]),
    'memstat_mtl_count': (ctypes.c_size_t, [_vp]),
    'memstat_mtl_sweep': (ctypes.c_int, [_vp]),
    'memstat_mtl_incomplete': (ctypes.c_int, [_vp]),
    'memstat_mtl_set_percpu': (None, [_vp, ctypes.c_int]),
    'memstat_mtl_malloc_zone_count': (ctypes.c_size_t, [_vp]),
    'memstat_mtl_malloc_zone_size': (ctypes.c_size_t, [_vp, ctypes.c_size_t]),
    'memstat_kvm_all': (ctypes.c_int, [_vp, _vp]),
    'memstat_kvm_malloc': (ctypes.c_int, [_vp, _vp]),
    'memstat_kvm_uma': (ctypes.c_int, [_vp, _vp]),
    'memstat_kvm_slab': (ctypes.c_int, [_vp, _vp]),
    'memstat_get_name': (_cp, [_vp]),
    'memstat_get_allocator': (ctypes.c_int, [_vp]),
    'memstat_get_vanished': (ctypes.c_int, [_vp]),
    'memstat_get_maxcpus': (ctypes.c_uint, [_vp]),
    'memstat_get_ndomains': (ctypes.c_uint, [_vp]),
    # kvmprof.h
    'kvmprof_gmon_read': (_vp, [_vp]),
    'kvmprof_gmon_free': (None, [_vp]),
    'kvmprof_gmon_state': (ctypes.c_int, [_vp]),
    'kvmprof_gmon_lowpc': (_u64, [_vp]),
    'kvmprof_gmon_highpc': (_u64, [_vp]),
    'kvmprof_gmon_profrate': (ctypes.c_int, [_vp]),
    'kvmprof_gmon_counter_bits': (ctypes.c_int, [_vp]),
    'kvmprof_gmon_nbins': (ctypes.c_size_t, [_vp]),
    'kvmprof_gmon_binsize': (_u64, [_vp]),
    'kvmprof_gmon_bin': (_u64, [_vp, ctypes.c_size_t]),
    'kvmprof_gmon_narcs': (ctypes.c_size_t, [_vp]),
    'kvmprof_gmon_arc': (None, [_vp, ctypes.c_size_t, ctypes.POINTER(_u64),
                                ctypes.POINTER(_u64), ctypes.POINTER(ctypes.c_int64)]),
    'kvmprof_gmon_write': (ctypes.c_int, [_vp, _cp, ctypes.c_int]),
    'kvmprof_gmon_flat': (_vp, [_vp, _vp]),
    'kvmprof_flat_free': (None, [_vp]),
    'kvmprof_flat_count': (ctypes.c_size_t, [_vp]),
    'kvmprof_flat_get': (ctypes.POINTER(_Func), [_vp, ctypes.c_size_t]),
    'kvmprof_flat_total': (_u64, [_vp]),
    'kvmprof_flat_unknown': (_u64, [_vp]),
    'kvmprof_probes_read': (_vp, [_vp, ctypes.c_int]),
    'kvmprof_probes_count': (ctypes.c_size_t, [_vp]),
    'kvmprof_probes_get': (ctypes.POINTER(_Probe), [_vp, ctypes.c_size_t]),
    'kvmprof_probes_maxcpus': (ctypes.c_uint, [_vp]),
    'kvmprof_probes_free': (None, [_vp]),
    'kvmprof_profil_read': (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.POINTER(_Proc)),
                                           ctypes.POINTER(ctypes.c_size_t)]),
}

# memstat_get_flags(): what a partial dump did not hold of a row.
NAME_UNREADABLE = 0x2
COUNTS_UNREADABLE = 0x4

# memstat_get_X(mtp) -> uint64 accessors, and memstat_get_percpu_X(mtp, cpu).
_U64_ACCESSORS = ['countlimit', 'byteslimit', 'sizemask', 'size', 'rsize', 'memalloced',
                  'memfreed', 'numallocs', 'numfrees', 'bytes', 'count', 'free', 'failures',
                  'sleeps', 'xdomain', 'zonefree', 'kegfree', 'kaddr', 'maxused',
                  'slab_objperslab', 'slab_pagesperslab', 'slab_numslabs',
                  'slab_numobjs', 'slab_active', 'slab_flags', 'flags']
_PERCPU_ACCESSORS = ['memalloced', 'memfreed', 'numallocs', 'numfrees', 'sizemask', 'free']
for _n in _U64_ACCESSORS:
    _PROTOS['memstat_get_' + _n] = (_u64, [_vp])
for _n in _PERCPU_ACCESSORS:
    _PROTOS['memstat_get_percpu_' + _n] = (_u64, [_vp, ctypes.c_int])
for _n in ('zonefree', 'kegfree'):
    _PROTOS['memstat_get_domain_' + _n] = (_u64, [_vp, ctypes.c_uint])

from . import _census                   # noqa: E402  (the census's records)
from ._census import (Counter, Zone, VmallocArea, Arena, SlabObject,  # noqa: E402
                      WhatIs)
_PROTOS.update(_census.PROTOS)

_lib = None
_libc = None


def _candidates():
    env = os.environ.get('KVMSTAT_LIB')
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, 'libkvmstat.so*')))
    # Installed: <prefix>/lib/python3/dist-packages/kvmstat, the library in
    # <prefix>/lib, <prefix>/lib64 or <prefix>/lib/<multiarch>.
    d = here
    for _ in range(5):
        d = os.path.dirname(d)
        if os.path.basename(d) in ('lib', 'lib64'):
            prefix = os.path.dirname(d)
            for libdir in ('lib', 'lib64', 'lib/*'):
                yield from sorted(glob.glob(os.path.join(prefix, libdir, 'libkvmstat.so.0')))
            break
    # A source tree with the usual build directory.
    src = os.path.dirname(os.path.dirname(here))
    yield os.path.join(src, 'build', 'libkvmstat', 'libkvmstat.so.0')
    found = ctypes.util.find_library('kvmstat')
    if found:
        yield found


def load_library():
    """The libkvmstat CDLL, loaded once (see the module's docstring)."""
    global _lib, _libc
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            tried.append('%s (%s)' % (path, e))
            continue
        for name, (res, args) in _PROTOS.items():
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        # free() as the process resolves it (a preloaded allocator, such as
        # ASan's, first), the one the library's malloc() pairs with.
        _libc = ctypes.CDLL(None)
        _libc.free.argtypes = [_vp]
        _libc.free.restype = None
        _lib = lib
        return lib
    raise OSError('libkvmstat not found (set KVMSTAT_LIB to the library file); tried: '
                  + (', '.join(tried) or 'nothing'))


def _s(b):
    """C string to str, lossless for any byte (surrogateescape)."""
    return None if b is None else b.decode('utf-8', 'surrogateescape')


def _b(s):
    return None if s is None else os.fsencode(s) if not isinstance(s, bytes) else s


# ------------------------------------------------------------------ errors

class Error(Exception):
    """A libkvmstat failure: str(e) is its message chain; .code the
    kvs_status_t value (KVS_E_UNMAPPED...) and .status its text
    (kvs_status_str); .fault_addr the faulting address of a failed read,
    or None."""

    def __init__(self, message, status=None, fault_addr=None, code=None):
        super().__init__(message)
        self.status = status
        self.fault_addr = fault_addr
        self.code = code


class KvmstatWarning(UserWarning):
    """What libkvmstat says to a person rather than to the program (today:
    a layout cache file it could not use or save; the answers are right
    either way), issued with warnings.warn, so the usual filters apply."""


def _notify(_arg, msg):
    # A filter that turns it into an error cannot raise through C: ctypes
    # prints that exception instead.
    warnings.warn(_s(msg), KvmstatWarning, stacklevel=2)


_NOTIFY = _NOTIFY_CB(_notify)           # one for every handle, never freed


# ------------------------------------------------------------- small types

class Symbol(int):
    """A symbol's address (an int) with .name and .size."""

    def __new__(cls, name, addr, size):
        self = super().__new__(cls, addr)
        self.name, self.addr, self.size = name, addr, size
        return self

    def __repr__(self):
        return 'Symbol(%r, 0x%x, size=%d)' % (self.name, self.addr, self.size)


class _Record:
    __slots__ = ()

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, ', '.join(
            '%s=%r' % (k, getattr(self, k)) for k in self.__slots__))

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)


class TypeInfo(_Record):
    """A type or member: offset, size, kind ('struct', 'pointer'...), count
    and elem_size/elem_kind (arrays; pointers: the target), bit_size and
    bit_offset (bit-fields), type_name."""
    __slots__ = ('offset', 'size', 'kind', 'count', 'elem_size', 'elem_kind',
                 'bit_size', 'bit_offset', 'type_name')


class Member(_Record):
    """One member of kvs_type_members(): name (None when anonymous), offset,
    bit_offset, bit_size, size, type_name, kind, depth."""
    __slots__ = ('name', 'offset', 'bit_offset', 'bit_size', 'size', 'type_name',
                 'kind', 'depth')


class DumpInfo(_Record):
    __slots__ = ('format', 'format_version', 'page_size', 'dumped_pages',
                 'source_bytes', 'live', 'path', 'kernel', 'dwarf_version')


class KernelInfo(_Record):
    __slots__ = ('os', 'version', 'panic', 'ncpus', 'maxid', 'arch')


class FlatFunction(_Record):
    """A function of the flat profile: name, address, ticks, calls."""
    __slots__ = ('name', 'addr', 'ticks', 'calls')


class Probe(_Record):
    """A DTrace probe; next_fire_percpu maps CPU -> ns for enabled profile-N
    probes."""
    __slots__ = ('id', 'provider', 'module', 'function', 'name', 'enabled',
                 'is_profile', 'kind', 'interval_sbt', 'interval_ns', 'hz',
                 'next_fire_ns', 'next_fire_percpu')


class ProfilProc(_Record):
    """A process with profil(2) on: pid, comm and its buffer (pr_*)."""
    __slots__ = ('pid', 'comm', 'pr_base', 'pr_size', 'pr_off', 'pr_scale')


def _typeinfo(ti):
    return TypeInfo(offset=ti.offset, size=ti.size, kind=KIND_NAMES[ti.kind],
                    count=ti.count, elem_size=ti.elem_size,
                    elem_kind=KIND_NAMES[ti.elem_kind], bit_size=ti.bit_size,
                    bit_offset=ti.bit_offset, type_name=_s(ti.type_name))


# ------------------------------------------------------------ the handle

def open(core=None, kernel=None, raw=False, verify=True, kernel_only=False,
         modules=(), module_dir=None, no_kernel=False):
    """Open kernel (an ELF image with symbols) and core (a crash dump, a raw
    image with raw=True, or None for live memory).  kernel may be None when
    the dump carries what its kernel needs (a Linux dump with VMCOREINFO:
    kallsyms and BTF in memory), or with no_kernel=True, which opens the
    dump for its bytes alone (dump_info, read_phys).  kernel_only=True
    opens the kernel alone, for symbol and type queries.  The result is a
    context manager; it is closed on exit.  A failure raises Error with its
    .code and .status."""
    return Kvmstat(core=core, kernel=kernel, raw=raw, verify=verify,
                   kernel_only=kernel_only, modules=modules, module_dir=module_dir,
                   no_kernel=no_kernel)


class Kvmstat:
    """A kvs_t handle.  Use from one thread at a time."""

    def __init__(self, core=None, kernel=None, raw=False, verify=True,
                 kernel_only=False, modules=(), module_dir=None, no_kernel=False):
        if kernel_only and kernel is None:
            raise ValueError('kernel_only needs a kernel (the ELF image to read)')
        if no_kernel and (kernel is not None or core is None):
            raise ValueError('no_kernel opens a dump (core) for its bytes alone, without a kernel')
        self._lib = load_library()
        flags = ((KVS_O_RAW if raw else 0) | (0 if verify else KVS_O_NOVERIFY)
                 | (KVS_O_KERNEL_ONLY if kernel_only else 0)
                 | (KVS_O_FORMAT_ONLY if no_kernel else 0))
        err = ctypes.create_string_buffer(KVS_ERRBUF_SIZE)
        st = ctypes.c_int(0)
        self._kd = self._lib.kvs_open_status(_b(kernel), _b(core), flags, err,
                                             ctypes.byref(st))
        if not self._kd:
            raise Error(_s(err.value), _s(self._lib.kvs_status_str(st.value)), None,
                        st.value)
        self._lib.kvs_set_notify(self._kd, _NOTIFY, None)
        self.kernel, self.core = kernel, core
        try:
            for m in modules:
                self.add_module(m)
            if module_dir is not None:
                self.add_module_dir(module_dir)
        except Error:
            self.close()
            raise

    # -- lifetime
    def close(self):
        """Close the handle (also on exit from a with block)."""
        if getattr(self, '_kd', None):
            self._lib.kvs_close(self._kd)
            self._kd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        self.close()

    def _h(self):
        if not self._kd:
            raise ValueError('kvmstat handle is closed')
        return self._kd

    def _error(self):
        kd = self._kd
        valid = ctypes.c_int(0)
        fa = self._lib.kvs_fault_addr(kd, ctypes.byref(valid))
        st = self._lib.kvs_errstatus(kd)
        return Error(_s(self._lib.kvs_geterr(kd)), _s(self._lib.kvs_status_str(st)),
                     fa if valid.value else None, st)

    # -- memory
    def read(self, addr, n):
        """n bytes at kernel virtual address addr."""
        buf = ctypes.create_string_buffer(n)
        if self._lib.kvs_read(self._h(), int(addr), buf, n) != 0:
            raise self._error()
        return buf.raw

    def read_phys(self, addr, n):
        """n bytes at physical address addr."""
        buf = ctypes.create_string_buffer(n)
        if self._lib.kvs_read_phys(self._h(), int(addr), buf, n) != 0:
            raise self._error()
        return buf.raw

    def kvtop(self, addr):
        """The physical address of kernel virtual address addr."""
        pa = _u64()
        if self._lib.kvs_kvtop(self._h(), int(addr), ctypes.byref(pa)) != 0:
            raise self._error()
        return pa.value

    def read_int(self, addr, size=8, signed=False):
        """An integer of size bytes at addr (little-endian)."""
        return int.from_bytes(self.read(addr, size), 'little', signed=signed)

    def read_pointer(self, addr):
        """The pointer (8 bytes) at addr."""
        return self.read_int(addr, 8)

    def read_string(self, addr, maxlen=4096):
        """The NUL-terminated string at addr (at most maxlen - 1 bytes)."""
        buf = ctypes.create_string_buffer(maxlen)
        if self._lib.kvs_read_string(self._h(), int(addr), buf, maxlen, None) < 0:
            raise self._error()
        return _s(buf.value)

    # -- symbols
    def symbol(self, name):
        """The symbol's address, as an int with .name and .size (Symbol)."""
        addr, size = _u64(), _u64()
        if self._lib.kvs_symbol(self._h(), _b(name), ctypes.byref(addr), ctypes.byref(size)) != 0:
            raise self._error()
        return Symbol(name, addr.value, size.value)

    def symbol_at(self, addr):
        """(name, offset) of the function or object symbol holding addr, or None."""
        off = _u64()
        name = self._lib.kvs_symbol_at(self._h(), int(addr), ctypes.byref(off))
        return None if name is None else (_s(name), off.value)

    # -- types
    def _resolve_type(self, name):
        """name as given, else 'struct name', else 'union name'."""
        ti = _TypeInfo()
        for cand in (name, 'struct ' + name, 'union ' + name):
            if self._lib.kvs_type(self._h(), _b(cand), ctypes.byref(ti)) == 0:
                return cand, ti
            if ' ' in name:
                break
        raise self._error()

    def type(self, name):
        """TypeInfo of a type: 'struct x', 'union x', 'enum x', a typedef, or a
        bare struct name."""
        return _typeinfo(self._resolve_type(name)[1])

    def member(self, type, path):
        """TypeInfo of member path ('a.b.c') of type; offset from the type's start."""
        tname = self._resolve_type(type)[0]
        ti = _TypeInfo()
        if self._lib.kvs_member(self._h(), _b(tname), _b(path), ctypes.byref(ti)) != 0:
            raise self._error()
        return _typeinfo(ti)

    def has_member(self, type, path):
        """Whether type has member path."""
        tname = self._resolve_type(type)[0]
        r = self._lib.kvs_has_member(self._h(), _b(tname), _b(path))
        if r < 0:
            raise self._error()
        return bool(r)

    def variable(self, name):
        """TypeInfo of a global variable."""
        ti = _TypeInfo()
        if self._lib.kvs_variable(self._h(), _b(name), ctypes.byref(ti)) != 0:
            raise self._error()
        return _typeinfo(ti)

    def members(self, type):
        """The members of a struct or union, in order, as ptype /o lists them."""
        tname = self._resolve_type(type)[0]
        out = []

        def cb(_arg, mp):
            m = mp.contents
            out.append(Member(name=_s(m.name), offset=m.offset, bit_offset=m.bit_offset,
                              bit_size=m.bit_size, size=m.size, type_name=_s(m.type_name),
                              kind=KIND_NAMES[m.kind], depth=m.depth))
            return 0
        if self._lib.kvs_type_members(self._h(), _b(tname), _MEMBER_CB(cb), None) != 0:
            raise self._error()
        return out

    def read_struct(self, type, addr):
        """The object of type at addr, its members readable by name:
        k.read_struct('kmem_cache', addr).size."""
        tname, ti = self._resolve_type(type)
        return Struct(self, tname, int(addr), self.read(addr, ti.size))

    # -- information
    def dumpinfo(self):
        """The dump file: format, page size, pages, size, path (DumpInfo)."""
        di = _DumpInfo()
        if self._lib.kvs_dumpinfo(self._h(), ctypes.byref(di)) != 0:
            raise self._error()
        return DumpInfo(format=_s(di.format), format_version=di.format_version,
                        page_size=di.page_size, dumped_pages=di.dumped_pages,
                        source_bytes=di.source_bytes, live=bool(di.live), path=_s(di.path),
                        kernel=_s(di.kernel), dwarf_version=di.dwarf_version)

    def kernel_info(self):
        """What the kernel says about itself: os, version, panic, CPUs (KernelInfo)."""
        ki = _KernelInfo()
        if self._lib.kvs_kernel_info(self._h(), ctypes.byref(ki)) != 0:
            raise self._error()
        return KernelInfo(os=_s(ki.os), version=_s(ki.version), panic=_s(ki.panic),
                          ncpus=ki.ncpus, maxid=ki.maxid, arch=_s(ki.arch))

    def msgbuf(self):
        """The kernel message buffer as text."""
        text, n = _vp(), ctypes.c_size_t()
        if self._lib.kvs_msgbuf(self._h(), ctypes.byref(text), ctypes.byref(n)) != 0:
            raise self._error()
        try:
            return _s(ctypes.string_at(text, n.value))
        finally:
            _libc.free(text)

    def warnings(self):
        """(count, first message) of the non-fatal problems of the last walk."""
        first = _cp()
        n = self._lib.kvs_warnings(self._h(), ctypes.byref(first))
        return n, _s(first.value)

    def add_module(self, path):
        """Add the symbols and types of a loaded module file."""
        n = self._lib.kvs_add_module(self._h(), _b(path))
        if n < 0:
            raise self._error()
        return n

    def add_module_dir(self, path):
        """Add every loaded module found in a directory."""
        n = self._lib.kvs_add_module_dir(self._h(), _b(path))
        if n < 0:
            raise self._error()
        return n

    # -- allocators
    # -- the memory census (census.h)
    def meminfo(self):
        """The kernel's memory summary as Counter records, in the order the
        kernel's own report prints them: Linux /proc/meminfo's lines (KiB;
        HugePages_* as counts), FreeBSD vm_cnt's counters as vmstat -s names
        them (group 'vm'), top's Mem: queues ('queues', KiB) and the malloc(9)
        and UMA totals ('allocators').  .complete is False when a value was
        not in the dump (that Counter says unreadable, and why)."""
        return _census.meminfo(self)

    def zones(self):
        """The page allocator's zones as Zone records: Linux every struct
        zone of every node (buddyinfo's and zoneinfo's figures); FreeBSD every
        free list of every domain (vm.phys_free's)."""
        return _census.zones(self)

    def vmalloc(self):
        """The kernel's vmalloc areas as VmallocArea records, as
        /proc/vmallocinfo lists them (Linux)."""
        return _census.vmalloc(self)

    def arenas(self):
        """The kernel's vmem(9) arenas as Arena records (FreeBSD)."""
        return _census.arenas(self)

    def slab_objects(self, cache):
        """Every object of the slab cache (FreeBSD: UMA zone) named cache,
        as SlabObject records with their state ('allocated', 'free (cpu)'...)."""
        return _census.slab_objects(self, cache)

    def whatis(self, addr):
        """What holds kernel address addr, as a WhatIs record: kind 'slab'
        (cache, object, offset, allocated, state), 'page' (pfn, page, flags),
        'vmalloc', 'symbol', 'stack' (pid, comm) or 'unknown'."""
        return _census.whatis(self, addr)

    def memory_type_list(self, allocator='all', percpu=True):
        """A refreshed MemoryTypeList of 'all', 'malloc', 'uma' or 'slab'."""
        lst = MemoryTypeList(self, allocator, percpu)
        lst.refresh()
        return lst

    def malloc_types(self):
        """FreeBSD malloc(9) types (MemoryType), in the kernel's list order."""
        return list(self.memory_type_list('malloc'))

    def uma_zones(self):
        """FreeBSD UMA zones (MemoryType)."""
        return list(self.memory_type_list('uma'))

    def slab_caches(self):
        """Linux SLUB caches (MemoryType)."""
        return list(self.memory_type_list('slab'))

    # -- profiling
    def gmon(self):
        """The kernel's gprof state (_gmonparam) as a Gmon."""
        g = self._lib.kvmprof_gmon_read(self._h())
        if not g:
            raise self._error()
        return Gmon(self, g)

    def probes(self, all=False):
        """DTrace probes (profile provider only unless all); add dtrace.ko and
        profile.ko first (add_module, module_dir=)."""
        lib = self._lib
        p = lib.kvmprof_probes_read(self._h(), 1 if all else 0)
        if not p:
            raise self._error()
        try:
            out = []
            maxcpus = lib.kvmprof_probes_maxcpus(p)
            for i in range(lib.kvmprof_probes_count(p)):
                r = lib.kvmprof_probes_get(p, i).contents
                per = {}
                if r.next_fire_percpu:
                    per = {c: r.next_fire_percpu[c] for c in range(maxcpus)
                           if r.next_fire_percpu[c]}
                out.append(Probe(id=r.id, provider=_s(r.provider), module=_s(r.module),
                                 function=_s(r.function), name=_s(r.name),
                                 enabled=bool(r.enabled), is_profile=bool(r.is_profile),
                                 kind=('profile', 'tick')[r.kind] if r.is_profile else None,
                                 interval_sbt=r.interval_sbt, interval_ns=r.interval_ns,
                                 hz=r.hz, next_fire_ns=r.next_fire_ns, next_fire_percpu=per))
            return out
        finally:
            lib.kvmprof_probes_free(p)

    def profil(self):
        """Processes with profil(2) enabled."""
        arr, n = ctypes.POINTER(_Proc)(), ctypes.c_size_t()
        if self._lib.kvmprof_profil_read(self._h(), ctypes.byref(arr), ctypes.byref(n)) != 0:
            raise self._error()
        try:
            return [ProfilProc(pid=p.pid, comm=_s(p.comm), pr_base=p.pr_base,
                               pr_size=p.pr_size, pr_off=p.pr_off, pr_scale=p.pr_scale)
                    for p in arr[:n.value]]
        finally:
            _libc.free(ctypes.cast(arr, _vp))


# ------------------------------------------------------------ structures

_SIGNED = {'char', 'signed char', 'short', 'short int', 'int', 'long', 'long int',
           'long long', 'long long int', 'ssize_t', 'off_t', 'time_t', 'intptr_t',
           'ptrdiff_t', 'int8_t', 'int16_t', 'int32_t', 'int64_t', 's8', 's16', 's32',
           's64', '__s8', '__s16', '__s32', '__s64'}


def _is_signed(type_name):
    t = (type_name or '').replace('const ', '').replace('volatile ', '').strip()
    return t in _SIGNED or t.startswith('signed ')


class Struct:
    """A kernel object read by Kvmstat.read_struct.  Members are attributes
    (s.ks_next) or items (s['ks_mti.mti_stats']): integers (pointers too),
    strings for char arrays, lists for other arrays, Struct views for
    struct and union members.  The object's own data are underscored so they
    cannot hide a member: _kaddr, _type, _size, _bytes, _members(),
    _deref(name), _asdict()."""

    def __init__(self, k, tname, kaddr, data, prefix=''):
        self.__dict__.update(_k=k, _type=tname, _kaddr=kaddr, _bytes=data,
                             _prefix=prefix, _cache={})

    @property
    def _size(self):
        return len(self._bytes)

    def _info(self, name):
        path = self._prefix + name
        ti = self._cache.get(path)
        if ti is None:
            ti = self._k.member(self._type, path)
            if self._prefix:
                base = self._k.member(self._type, self._prefix[:-1]).offset
                ti.offset -= base
            self._cache[path] = ti
        return ti

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        try:
            return self[name]
        except Error as e:
            raise AttributeError('%s has no member %s (%s)' % (self._type, name, e)) from None

    def __setattr__(self, name, value):
        raise AttributeError('kernel objects are read-only')

    def __getitem__(self, path):
        ti = self._info(path)
        return self._decode(path, ti)

    def __dir__(self):
        return [m.name for m in self._members() if m.name]

    def _decode(self, path, ti):
        data, off = self._bytes, ti.offset
        if ti.bit_size:
            nbytes = (ti.bit_offset + ti.bit_size + 7) // 8
            v = int.from_bytes(data[off:off + nbytes], 'little') >> ti.bit_offset
            v &= (1 << ti.bit_size) - 1
            if _is_signed(ti.type_name) and v >> (ti.bit_size - 1):
                v -= 1 << ti.bit_size
            return v
        if ti.kind in ('base', 'enum', 'pointer'):
            if ti.kind == 'base' and ti.type_name in ('float', 'double'):
                import struct as _st
                return _st.unpack('<' + 'fd'[ti.size == 8], data[off:off + ti.size])[0]
            if ti.kind == 'base' and ti.type_name in ('_Bool', 'bool'):
                return bool(data[off])
            return int.from_bytes(data[off:off + ti.size], 'little',
                                  signed=ti.kind != 'pointer' and _is_signed(ti.type_name))
        if ti.kind in ('struct', 'union'):
            return _SubStruct(self, path, ti)
        if ti.kind == 'array':
            if ti.count == 0:
                return self._kaddr + off             # flexible array: its address
            chunk = data[off:off + ti.size]
            es = ti.elem_size or (ti.size // ti.count)
            elem = (ti.type_name or '').split('[')[0].strip()
            if ti.elem_kind == 'base' and es == 1 and 'char' in elem:
                return _s(chunk.split(b'\0', 1)[0])
            if ti.elem_kind in ('base', 'enum', 'pointer'):
                sg = ti.elem_kind != 'pointer' and _is_signed(elem)
                return [int.from_bytes(chunk[i * es:(i + 1) * es], 'little', signed=sg)
                        for i in range(ti.count)]
            if ti.elem_kind in ('struct', 'union'):
                return [Struct(self._k, elem, self._kaddr + off + i * es,
                               chunk[i * es:(i + 1) * es]) for i in range(ti.count)]
        return data[off:off + ti.size]

    def _members(self):
        """Members of this object's type (for a nested view, of its type)."""
        return self._k.members(self._type if not self._prefix
                               else self._k.member(self._type, self._prefix[:-1]).type_name)

    def _deref(self, name, type=None):
        """The Struct a pointer member points to (type: its target type,
        by default from the member's declared type)."""
        ti = self._info(name)
        if ti.kind != 'pointer':
            raise TypeError('%s is not a pointer (%s)' % (name, ti.type_name))
        tgt = type or ti.type_name.rstrip().rstrip('*').strip()
        addr = self[name]
        if addr == 0:
            return None
        return self._k.read_struct(tgt, addr)

    def _asdict(self):
        out = {}
        for m in self._members():
            if m.name and m.depth == 0:
                v = getattr(self, m.name)
                out[m.name] = v._asdict() if isinstance(v, Struct) else v
        return out

    def __repr__(self):
        return '<%s at 0x%x>' % (self._type, self._kaddr)


class _SubStruct(Struct):
    """A struct or union member, viewed inside its outer object's bytes."""

    def __init__(self, outer, path, ti):
        Struct.__init__(self, outer._k, outer._type, outer._kaddr + ti.offset,
                        outer._bytes[ti.offset:ti.offset + ti.size],
                        outer._prefix + path + '.')
        self.__dict__['_member_type'] = ti.type_name

    def __repr__(self):
        return '<%s at 0x%x>' % (self._member_type, self._kaddr)


# -------------------------------------------------------- memory types

class MemoryType:
    """One entry of a MemoryTypeList (a malloc type, UMA zone or slab
    cache).  Values are those of the list's last refresh."""

    def __init__(self, lst, mtp):
        self._list, self._mtp = lst, mtp

    def _get(self, what):
        self._list._check()
        return getattr(self._list._lib, 'memstat_get_' + what)(self._mtp)

    @property
    def name(self):
        return _s(self._get('name'))

    @property
    def allocator(self):
        """'malloc', 'uma' or 'slab'."""
        return _ALLOCATOR_NAMES.get(self._get('allocator'), 'unknown')

    @property
    def requests(self):
        """Allocations ever made (numallocs)."""
        return self._get('numallocs')

    @property
    def vanished(self):
        return bool(self._get('vanished'))

    @property
    def name_unreadable(self):
        """A partial dump: the last refresh could not read the name (flags
        has NAME_UNREADABLE; name is '')."""
        return bool(self.flags & NAME_UNREADABLE)

    @property
    def counts_unreadable(self):
        """A partial dump: the last refresh could not read the counts
        (flags has COUNTS_UNREADABLE; they read 0, not known)."""
        return bool(self.flags & COUNTS_UNREADABLE)

    @property
    def maxcpus(self):
        return self._get('maxcpus')

    @property
    def ndomains(self):
        return self._get('ndomains')

    @property
    def sizes(self):
        """malloc types: the malloc(9) zone sizes used (from the size mask)."""
        lst, mask = self._list, self.sizemask
        return [lst._zone_size(i) for i in range(lst._zone_count()) if mask >> i & 1]

    def percpu(self, cpu):
        """This CPU's counters, as a dict; IndexError for a CPU the list
        does not hold (0 <= cpu < maxcpus)."""
        lib = self._list._lib
        self._list._check()
        if not isinstance(cpu, int) or not 0 <= cpu < self.maxcpus:
            raise IndexError('cpu %r: the list holds CPUs 0 to %d' % (cpu, self.maxcpus - 1))
        return {n: getattr(lib, 'memstat_get_percpu_' + n)(self._mtp, cpu)
                for n in _PERCPU_ACCESSORS}

    def domain(self, d):
        """UMA: this memory domain's zone-cached and keg-free items;
        IndexError for a domain the zone does not have."""
        lib = self._list._lib
        self._list._check()
        if not isinstance(d, int) or not 0 <= d < self.ndomains:
            raise IndexError('domain %r: the entry has %d domains' % (d, self.ndomains))
        return {'zonefree': lib.memstat_get_domain_zonefree(self._mtp, d),
                'kegfree': lib.memstat_get_domain_kegfree(self._mtp, d)}

    def __repr__(self):
        return '<%s %r at 0x%x: %d bytes, %d in use, %d requests>' % (
            self.allocator, self.name, self.kaddr, self.bytes, self.count, self.requests)


def _accessor(n):
    return property(lambda self: self._get(n), doc='memstat_get_%s()' % n)


for _n in _U64_ACCESSORS:
    setattr(MemoryType, _n, _accessor(_n))


class MemoryTypeList:
    """libmemstat's memory_type_list: entries keep their identity (the same
    Python object) across refresh(); new kernel objects are added, ones gone
    are marked .vanished until sweep()."""

    _FILL = {'all': 'memstat_kvm_all', 'malloc': 'memstat_kvm_malloc',
             'uma': 'memstat_kvm_uma', 'slab': 'memstat_kvm_slab'}

    def __init__(self, k, allocator='all', percpu=True):
        if allocator not in self._FILL:
            raise ValueError('allocator must be one of %s' % ', '.join(self._FILL))
        self._k, self._lib, self.allocator = k, k._lib, allocator
        self._l = self._lib.memstat_mtl_alloc()
        if not self._l:
            raise MemoryError('memstat_mtl_alloc')
        self._lib.memstat_mtl_set_percpu(self._l, 1 if percpu else 0)
        self._entries = {}

    def _check(self):
        if not self._l:
            raise ValueError('memory type list is freed')

    def refresh(self, handle=None):
        """Read the allocator(s) again, from the list's handle or another one
        (a later dump of the same system).  On failure raises Error and the
        entries keep their previous values."""
        self._check()
        k = handle or self._k
        if getattr(self._lib, self._FILL[self.allocator])(self._l, k._h()) != 0:
            code = self._lib.memstat_mtl_geterror(self._l)
            e = k._error()
            # The handle's message says what failed; the list's own errors
            # (out of memory, a version it does not read) stand alone.
            msg = str(e) if str(e) else _s(self._lib.memstat_strerror(code))
            raise Error(msg, e.status, e.fault_addr, e.code)
        return self

    @property
    def incomplete(self):
        """The last refresh of some allocator could not follow its kernel
        list to the end (a partial dump): the rows past the cut are missing
        (memstat_mtl_incomplete)."""
        self._check()
        return bool(self._lib.memstat_mtl_incomplete(self._l))

    def sweep(self):
        """Drop the vanished entries; returns how many."""
        self._check()
        alive = set()
        n = self._lib.memstat_mtl_sweep(self._l)
        p = self._lib.memstat_mtl_first(self._l)
        while p:
            alive.add(p)
            p = self._lib.memstat_mtl_next(p)
        self._entries = {p: e for p, e in self._entries.items() if p in alive}
        return n

    def __iter__(self):
        self._check()
        p = self._lib.memstat_mtl_first(self._l)
        out = []
        while p:
            e = self._entries.get(p)
            if e is None:
                e = self._entries[p] = MemoryType(self, p)
            out.append(e)
            p = self._lib.memstat_mtl_next(p)
        return iter(out)

    def __len__(self):
        self._check()
        return self._lib.memstat_mtl_count(self._l)

    def find(self, name, allocator=None):
        """The entry named name (of allocator 'malloc', 'uma', 'slab'), or None."""
        for e in self:
            if e.name == name and (allocator is None or e.allocator == allocator):
                return e
        return None

    def _zone_count(self):
        return self._lib.memstat_mtl_malloc_zone_count(self._l)

    def _zone_size(self, i):
        return self._lib.memstat_mtl_malloc_zone_size(self._l, i)

    def free(self):
        """Free what the library holds for it (also when collected)."""
        if getattr(self, '_l', None):
            self._lib.memstat_mtl_free(self._l)
            self._l = None

    def __del__(self):
        self.free()


# ------------------------------------------------------------ profiling

class Gmon:
    """The kernel's gprof buffers (kvmprof_gmon_*)."""

    STATES = ('on', 'busy', 'error', 'off')

    def __init__(self, k, g):
        self._k, self._lib, self._g = k, k._lib, g
        lib = self._lib
        self.state = lib.kvmprof_gmon_state(g)
        self.lowpc = lib.kvmprof_gmon_lowpc(g)
        self.highpc = lib.kvmprof_gmon_highpc(g)
        self.profrate = lib.kvmprof_gmon_profrate(g)
        self.counter_bits = lib.kvmprof_gmon_counter_bits(g)
        self.binsize = lib.kvmprof_gmon_binsize(g)

    @property
    def bins(self):
        lib, g = self._lib, self._g
        return [lib.kvmprof_gmon_bin(g, i) for i in range(lib.kvmprof_gmon_nbins(g))]

    @property
    def arcs(self):
        """(frompc, selfpc, count) per call arc."""
        out = []
        f, s, c = _u64(), _u64(), ctypes.c_int64()
        for i in range(self._lib.kvmprof_gmon_narcs(self._g)):
            self._lib.kvmprof_gmon_arc(self._g, i, ctypes.byref(f), ctypes.byref(s),
                                       ctypes.byref(c))
            out.append((f.value, s.value, c.value))
        return out

    def write(self, path, force=False):
        """Write kgmon's gmon.out to path (atomically; force replaces)."""
        if self._lib.kvmprof_gmon_write(self._g, _b(path), 1 if force else 0) != 0:
            err = ctypes.get_errno() or 0
            raise OSError(err, 'writing %s failed' % path)

    def flat(self):
        """(functions busiest first, total ticks, unknown ticks)."""
        lib = self._lib
        f = lib.kvmprof_gmon_flat(self._g, self._k._h())
        if not f:
            raise self._k._error()
        try:
            funcs = []
            for i in range(lib.kvmprof_flat_count(f)):
                r = lib.kvmprof_flat_get(f, i).contents
                funcs.append(FlatFunction(name=_s(r.name), addr=r.addr, ticks=r.ticks,
                                          calls=r.calls))
            return funcs, lib.kvmprof_flat_total(f), lib.kvmprof_flat_unknown(f)
        finally:
            lib.kvmprof_flat_free(f)

    def close(self):
        """Free what the library holds for it (also when collected)."""
        if getattr(self, '_g', None):
            self._lib.kvmprof_gmon_free(self._g)
            self._g = None

    def __del__(self):
        self.close()


# ----------------------------------------------------------------- Program

from ._object import (TypeKind, Type, TypeMember, TypeEnumerator, Object,  # noqa: E402
                      FaultError, NotFoundError, ObjectAbsentError, cast, reinterpret,
                      sizeof, offsetof, container_of, NULL, parse_type)

__all__ += ['Program', 'TypeKind', 'Type', 'TypeMember', 'TypeEnumerator', 'Object',
            'FaultError', 'NotFoundError', 'ObjectAbsentError', 'cast', 'reinterpret', 'sizeof', 'offsetof',
            'container_of', 'NULL']


class Program(Kvmstat):
    """A kernel and its memory with drgn's questions: prog['init_task'],
    prog.type('struct page *'), prog.object(name), prog.symbol(name or
    address), prog.read(address, size).  Everything Kvmstat has, too (its
    TypeInfo answers as typeinfo() and variable_info())."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._types = {}
        self._ptr_size = 8
        self._rbuf = ctypes.create_string_buffer(4096)
        # typed views of the read buffer: (size, signed) -> ctypes object
        self._views = {(n, sg): t.from_buffer(self._rbuf) for n, sg, t in (
            (1, False, ctypes.c_uint8), (2, False, ctypes.c_uint16),
            (4, False, ctypes.c_uint32), (8, False, ctypes.c_uint64),
            (1, True, ctypes.c_int8), (2, True, ctypes.c_int16),
            (4, True, ctypes.c_int32), (8, True, ctypes.c_int64))}
        self._kvs_read = self._lib.kvs_read
        self._trunc = ctypes.c_int(0)
        # for _speedups: the library's kvs_read, called from C
        self._cread = ctypes.cast(self._lib.kvs_read, ctypes.c_void_p).value
        self._words = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32,
                       8: ctypes.c_uint64}
        self._objs = {}

    # -- drgn's Program
    def __getitem__(self, name):
        try:
            return self.object(name)
        except LookupError:
            raise KeyError(name) from None

    def __contains__(self, name):
        try:
            self.object(name)
            return True
        except LookupError:
            return False

    def object(self, name):
        """The global variable (a reference object) or function named name."""
        o = self._objs.get(name)
        if o is not None:
            return o
        addr, size = _u64(), _u64()
        if self._lib.kvs_symbol(self._h(), _b(name), ctypes.byref(addr),
                                ctypes.byref(size)) != 0:
            # an enumerator, as drgn's prog['PG_slab'] (BTF's enums)
            v, et = ctypes.c_int64(), _cp()
            if self._lib.kvs_type_constant(self._h(), _b(name), ctypes.byref(v),
                                           ctypes.byref(et)) == 0:
                tn = _s(et.value)
                t = self.type(tn) if '<anonymous>' not in tn else Type(
                    self, TypeKind.ENUM, tn, size=4, is_signed=True)
                o = Object(self, t, value=v.value)
                self._objs[name] = o
                return o
            raise NotFoundError("could not find '%s'" % name, 7)
        ti = _TypeInfo()
        if self._lib.kvs_variable(self._h(), _b(name), ctypes.byref(ti)) == 0:
            o = Object(self, self.type(_s(ti.type_name)), address=addr.value)
        else:
            # no type for it: a function (or a symbol no debug info names)
            f = Type(self, TypeKind.FUNCTION, 'void (void)', size=None)
            o = Object(self, f, address=addr.value)
        self._objs[name] = o
        return o

    def variable(self, name):
        """The global variable named name, as an Object (drgn's meaning;
        variable_info() gives the TypeInfo)."""
        o = self.object(name)
        if o.type_.kind == TypeKind.FUNCTION:
            raise LookupError("could not find variable '%s'" % name)
        return o

    def function(self, name):
        """The function named name, as an Object."""
        o = self.object(name)
        if o.type_.kind != TypeKind.FUNCTION:
            raise LookupError("could not find function '%s'" % name)
        return o

    def variable_info(self, name):
        """Kvmstat.variable's TypeInfo of a global variable."""
        return Kvmstat.variable(self, name)

    def typeinfo(self, name):
        """Kvmstat.type's TypeInfo of a type (size, kind, offset...)."""
        return Kvmstat.type(self, name)

    def type(self, name):
        """The Type for a C spelling ('struct task_struct *', 'char [16]',
        'pid_t'), or a Type given."""
        if isinstance(name, Type):
            return name
        t = self._types.get(name)
        if t is None:
            t = parse_type(self, name)
            self._types[name] = t
        return t

    def _named_type(self, s):
        if s == 'void':
            return Type(self, TypeKind.VOID, 'void')
        ti = _TypeInfo()
        if self._lib.kvs_type(self._h(), _b(s), ctypes.byref(ti)) != 0:
            for alt in _base_spellings(s):
                if self._lib.kvs_type(self._h(), _b(alt), ctypes.byref(ti)) == 0:
                    t = self.type(alt)
                    return t
            raise NotFoundError("could not find '%s'" % s)
        p = _TypePeel()
        if self._lib.kvs_type_peel(self._h(), _b(s), ctypes.byref(p)) != 0:
            raise NotFoundError("could not find '%s': %s" % (s, _s(self._lib.kvs_geterr(self._kd))))
        if p.target is not None:
            target = _s(p.target)
            if '<anonymous>' in target:
                # an anonymous struct, union or enum: known by this name
                kind = {'struct': TypeKind.STRUCT, 'union': TypeKind.UNION,
                        'enum': TypeKind.ENUM}.get(target.split()[0], TypeKind.STRUCT)
                tt = Type(self, kind, target, size=ti.size, lookup=s,
                          is_signed=p.encoding == 1 if kind == TypeKind.ENUM else None)
            else:
                tt = self.type(target)
            return Type(self, TypeKind.TYPEDEF, s, size=ti.size, name=s, type=tt, lookup=s)
        kind = KIND_NAMES[ti.kind]
        if kind == 'base':
            k = {3: TypeKind.BOOL, 4: TypeKind.FLOAT}.get(p.encoding, TypeKind.INT)
            return Type(self, k, s, size=ti.size, name=s, is_signed=p.encoding == 1, lookup=s)
        if kind in ('struct', 'union', 'enum'):
            tag = s.split(None, 1)[1] if ' ' in s and s.split()[0] in (
                'struct', 'union', 'enum') else s
            k = {'struct': TypeKind.STRUCT, 'union': TypeKind.UNION,
                 'enum': TypeKind.ENUM}[kind]
            return Type(self, k, s, size=ti.size, tag=tag, lookup=s,
                        is_signed=(p.encoding == 1) if k == TypeKind.ENUM else None)
        raise LookupError("'%s' is a %s, not a named type" % (s, kind))

    def pointer_type(self, type):
        """A pointer to type (a Type or its spelling)."""
        t = self.type(type)
        sp = t.type_name()
        return self.type(sp + '*' if sp.endswith('*') else sp + ' *')

    def _enumerators(self, lookup):
        out = []

        def cb(_arg, name, value):
            out.append(TypeEnumerator(_s(name), value))
            return 0
        if self._lib.kvs_type_enumerators(self._h(), _b(lookup), _ENUM_CB(cb), None) != 0:
            raise self._error()
        return out

    def constant(self, name, enum_type):
        """The enumerator name of enum_type as an Object (drgn finds it by
        name alone; here its enum is named: 'enum pageflags')."""
        t = self.type(enum_type)
        for e in t.enumerators or ():
            if e.name == name:
                return Object(self, t, value=e.value)
        raise LookupError("'%s' has no enumerator '%s'" % (enum_type, name))

    def symbol(self, what):
        """The symbol named what, or holding address what: a Symbol (an int,
        its address, with .name, .address and .size)."""
        if isinstance(what, str):
            return Kvmstat.symbol(self, what)
        hit = self.symbol_at(int(what))
        if hit is None:
            raise LookupError('could not find symbol containing 0x%x' % int(what))
        s = Kvmstat.symbol(self, hit[0])
        return s

    def read(self, address, size, physical=False):
        """size bytes at address (kernel virtual, or physical)."""
        buf = ctypes.create_string_buffer(size)
        f = self._lib.kvs_read_phys if physical else self._lib.kvs_read
        if f(self._h(), int(address), buf, size) != 0:
            raise self._fault(address)
        return buf.raw

    def _fault(self, address):
        e = self._error()
        return FaultError(str(e), e.fault_addr if e.fault_addr is not None else int(address),
                          e.status, e.code)

    def _read_int(self, address, size, signed):
        view = self._views.get((size, bool(signed)))
        if view is None:
            return int.from_bytes(self.read(address, size), 'little', signed=bool(signed))
        if self._kvs_read(self._kd, address, self._rbuf, size) != 0:
            raise self._fault(address)
        return view.value

    def _read_small(self, address, size):
        """size bytes (at most the read buffer's) without a new buffer."""
        if size > len(self._rbuf):
            return self.read(address, size)
        if self._kvs_read(self._kd, address, self._rbuf, size) != 0:
            raise self._fault(address)
        return self._rbuf.raw[:size]

    def _read_cstring(self, address, limit=1 << 20):
        trunc = self._trunc
        n = self._lib.kvs_read_string(self._kd, address, self._rbuf, len(self._rbuf),
                                      ctypes.byref(trunc))
        if n >= 0 and not trunc.value:
            return self._rbuf.raw[:n]
        out = b''
        while len(out) < limit:
            chunk = 4096 - (address + len(out)) % 4096
            data = self.read(address + len(out), chunk)
            nul = data.find(b'\0')
            if nul >= 0:
                return out + data[:nul]
            out += data
        return out

    @property
    def platform(self):
        return self.kernel_info()


Symbol.address = property(lambda self: self.addr)

_INT_WORDS = {'signed', 'unsigned', 'char', 'short', 'int', 'long'}


def _base_spellings(s):
    """Other spellings of a C integer type: 'unsigned long' is GCC's 'long
    unsigned int' and clang's 'unsigned long'."""
    words = s.split()
    if not words or not set(words) <= _INT_WORDS:
        return []
    sign = 'unsigned' if 'unsigned' in words else 'signed' if 'signed' in words else ''
    longs = words.count('long')
    if 'char' in words:
        core = 'char'
    elif 'short' in words:
        core = 'short'
    elif longs:
        core = ' '.join(['long'] * longs)
    else:
        core = 'int'
    out = []
    if core == 'char':
        out.append((sign + ' char').strip())
    elif core == 'int':
        out += ['unsigned int' if sign == 'unsigned' else 'int', (sign + ' int').strip()]
        if sign == 'unsigned':
            out.append('unsigned')
    else:
        gcc = core + (' unsigned' if sign == 'unsigned' else '') + ' int'
        out += [gcc, (sign + ' ' + core).strip() if sign == 'unsigned' else core,
                core + ' int', (sign + ' ' + core + ' int').strip()]
    return [o for o in dict.fromkeys(out) if o != s]


def _open_program(core=None, kernel=None, raw=False, verify=True, kernel_only=False,
                  modules=(), module_dir=None, no_kernel=False):
    return Program(core=core, kernel=kernel, raw=raw, verify=verify, kernel_only=kernel_only,
                   modules=modules, module_dir=module_dir, no_kernel=no_kernel)


_open_kvmstat = open


def open(core=None, kernel=None, raw=False, verify=True, kernel_only=False,  # noqa: F811
         modules=(), module_dir=None, no_kernel=False):
    """Open kernel (an ELF image with symbols) and core (a crash dump, a raw
    image with raw=True, or None for live memory) as a Program.  kernel may
    be None when the dump carries what its kernel needs (a Linux dump with
    VMCOREINFO: kallsyms and BTF in memory), or with no_kernel=True, which
    opens the dump for its bytes alone (dump_info, read_phys).
    kernel_only=True opens the kernel alone, for symbol and type queries.
    The result is a context manager; it is closed on exit.  A failure
    raises Error with its .code and .status."""
    return _open_program(core=core, kernel=kernel, raw=raw, verify=verify,
                         kernel_only=kernel_only, modules=modules, module_dir=module_dir,
                         no_kernel=no_kernel)
