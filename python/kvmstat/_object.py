"""Typed kernel objects with the names and behaviour drgn users know.

    import kvmstat
    from kvmstat import Object, cast, sizeof, container_of
    prog = kvmstat.open(core='vmcore', kernel='vmlinux')
    task = prog['init_task']
    print(task.comm.string_(), task.pid.value_())

A Program is a Kvmstat handle with drgn's questions: prog[name], prog.type(),
prog.object(), prog.symbol(), prog.read().  An Object is a value of a C type,
either read from kernel memory (a reference: it has an address_) or held
(a value).  Members by attribute or member_(), [i] on arrays and pointers,
deref_(), address_of_(), value_(), string_(), read_(); cast(), sizeof(),
container_of().  Types come from the kernel's BTF or DWARF through
libkvmstat; errors are FaultError (a read outside the dump) and LookupError.
"""
import enum
import re
import struct as _struct

from . import _census


class TypeKind(str, enum.Enum):
    """A type's kind; equal to its lower-case name ('struct' == STRUCT)."""
    VOID = 'void'
    INT = 'int'
    BOOL = 'bool'
    FLOAT = 'float'
    STRUCT = 'struct'
    UNION = 'union'
    ENUM = 'enum'
    TYPEDEF = 'typedef'
    POINTER = 'pointer'
    ARRAY = 'array'
    FUNCTION = 'function'

    def __str__(self):
        return 'TypeKind.' + self.name


class TypeMember:
    """A member of a struct or union type: name (None when anonymous),
    type, bit_offset, offset, bit_field_size (None when not a bit-field)."""
    __slots__ = ('name', 'type', 'bit_offset', 'bit_field_size')

    def __init__(self, type, name=None, bit_offset=0, bit_field_size=None):
        self.type, self.name = type, name
        self.bit_offset, self.bit_field_size = bit_offset, bit_field_size

    @property
    def offset(self):
        return self.bit_offset // 8

    def __repr__(self):
        return 'TypeMember(prog.type(%r), name=%r, bit_offset=%d%s)' % (
            self.type.type_name(), self.name, self.bit_offset,
            '' if self.bit_field_size is None else ', bit_field_size=%d' % self.bit_field_size)


class TypeEnumerator:
    """An enumerator of an enum type: name, value."""
    __slots__ = ('name', 'value')

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __iter__(self):
        return iter((self.name, self.value))

    def __eq__(self, other):
        return isinstance(other, TypeEnumerator) and (self.name, self.value) == (
            other.name, other.value)

    def __repr__(self):
        return 'TypeEnumerator(%r, %d)' % (self.name, self.value)


