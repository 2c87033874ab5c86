"""The memory census (census.h) for the Kvmstat handle: where the kernel's
memory is (meminfo / vm_cnt), the page allocator's zones, vmalloc areas,
vmem arenas, the objects of a slab cache, and what one address is.

Kvmstat's meminfo(), zones(), vmalloc(), arenas(), slab_objects() and
whatis() call these; each returns plain records (kvmstat.Counter, Zone,
VmallocArea, Arena, SlabObject, WhatIs).  An answer that lacks bytes the
dump does not hold is still returned: its records say which values are
missing (`unreadable`, `note`) and the list's `.complete` is False.
"""
import ctypes

_u64 = ctypes.c_uint64
_vp = ctypes.c_void_p
_cp = ctypes.c_char_p

KVS_CF_LIVE, KVS_CF_UNREADABLE, KVS_CF_ESTIMATE = 0x01, 0x02, 0x04
UNITS = ['KiB', 'pages', 'count', 'bytes']
PZ_ORDERS, PZ_POOLS, PZ_PROT = 16, 8, 8
OBJ_STATES = ['allocated', 'free (cpu)', 'free (cpu partial)', 'free (partial)', 'free',
              'unknown', 'free (zone bucket)']
WHATIS_KINDS = ['unknown', 'slab', 'page', 'vmalloc', 'symbol', 'stack']


class _Counter(ctypes.Structure):
    _fields_ = [('group', _cp), ('name', ctypes.c_char * 64), ('key', ctypes.c_char * 48),
                ('value', _u64), ('unit', ctypes.c_int), ('flags', ctypes.c_uint),
                ('note', ctypes.c_char * 128)]


class _PZonePcp(ctypes.Structure):
    _fields_ = [('cpu', ctypes.c_int), ('count', ctypes.c_int64), ('high', ctypes.c_int64),
                ('batch', ctypes.c_int64), ('stat_threshold', ctypes.c_int64)]


class _PZone(ctypes.Structure):
    _fields_ = [('node', ctypes.c_int), ('name', ctypes.c_char * 32), ('index', ctypes.c_int),
                ('kaddr', _u64), ('populated', ctypes.c_int), ('norders', ctypes.c_uint),
                ('free', _u64 * PZ_ORDERS), ('npools', ctypes.c_uint),
                ('pool_name', (ctypes.c_char * 16) * PZ_POOLS),
                ('pool_free', (_u64 * PZ_ORDERS) * PZ_POOLS),
                ('free_pages', _u64), ('wmark_min', _u64), ('wmark_low', _u64),
                ('wmark_high', _u64), ('wmark_boost', _u64), ('spanned', _u64),
                ('present', _u64), ('managed', _u64), ('cma', _u64), ('start_pfn', _u64),
                ('nprotection', ctypes.c_uint), ('protection', _u64 * PZ_PROT),
                ('stat', ctypes.POINTER(_Counter)), ('nstat', ctypes.c_size_t),
                ('node_stat', ctypes.POINTER(_Counter)), ('nnode_stat', ctypes.c_size_t),
                ('unreclaimable', ctypes.c_int),
                ('pcp', ctypes.POINTER(_PZonePcp)), ('npcp', ctypes.c_size_t),
                ('flags', ctypes.c_uint), ('note', ctypes.c_char * 128)]


class _VArea(ctypes.Structure):
    _fields_ = [('start', _u64), ('end', _u64), ('size', _u64), ('caller', _u64),
                ('caller_sym', ctypes.c_char * 128), ('nr_pages', _u64), ('phys_addr', _u64),
                ('kaddr', _u64), ('vm_flags', _u64), ('flags', ctypes.c_char * 96),
                ('cflags', ctypes.c_uint), ('note', ctypes.c_char * 128)]


class _Arena(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char * 32), ('kaddr', _u64), ('quantum', _u64),
                ('size', _u64), ('inuse', _u64), ('free', _u64), ('cflags', ctypes.c_uint),
                ('note', ctypes.c_char * 128)]


