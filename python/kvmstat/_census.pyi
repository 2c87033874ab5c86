import ctypes
from typing import Any as Incomplete

_u64 = ctypes.c_uint64
_vp = ctypes.c_void_p
_cp = ctypes.c_char_p
KVS_CF_LIVE: Incomplete
KVS_CF_UNREADABLE: Incomplete
KVS_CF_ESTIMATE: Incomplete
UNITS: Incomplete
PZ_ORDERS: Incomplete
PZ_POOLS: Incomplete
PZ_PROT: Incomplete
OBJ_STATES: Incomplete
WHATIS_KINDS: Incomplete

class _Counter(ctypes.Structure):
    _fields_: Incomplete

class _PZone(ctypes.Structure):
    _fields_: Incomplete

class _VArea(ctypes.Structure):
    _fields_: Incomplete

class _Arena(ctypes.Structure):
    _fields_: Incomplete

class _SlabObject(ctypes.Structure):
    _fields_: Incomplete

class _WhatIs(ctypes.Structure):
    _fields_: Incomplete

_OBJ_CB: Incomplete
PROTOS: Incomplete

def _s(b): ...

class Record:
    _fields: Incomplete
    def __init__(self, **kw) -> None: ...
    def __eq__(self, other): ...
    def __repr__(self): ...

class Counter(Record):
    _fields: Incomplete

class Zone(Record):
    _fields: Incomplete

class VmallocArea(Record):
    _fields: Incomplete

class Arena(Record):
    _fields: Incomplete

class SlabObject(Record):
    _fields: Incomplete

class WhatIs(Record):
    _fields: Incomplete
    # FreeBSD's kernel_map: a 'vmalloc' answer's entry ...
    map: str
    map_entry: int
    map_object: int | None
    map_offset: int
    map_eflags: int
    map_protection: int
    map_max_protection: int
    # ... or an 'unknown' answer's gap in the map
    gap_start: int
    gap_end: int
    prev_entry: int | None
    next_entry: int | None

class Answer(list):
    complete: bool

def _counter(c): ...
def _list(k, fn, free, conv): ...
def meminfo(k): ...
def _zone(z): ...
def zones(k): ...
def _varea(v): ...
def vmalloc(k): ...
def _arena(a): ...
def arenas(k): ...
def slab_objects(k, cache): ...
def whatis(k, addr): ...