class Type:
    """A C type of the kernel: kind, and what that kind has (name, tag, size,
    type, length, members, enumerators, is_signed)."""

    def __init__(self, prog, kind, spelling, size=None, name=None, tag=None, type=None,
                 length=None, is_signed=None, qualifiers=frozenset(), lookup=None):
        self.prog, self.kind, self._spelling = prog, kind, spelling
        self.size, self.name, self.tag, self.type = size, name, tag, type
        self.length, self.is_signed, self.qualifiers = length, is_signed, qualifiers
        self._lookup = lookup        # the name the library knows the type by
        self._anon = None            # (owner lookup, member path, bit offset): a
                                     # named member's anonymous struct or union
        self._members = None
        self._by_name = None
        self._enumerators = None
        self._pk = None              # the peeled type, once known
        self._wrap = None            # (mask, sign bit) of an integer type; False
        self._tpk = None             # a pointer's target, peeled
        self._mc = {}                # member name -> (byte offset, type, bit, bits)

    def type_name(self):
        """The type's C spelling: 'struct task_struct *', 'char [16]'."""
        return self._spelling

    def __repr__(self):
        return 'prog.type(%r)' % self._spelling

    def __str__(self):
        return self._spelling

    def __eq__(self, other):
        return isinstance(other, Type) and self._spelling == other._spelling

    def __hash__(self):
        return hash(self._spelling)

    def unqualified(self):
        """This type without const, volatile and restrict."""
        if not self.qualifiers:
            return self
        return self.prog.type(_strip_quals(self._spelling))

    def _peeled(self):
        t = self._pk
        if t is None:
            t = self
            while t.kind == TypeKind.TYPEDEF:
                t = _resolve(t.type)
            self._pk = t
        return t

    def _target_peeled(self):
        self._tpk = _resolve(self.type)._peeled()
        return self._tpk

    def _wrapper(self):
        """How a held integer of this type wraps: (mask, sign bit), or False
        for what is not an integer, a pointer or an enum."""
        t = self._peeled()
        if t.kind in (TypeKind.INT, TypeKind.ENUM, TypeKind.POINTER) and t.size:
            bits = t.size * 8
            self._wrap = ((1 << bits) - 1, (1 << (bits - 1)) if t.is_signed else 0)
        else:
            self._wrap = False
        return self._wrap

    def _mref(self, name):
        """(byte offset, resolved type, bit offset in the byte or None,
        bit-field size) of member name: the hot path of member access."""
        r = self._mc.get(name)
        if r is None:
            m = self.member(name)
            mt = _resolve(m.type)
            if m.bit_field_size is not None:
                r = (m.bit_offset // 8, mt, m.bit_offset % 8, m.bit_field_size)
            else:
                r = (m.bit_offset // 8, mt, None, None)
            self._mc[name] = r
        return r

    @property
    def members(self):
        """The members, in order (anonymous ones with name None), for a
        struct or union; None for other kinds."""
        t = self._peeled()
        if t.kind not in (TypeKind.STRUCT, TypeKind.UNION):
            return None
        if t._members is None:
            t._load_members()
        return t._members

    @property
    def enumerators(self):
        t = self._peeled()
        if t.kind != TypeKind.ENUM:
            return None
        if t._enumerators is None:
            t._enumerators = self.prog._enumerators(t._lookup)
        return t._enumerators

    def _load_members(self):
        if self._anon is not None:
            self._members, self._by_name = [], {}
            return
        flat = self.prog.members(self._lookup)
        self._members, self._by_name = _member_tree(self.prog, flat, 0, 0, len(flat),
                                                    owner=self._lookup)

    def has_member(self, name):
        """Whether the struct or union has member name."""
        try:
            self.member(name)
            return True
        except LookupError:
            return False

    def member(self, name):
        """The member named name (inside anonymous members too), as a
        TypeMember whose bit_offset counts from the start of this type."""
        t = self._peeled()
        if t.kind not in (TypeKind.STRUCT, TypeKind.UNION):
            raise TypeError("'%s' is not a structure or union" % self._spelling)
        if t._by_name is None:
            t._load_members()
        m = t._by_name.get(name)
        if m is None and t._anon is not None:
            m = t._anon_member(name)
        if m is None:
            raise LookupError("'%s' has no member '%s'" % (self._spelling, name))
        return m

    def _anon_member(self, name):
        """A member of an anonymous struct or union that is itself a named
        member (struct proc's p_list): asked of its owner by path."""
        owner, path, base = self._anon
        try:
            ti = self.prog.member(owner, path + '.' + name)
        except Exception:
            return None
        bit = ti.offset * 8 + ti.bit_offset - base
        tm = TypeMember(_member_type(self.prog, ti.type_name, ti.kind, ti.size, owner,
                                     path + '.' + name, ti.offset * 8 + ti.bit_offset),
                        name, bit, ti.bit_size or None)
        self._by_name[name] = tm
        return tm


def _member_type(prog, spelling, kind, size, owner, path, bit_offset):
    """A member's type: parsed on first use, or, for an anonymous struct or
    union (which has no name to look up), one that asks its owner."""
    if '<anonymous>' in spelling and not spelling.rstrip().endswith((']', '*')):
        k = TypeKind.UNION if spelling.startswith('union') else \
            TypeKind.ENUM if spelling.startswith('enum') else TypeKind.STRUCT
        t = Type(prog, k, spelling, size=size)
        t._anon = (owner, path, bit_offset)
        return t
    return _LazyType(prog, spelling)


def _member_tree(prog, flat, depth, base, end, start=0, owner=None):
    """Members at depth from flat[start:end] (kvs_type_members' order: an
    anonymous member, then its own members one deeper), offsets relative to
    base; and the name index, anonymous members' names included."""
    out, by_name = [], {}
    i = start
    while i < end:
        m = flat[i]
        if m.depth != depth:
            i += 1
            continue
        j = i + 1
        while j < end and flat[j].depth > depth:
            j += 1
        bf = m.bit_size or None
        if m.name is None:
            sub, sub_names = _member_tree(prog, flat, depth + 1, m.bit_offset, j, i + 1,
                                          owner)
            kind = TypeKind.UNION if m.type_name.startswith('union') else TypeKind.STRUCT
            t = Type(prog, kind, m.type_name, size=m.size)
            t._members, t._by_name = sub, sub_names
            tm = TypeMember(t, None, m.bit_offset - base, None)
            for n, sm in sub_names.items():
                by_name.setdefault(n, TypeMember(sm.type, n, sm.bit_offset + tm.bit_offset,
                                                 sm.bit_field_size))
        else:
            tm = TypeMember(_member_type(prog, m.type_name, m.kind, m.size, owner, m.name,
                                         m.bit_offset), m.name, m.bit_offset - base, bf)
            by_name.setdefault(m.name, tm)
        out.append(tm)
        i = j
    return out, by_name


class _LazyType:
    """A member's type, parsed on first use (most members are never read)."""
    __slots__ = ('prog', 'spelling', '_t')

    def __init__(self, prog, spelling):
        self.prog, self.spelling, self._t = prog, spelling, None

    def resolve(self):
        if self._t is None:
            self._t = self.prog.type(self.spelling)
        return self._t

    def __getattr__(self, name):
        return getattr(self.resolve(), name)

    def __eq__(self, other):
        return self.resolve() == other

    def __hash__(self):
        return hash(self.spelling)

    def __repr__(self):
        return repr(self.resolve())


def _resolve(t):
    return t.resolve() if isinstance(t, _LazyType) else t


# ------------------------------------------------------------ type parsing

_QUALS = ('const', 'volatile', 'restrict')
_DIMS = re.compile(r'((?:\[\d*\])+)$')


def _strip_quals(s):
    words = [w for w in s.replace('*', ' * ').split() if w not in _QUALS]
    out = ' '.join(words).replace(' * ', ' *').replace(' *', ' *')
    return out.replace('* ', '*').strip()


def _split_quals(s):
    words = s.split()
    quals = frozenset(w for w in words if w in _QUALS)
    return ' '.join(w for w in words if w not in _QUALS), quals


def parse_type(prog, spelling):
    """The Type of a C spelling as kvmstat and drgn write them."""
    s = ' '.join(spelling.split())
    if not s:
        raise ValueError('empty type name')
    # A function pointer, or an array of them: ret (*)(args), ret (*[N])(args)
    if s.endswith(')') and '(*' in s:
        head = s.index('(*')
        close = _match_paren(s, head)
        inner = s[head + 2:close].strip()
        func = Type(prog, TypeKind.FUNCTION, s[:head].rstrip() + ' ' + s[close + 1:].strip(),
                    size=None)
        ptr = Type(prog, TypeKind.POINTER, s.replace('(*' + inner + ')', '(*)'),
                   size=prog._ptr_size, type=func, is_signed=False)
        if inner.startswith('['):
            return _array_of(prog, ptr, inner, s)
        return ptr
    m = _DIMS.search(s)
    if m:
        base = s[:m.start()].rstrip()
        return _array_of(prog, prog.type(base), m.group(1), s)
    if s.endswith('*'):
        ts = s[:-1].rstrip()
        try:
            target = prog.type(ts)
        except LookupError:
            # a struct, union or enum only declared: an incomplete type
            words = _split_quals(ts)[0].split()
            if len(words) != 2 or words[0] not in ('struct', 'union', 'enum'):
                raise
            kind = {'struct': TypeKind.STRUCT, 'union': TypeKind.UNION,
                    'enum': TypeKind.ENUM}[words[0]]
            target = Type(prog, kind, ts, size=None, tag=words[1], lookup=ts)
            target._members, target._by_name = [], {}
        return Type(prog, TypeKind.POINTER, s, size=prog._ptr_size, type=target,
                    is_signed=False)
    if s.endswith(' const') or s.endswith(' volatile'):
        # "char * const": a qualified pointer
        base, quals = s.rsplit(' ', 1)
        t = prog.type(base)
        q = Type(prog, t.kind, s, size=t.size, name=t.name, tag=t.tag, type=t.type,
                 length=t.length, is_signed=t.is_signed, qualifiers=frozenset([quals]),
                 lookup=t._lookup)
        return q
    base, quals = _split_quals(s)
    if quals:
        t = prog.type(base)
        return Type(prog, t.kind, s, size=t.size, name=t.name, tag=t.tag, type=t.type,
                    length=t.length, is_signed=t.is_signed, qualifiers=quals,
                    lookup=t._lookup)
    return prog._named_type(s)


def _match_paren(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == '(':
            depth += 1
        elif s[j] == ')':
            depth -= 1
            if depth == 0:
                return j
    raise ValueError('unbalanced parentheses in %r' % s)


def _array_of(prog, elem, dims, spelling):
    """Array type of elem for dims '[3][5]' (outermost first)."""
    ns = [d[1:] for d in dims.split(']')[:-1]]
    t = elem
    for i in range(len(ns) - 1, -1, -1):
        n = int(ns[i]) if ns[i] else None
        inner = ''.join('[%s]' % x for x in ns[i:])
        sp = spelling if i == 0 else (_elem_spelling(elem) + ' ' + inner)
        t = Type(prog, TypeKind.ARRAY, sp, size=None if n is None or t.size is None
                 else n * t.size, type=t, length=n)
    return t


def _elem_spelling(t):
    return t.type_name()


# ----------------------------------------------------------------- objects

from . import Error as _Error  # noqa: E402  (defined before this module loads)


class FaultError(_Error):
    """A read of kernel memory the dump does not hold: .address says where
    (a kvmstat.Error too, with the library's status and code)."""

    def __init__(self, message, address, status=None, code=None):
        super().__init__(message, status, address, code)
        self.message, self.address = message, address

    def __str__(self):
        return '%s: 0x%x' % (self.message, self.address) if self.address is not None \
            else self.message


class NotFoundError(_Error, LookupError):
    """A type, member or symbol the kernel does not have (a LookupError, and
    a kvmstat.Error with code KVS_E_NOTYPE or KVS_E_NOSYMBOL)."""

    def __init__(self, message, code=8):
        super().__init__(message, 'type not found' if code == 8 else 'symbol not found',
                         None, code)


class ObjectAbsentError(Exception):
    """An object without a value or an address."""


_INT_FMT = {1: 'b', 2: 'h', 4: 'i', 8: 'q'}


class _PyBase:
    """Object's fields and hot paths in Python, when _speedups (the same in
    C) is not built."""
    __slots__ = ('prog_', 'type_', 'address_', '_value', 'bit_offset_', 'bit_field_size_')

    def value_(self):
        """The value as Python sees it: an int (integers, enums, booleans as
        bool, pointers), a float, a dict (struct/union: member name to
        value), a list (array)."""
        return self._value_py()

    def member_(self, name):
        """The member named name (of a struct or union, or of what a pointer
        points to) as a reference object."""
        return self._member_py(name)

    def __getattr__(self, name):
        if name.startswith('__') and name.endswith('__'):
            raise AttributeError(name)
        try:
            return self._member_py(name)
        except LookupError as e:
            raise AttributeError(str(e)) from None
        except TypeError as e:
            raise AttributeError(str(e)) from None


def _load_speedups():
    """kvmstat._speedups (built by meson beside an installed module), or the
    file $KVMSTAT_SPEEDUPS names (a build tree's), or None."""
    import os
    try:
        from . import _speedups
        return _speedups
    except ImportError:
        pass
    path = os.environ.get('KVMSTAT_SPEEDUPS')
    if path and os.environ.get('KVMSTAT_PURE') != '1':
        import importlib.util
        spec = importlib.util.spec_from_file_location('kvmstat._speedups', path)
        if spec is not None:
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    return None


_speedups = None if __import__('os').environ.get('KVMSTAT_PURE') == '1' else _load_speedups()
if _speedups is not None:
    _speedups.setup(TypeKind, Type)
    _Base = _speedups.ObjectBase
else:
    _Base = _PyBase
    _PyBase.__init__ = lambda self, *a, **kw: self._init_py(*a, **kw)


class Object(_Base):
    """A value of a C type: a reference (read from kernel memory at
    address_) or a held value.  Object(prog, type, value=None, *,
    address=None, bit_offset=0, bit_field_size=None)."""
    __slots__ = ()

    def _init_py(self, prog, type=None, value=None, *, address=None, bit_offset=0,
                 bit_field_size=None):
        if type.__class__ is not Type:
            if isinstance(type, str):
                type = prog.type(type)
            elif type is None:
                if isinstance(value, Object):
                    type = value.type_
                elif isinstance(value, bool):
                    type = prog.type('_Bool')
                elif isinstance(value, float):
                    type = prog.type('double')
                elif isinstance(value, int):
                    type = prog.type('int')
                else:
                    raise TypeError('an Object needs a type')
            else:
                type = _resolve(type)
        self.prog_ = prog
        self.type_ = type
        self.address_ = address
        self.bit_offset_ = bit_offset
        self.bit_field_size_ = bit_field_size
        if address is not None:
            self._value = None
            return
        if value.__class__ is int and bit_field_size is None:
            w = type._wrap
            if w is None:
                w = type._wrapper()
            if w is not False:
                mask, sign = w
                value &= mask
                if value & sign:
                    value -= mask + 1
                self._value = value
                return
        if isinstance(value, Object):
            value = value.value_()
        if value is not None:
            value = _convert(type, value, bit_field_size)
        self._value = value

    # -- what it is
    def _peeled(self):
        return self.type_._peeled()

    @property
    def absent_(self):
        return self.address_ is None and self._value is None

    def _value_py(self):
        if self.address_ is None:
            if self._value is None:
                raise ObjectAbsentError('object absent')
            return self._value
        t = self.type_._pk or self.type_._peeled()
        k = t.kind
        if k in _SCALAR:
            if self.bit_field_size_ is not None:
                return self._bitfield(t)
            v = self.prog_._read_int(self.address_, t.size, t.is_signed)
            return bool(v) if k is TypeKind.BOOL else v
        if k == TypeKind.FLOAT:
            data = self.prog_.read(self.address_, t.size)
            return _struct.unpack('<d' if t.size == 8 else '<f', data)[0]
        if k == TypeKind.ARRAY:
            return [self[i].value_() for i in range(t.length or 0)]
        if k in (TypeKind.STRUCT, TypeKind.UNION):
            out = {}
            for m in t.members:
                if m.name is None:
                    out.update(Object(self.prog_, _resolve(m.type),
                                      address=self.address_ + m.bit_offset // 8).value_())
                else:
                    out[m.name] = self.member_(m.name).value_()
            return out
        raise TypeError('cannot read a value of %s' % self.type_.type_name())

    def _bitfield(self, t):
        bit = self.bit_offset_
        nbits = self.bit_field_size_
        nbytes = (bit + nbits + 7) // 8
        raw = int.from_bytes(self.prog_.read(self.address_, nbytes), 'little')
        v = (raw >> bit) & ((1 << nbits) - 1)
        if t.is_signed and v >> (nbits - 1):
            v -= 1 << nbits
        return v

    def read_(self):
        """This object as a value object (its bytes read now)."""
        if self.address_ is None:
            return self
        return Object(self.prog_, self.type_, value=self.value_(),
                      bit_field_size=self.bit_field_size_)

    def string_(self):
        """The bytes of a char array (to its first NUL) or of the string a
        char pointer points to."""
        t = self._peeled()
        if t.kind == TypeKind.ARRAY:
            if self.address_ is None:
                raise ObjectAbsentError('string_ of a value array')
            data = self.prog_._read_small(self.address_, t.size or 0)
            return data.split(b'\0', 1)[0]
        if t.kind == TypeKind.POINTER:
            return self.prog_._read_cstring(self.value_())
        raise TypeError('string_() wants a char array or pointer, not %s'
                        % self.type_.type_name())

    # -- members, elements
    def _member_py(self, name):
        t = self.type_._pk or self.type_._peeled()
        k = t.kind
        if k is TypeKind.POINTER:
            # p->member: no object for *p
            base = self.value_()
            t = t._tpk or t._target_peeled()
            k = t.kind
        else:
            base = self.address_
        if k is not TypeKind.STRUCT and k is not TypeKind.UNION:
            raise TypeError("'%s' is not a structure, union or pointer to one"
                            % self.type_.type_name())
        off, mt, bit, bits = t._mc.get(name) or t._mref(name)
        if base is None:
            raise ObjectAbsentError('member of a value object')
        o = _new(Object)
        o.prog_ = self.prog_
        o.type_ = mt
        o.address_ = base + off
        o._value = None
        o.bit_offset_ = bit or 0
        o.bit_field_size_ = bits
        return o

    def __dir__(self):
        t = self._peeled()
        if t.kind == TypeKind.POINTER:
            t = _resolve(t.type)
            while t.kind == TypeKind.TYPEDEF:
                t = _resolve(t.type)
        names = []
        if t.kind in (TypeKind.STRUCT, TypeKind.UNION):
            t.has_member('')
            names = list(t._by_name or ())
        return sorted(set(names) | set(super().__dir__()))

    def __getitem__(self, i):
        t = self._peeled()
        i = int(i)
        if t.kind == TypeKind.POINTER:
            et = _resolve(t.type)
            size = _sizeof(et)
            return Object(self.prog_, et, address=(self.value_() + i * size) & _MASK64)
        if t.kind == TypeKind.ARRAY:
            et = _resolve(t.type)
            if self.address_ is None:
                return Object(self.prog_, et, value=self._value[i])
            return Object(self.prog_, et, address=self.address_ + i * _sizeof(et))
        raise TypeError("'%s' is not an array or pointer" % self.type_.type_name())

    def __len__(self):
        t = self._peeled()
        if t.kind != TypeKind.ARRAY or t.length is None:
            raise TypeError("'%s' has no length" % self.type_.type_name())
        return t.length

    def __iter__(self):
        t = self._peeled()
        if t.kind != TypeKind.ARRAY:
            raise TypeError("'%s' is not iterable" % self.type_.type_name())
        for i in range(t.length or 0):
            yield self[i]

    def deref_(self):
        """What a pointer points to (a reference object)."""
        t = self._peeled()
        if t.kind != TypeKind.POINTER:
            raise TypeError("cannot dereference '%s'" % self.type_.type_name())
        return Object(self.prog_, _resolve(t.type), address=self.value_())

    def address_of_(self):
        """A pointer to this object."""
        if self.address_ is None:
            raise ValueError('cannot take address of value')
        if self.bit_field_size_ is not None:
            raise ValueError('cannot take address of bit field')
        pt = self.prog_.pointer_type(self.type_)
        return Object(self.prog_, pt, value=self.address_)

    # -- numbers
    def _num(self):
        v = self.value_()
        if isinstance(v, (dict, list)):
            raise TypeError("'%s' is not a number" % self.type_.type_name())
        return v

    def __int__(self):
        return int(self._num())

    def __index__(self):
        t = self._peeled()
        if t.kind not in (TypeKind.INT, TypeKind.BOOL, TypeKind.ENUM, TypeKind.POINTER):
            raise TypeError("'%s' is not an integer" % self.type_.type_name())
        return int(self._num())

    def __float__(self):
        return float(self._num())

    def __bool__(self):
        t = self._peeled()
        if t.kind in (TypeKind.STRUCT, TypeKind.UNION):
            raise TypeError("cannot convert '%s' to bool" % self.type_.type_name())
        if t.kind == TypeKind.ARRAY:
            return self.address_ is not None or bool(self._value)
        return bool(self._num())

    def _cmpval(self, other):
        return other._num() if isinstance(other, Object) else other

    def __eq__(self, other):
        return self._num() == self._cmpval(other)

    def __ne__(self, other):
        return self._num() != self._cmpval(other)

    def __lt__(self, other):
        return self._num() < self._cmpval(other)

    def __le__(self, other):
        return self._num() <= self._cmpval(other)

    def __gt__(self, other):
        return self._num() > self._cmpval(other)

    def __ge__(self, other):
        return self._num() >= self._cmpval(other)

    __hash__ = None

    def _arith(self, other, op, reflected=False):
        t = self._peeled()
        o = self._cmpval(other)
        if t.kind == TypeKind.POINTER and op in ('+', '-'):
            if isinstance(other, Object) and other._peeled().kind == TypeKind.POINTER:
                if op != '-' or reflected:
                    raise TypeError('invalid operands to pointer arithmetic')
                size = _sizeof(_resolve(t.type)) or 1
                return Object(self.prog_, 'long', value=(self._num() - o) // size)
            size = _sizeof(_resolve(t.type)) or 1
            v = self._num() + (o * size if op == '+' else -o * size)
            return Object(self.prog_, self.type_, value=v & _MASK64)
        a, b = (o, self._num()) if reflected else (self._num(), o)
        r = _OPS[op](a, b)
        rt = self.type_ if not isinstance(r, float) else self.prog_.type('double')
        return Object(self.prog_, rt, value=r)

    def __add__(self, o):
        return self._arith(o, '+')

    def __radd__(self, o):
        return self._arith(o, '+', True)

    def __sub__(self, o):
        return self._arith(o, '-')

    def __rsub__(self, o):
        return self._arith(o, '-', True)

    def __mul__(self, o):
        return self._arith(o, '*')

    def __rmul__(self, o):
        return self._arith(o, '*', True)

    def __floordiv__(self, o):
        return self._arith(o, '/')

    def __truediv__(self, o):
        return self._arith(o, '/')

    def __mod__(self, o):
        return self._arith(o, '%')

    def __and__(self, o):
        return self._arith(o, '&')

    def __rand__(self, o):
        return self._arith(o, '&', True)

    def __or__(self, o):
        return self._arith(o, '|')

    def __ror__(self, o):
        return self._arith(o, '|', True)

    def __xor__(self, o):
        return self._arith(o, '^')

    def __lshift__(self, o):
        return self._arith(o, '<<')

    def __rshift__(self, o):
        return self._arith(o, '>>')

    def __neg__(self):
        return Object(self.prog_, self.type_, value=-self._num())

    def __invert__(self):
        return Object(self.prog_, self.type_, value=~self._num())

    # -- printing
    def __repr__(self):
        if self.address_ is not None:
            s = 'Object(prog, %r, address=0x%x' % (self.type_.type_name(), self.address_)
            if self.bit_field_size_ is not None:
                s += ', bit_offset=%d, bit_field_size=%d' % (self.bit_offset_,
                                                             self.bit_field_size_)
            return s + ')'
        v = self._value
        shown = hex(v) if self._peeled().kind == TypeKind.POINTER and isinstance(v, int) \
            else repr(v)
        return 'Object(prog, %r, value=%s)' % (self.type_.type_name(), shown)

    def __str__(self):
        t = self._peeled()
        try:
            v = self.value_()
        except (FaultError, ObjectAbsentError) as e:
            return '(%s)<%s>' % (self.type_.type_name(), e)
        if t.kind == TypeKind.POINTER:
            return '(%s)0x%x' % (self.type_.type_name(), v)
        if t.kind in (TypeKind.STRUCT, TypeKind.UNION):
            body = ',\n'.join('\t.%s = %r' % (k, x) for k, x in v.items())
            return '(%s){\n%s\n}' % (self.type_.type_name(), body)
        return '(%s)%r' % (self.type_.type_name(), v)


_MASK64 = (1 << 64) - 1
_SCALAR = frozenset((TypeKind.INT, TypeKind.ENUM, TypeKind.POINTER, TypeKind.BOOL))
_new = object.__new__
_OPS = {
    '+': lambda a, b: a + b, '-': lambda a, b: a - b, '*': lambda a, b: a * b,
    '/': lambda a, b: a // b if isinstance(a, int) and isinstance(b, int) else a / b,
    '%': lambda a, b: a % b, '&': lambda a, b: a & b, '|': lambda a, b: a | b,
    '^': lambda a, b: a ^ b, '<<': lambda a, b: a << b, '>>': lambda a, b: a >> b,
}


def _sizeof(t):
    t = _resolve(t)
    while t.kind == TypeKind.TYPEDEF:
        t = _resolve(t.type)
    if t.kind == TypeKind.VOID or t.kind == TypeKind.FUNCTION:
        return 1 if t.kind == TypeKind.VOID else None
    return t.size


def _convert(t, value, bit_field_size=None):
    """A Python value held as C type t would hold it (integers wrap)."""
    t = _resolve(t)
    while t.kind == TypeKind.TYPEDEF:
        t = _resolve(t.type)
    k = t.kind
    if k in (TypeKind.INT, TypeKind.ENUM, TypeKind.POINTER):
        bits = bit_field_size or (t.size or 8) * 8
        v = int(value) & ((1 << bits) - 1)
        if t.is_signed and v >> (bits - 1):
            v -= 1 << bits
        return v
    if k == TypeKind.BOOL:
        return bool(value)
    if k == TypeKind.FLOAT:
        return float(value)
    return value


# ----------------------------------------------------------- free functions

def cast(type, obj):
    """obj's value as type (a Type or its spelling)."""
    prog = obj.prog_
    t = prog.type(type) if isinstance(type, str) else type
    return Object(prog, t, value=obj._num())


def reinterpret(type, obj):
    """obj's bytes (its address) read as type."""
    prog = obj.prog_
    t = prog.type(type) if isinstance(type, str) else type
    if obj.address_ is None:
        raise ValueError('cannot reinterpret a value object')
    return Object(prog, t, address=obj.address_)


def sizeof(type_or_obj):
    """The size in bytes of a Type or of an Object's type."""
    t = type_or_obj.type_ if isinstance(type_or_obj, Object) else type_or_obj
    s = _sizeof(t)
    if s is None:
        raise TypeError("cannot get size of '%s'" % t.type_name())
    return s


def offsetof(type, member):
    """The byte offset of member (a dotted path) in type."""
    off = 0
    t = type
    parts = member.split('.')
    for i, part in enumerate(parts):
        m = t.member(part)
        off += m.bit_offset
        if i + 1 < len(parts):
            t = _resolve(m.type)
    return off // 8


def container_of(ptr, type, member):
    """The enclosing object of type whose member ptr points to: a pointer
    to type."""
    prog = ptr.prog_
    t = prog.type(type) if isinstance(type, str) else type
    addr = (int(ptr) - offsetof(t, member)) & _MASK64
    return Object(prog, prog.pointer_type(t), value=addr)


def NULL(prog, type):
    """A null pointer of type."""
    return Object(prog, type, value=0)


def _enum_list(prog, lookup):
    out = []

    def cb(_arg, name, value):
        out.append(TypeEnumerator(name.decode('utf-8', 'surrogateescape'), value))
        return 0
    return out, cb


__all__ = ['TypeKind', 'Type', 'TypeMember', 'TypeEnumerator', 'Object', 'FaultError',
           'ObjectAbsentError', 'cast', 'reinterpret', 'sizeof', 'offsetof',
           'container_of', 'NULL', 'parse_type']
_ = _census