class _SlabObject(ctypes.Structure):
    _fields_ = [('addr', _u64), ('slab', _u64), ('index', _u64), ('state', ctypes.c_int),
                ('cpu', ctypes.c_int), ('node', ctypes.c_int)]


class _WhatIs(ctypes.Structure):
    _fields_ = [('addr', _u64), ('kind', ctypes.c_int),
                ('cache', ctypes.c_char * 64), ('cache_kaddr', _u64), ('object', _u64),
                ('offset', _u64), ('objsize', _u64), ('obj_index', _u64),
                ('state', ctypes.c_int), ('cpu', ctypes.c_int),
                ('alloc_caller', _u64), ('free_caller', _u64),
                ('pfn', _u64), ('page', _u64), ('page_flags', _u64),
                ('page_flags_str', ctypes.c_char * 256), ('mapping', _u64),
                ('order', ctypes.c_uint), ('head', _u64),
                ('area_start', _u64), ('area_end', _u64), ('area_caller', _u64),
                ('symbol', ctypes.c_char * 128),
                ('pid', ctypes.c_int), ('comm', ctypes.c_char * 32), ('task', _u64),
                ('note', ctypes.c_char * 128),
                ('malloc_zone', ctypes.c_char * 32), ('tid', ctypes.c_int),
                ('map_name', ctypes.c_char * 32), ('map_entry', _u64), ('map_object', _u64),
                ('map_offset', _u64), ('map_eflags', ctypes.c_uint32),
                ('map_prot', ctypes.c_uint8), ('map_maxprot', ctypes.c_uint8),
                ('map_prev', _u64), ('map_next', _u64)]


_OBJ_CB = ctypes.CFUNCTYPE(ctypes.c_int, _vp, ctypes.POINTER(_SlabObject))

PROTOS = {
    'kvs_meminfo': (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.POINTER(_Counter)),
                                   ctypes.POINTER(ctypes.c_size_t)]),
    'kvs_counters_free': (None, [ctypes.POINTER(_Counter), ctypes.c_size_t]),
    'kvs_pzones': (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.POINTER(_PZone)),
                                  ctypes.POINTER(ctypes.c_size_t)]),
    'kvs_pzones_free': (None, [ctypes.POINTER(_PZone), ctypes.c_size_t]),
    'kvs_vmalloc': (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.POINTER(_VArea)),
                                   ctypes.POINTER(ctypes.c_size_t)]),
    'kvs_vareas_free': (None, [ctypes.POINTER(_VArea), ctypes.c_size_t]),
    'kvs_arenas': (ctypes.c_int, [_vp, ctypes.POINTER(ctypes.POINTER(_Arena)),
                                  ctypes.POINTER(ctypes.c_size_t)]),
    'kvs_arenas_free': (None, [ctypes.POINTER(_Arena), ctypes.c_size_t]),
    'kvs_slab_objects': (ctypes.c_int, [_vp, _cp, _OBJ_CB, _vp]),
    'kvs_whatis': (ctypes.c_int, [_vp, _u64, ctypes.POINTER(_WhatIs)]),
}


def _s(b):
    return b.decode('utf-8', 'surrogateescape')


class Record:
    """A plain answer: its fields as attributes, compared by value."""
    _fields = ()

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __eq__(self, other):
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __repr__(self):
        shown = ', '.join('%s=%r' % (f, getattr(self, f)) for f in self._fields)
        return '%s(%s)' % (type(self).__name__, shown)


class Counter(Record):
    """One counter of the kernel's memory summary (a /proc/meminfo line, a
    vm_cnt field): group, name, key, value, unit ('KiB', 'pages', 'count',
    'bytes'), live/unreadable/estimate flags and a note."""
    _fields = ('name', 'value', 'unit')


class Zone(Record):
    """A zone of the page allocator (Linux struct zone; FreeBSD a free list
    of a domain): node, name, free (blocks per order), pools, watermarks,
    page counts, stat and node_stat ({name: value})."""
    _fields = ('node', 'name', 'free')


class VmallocArea(Record):
    """A vmalloc area as /proc/vmallocinfo shows it."""
    _fields = ('start', 'end', 'size', 'caller')


class Arena(Record):
    """A FreeBSD vmem(9) arena."""
    _fields = ('name', 'size', 'inuse')


class SlabObject(Record):
    """An object of a slab cache: address, slab, index, state, cpu, node."""
    _fields = ('address', 'state')


class WhatIs(Record):
    """What holds an address: kind ('slab', 'page', 'vmalloc', 'symbol',
    'stack', 'unknown') and what that kind knows.  FreeBSD's kernel_map
    entries are 'vmalloc' with map, map_entry, map_object, map_offset,
    map_eflags, map_protection, map_max_protection; an address in a map's
    gap is 'unknown' with map, gap_start, gap_end, prev_entry, next_entry."""
    _fields = ('address', 'kind')


class Answer(list):
    """A list of records; .complete is False when some values were not in
    the dump (each such record says so)."""
    complete = True


def _counter(c):
    return Counter(group=_s(c.group) if c.group else None, name=_s(c.name), key=_s(c.key),
                   value=c.value, unit=UNITS[c.unit] if 0 <= c.unit < len(UNITS) else None,
                   live=bool(c.flags & KVS_CF_LIVE),
                   unreadable=bool(c.flags & KVS_CF_UNREADABLE),
                   estimate=bool(c.flags & KVS_CF_ESTIMATE), note=_s(c.note) or None)


def _list(k, fn, free, conv):
    lib = k._lib
    n = ctypes.c_size_t()
    p = getattr(lib, fn).argtypes[1]._type_()
    rc = getattr(lib, fn)(k._h(), ctypes.byref(p), ctypes.byref(n))
    if rc < 0:
        raise k._error()
    try:
        out = Answer(conv(p[i]) for i in range(n.value))
    finally:
        getattr(lib, free)(p, n)
    out.complete = rc == 0
    return out


def meminfo(k):
    return _list(k, 'kvs_meminfo', 'kvs_counters_free', _counter)


def _zone(z):
    def counters(p, n):
        return {_s(p[i].name): p[i].value for i in range(n)}
    return Zone(node=z.node, name=_s(z.name), index=z.index, address=z.kaddr,
                populated=bool(z.populated), free=list(z.free[:z.norders]),
                pools={_s(z.pool_name[i].value): list(z.pool_free[i][:z.norders])
                       for i in range(min(z.npools, PZ_POOLS))},
                free_pages=z.free_pages, min=z.wmark_min, low=z.wmark_low,
                high=z.wmark_high, boost=z.wmark_boost, spanned=z.spanned,
                present=z.present, managed=z.managed, cma=z.cma, start_pfn=z.start_pfn,
                protection=list(z.protection[:min(z.nprotection, PZ_PROT)]),
                stat=counters(z.stat, z.nstat),
                node_stat=counters(z.node_stat, z.nnode_stat),
                unreclaimable=None if z.unreclaimable < 0 else bool(z.unreclaimable),
                pagesets=[{'cpu': z.pcp[i].cpu, 'count': z.pcp[i].count, 'high': z.pcp[i].high,
                           'batch': z.pcp[i].batch,
                           'stat_threshold': None if z.pcp[i].stat_threshold < 0
                           else z.pcp[i].stat_threshold} for i in range(z.npcp)],
                unreadable=bool(z.flags & KVS_CF_UNREADABLE), note=_s(z.note) or None)


def zones(k):
    return _list(k, 'kvs_pzones', 'kvs_pzones_free', _zone)


def _varea(v):
    return VmallocArea(start=v.start, end=v.end, size=v.size,
                       caller=_s(v.caller_sym) or None, caller_address=v.caller or None,
                       pages=v.nr_pages, phys=v.phys_addr or None, address=v.kaddr,
                       vm_flags=v.vm_flags, flags=_s(v.flags).split(),
                       unreadable=bool(v.cflags & KVS_CF_UNREADABLE),
                       note=_s(v.note) or None)


def vmalloc(k):
    return _list(k, 'kvs_vmalloc', 'kvs_vareas_free', _varea)


def _arena(a):
    return Arena(name=_s(a.name), address=a.kaddr, quantum=a.quantum, size=a.size,
                 inuse=a.inuse, free=a.free, unreadable=bool(a.cflags & KVS_CF_UNREADABLE),
                 note=_s(a.note) or None)


def arenas(k):
    return _list(k, 'kvs_arenas', 'kvs_arenas_free', _arena)


def slab_objects(k, cache):
    out = Answer()
    err = []

    def cb(_arg, op):
        o = op.contents
        try:
            out.append(SlabObject(address=o.addr, slab=o.slab, index=o.index,
                                  state=OBJ_STATES[o.state] if 0 <= o.state < len(OBJ_STATES)
                                  else 'unknown', allocated=o.state == 0,
                                  cpu=None if o.cpu < 0 else o.cpu,
                                  node=None if o.node < 0 else o.node))
        except BaseException as e:        # never unwind through C
            err.append(e)
            return 1
        return 0
    rc = k._lib.kvs_slab_objects(k._h(), cache.encode() if isinstance(cache, str) else cache,
                                 _OBJ_CB(cb), None)
    if err:
        raise err[0]
    if rc < 0:
        raise k._error()
    out.complete = rc == 0
    return out


def whatis(k, addr):
    w = _WhatIs()
    rc = k._lib.kvs_whatis(k._h(), int(addr), ctypes.byref(w))
    if rc < 0:
        raise k._error()
    kind = WHATIS_KINDS[w.kind] if 0 <= w.kind < len(WHATIS_KINDS) else 'unknown'
    r = WhatIs(address=w.addr, kind=kind, complete=rc == 0, note=_s(w.note) or None)
    if kind == 'slab':
        r.__dict__.update(cache=_s(w.cache), cache_address=w.cache_kaddr, object=w.object,
                          offset=w.offset, objsize=w.objsize, index=w.obj_index,
                          state=OBJ_STATES[w.state] if 0 <= w.state < len(OBJ_STATES)
                          else 'unknown', allocated=w.state == 0,
                          cpu=None if w.cpu < 0 else w.cpu,
                          alloc_caller=w.alloc_caller or None,
                          free_caller=w.free_caller or None,
                          malloc_zone=_s(w.malloc_zone) or None)
    if w.page:
        r.__dict__.update(pfn=w.pfn, page=w.page, page_flags=w.page_flags,
                          page_flags_names=[f for f in _s(w.page_flags_str).split('|') if f],
                          mapping=w.mapping, order=w.order, head=w.head or None)
    if kind == 'vmalloc':
        r.__dict__.update(area_start=w.area_start, area_end=w.area_end,
                          area_caller=w.area_caller or None)
    if w.map_name and kind == 'vmalloc':       # FreeBSD: the kernel_map entry
        r.__dict__.update(map=_s(w.map_name), map_entry=w.map_entry,
                          map_object=w.map_object or None, map_offset=w.map_offset,
                          map_eflags=w.map_eflags, map_protection=w.map_prot,
                          map_max_protection=w.map_maxprot)
    elif w.map_name:                            # in a map's range, in no entry
        r.__dict__.update(map=_s(w.map_name), gap_start=w.area_start, gap_end=w.area_end,
                          prev_entry=w.map_prev or None, next_entry=w.map_next or None)
    if w.symbol:
        r.symbol = _s(w.symbol)
    if kind == 'stack':
        r.__dict__.update(pid=w.pid, comm=_s(w.comm), task=w.task)
        if w.tid >= 0:                    # FreeBSD: the thread
            r.__dict__.update(tid=w.tid, thread=w.task)
    return r
