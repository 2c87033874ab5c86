"""Linux kernel helpers with drgn's names and behaviour:

    from kvmstat.helpers.linux import list_for_each_entry, for_each_task
    for task in for_each_task(prog):
        print(task.pid.value_(), task.comm.string_())

Lists (list_head, hlist), red-black trees, tasks, per-CPU data, slab caches
and their objects (through libkvmstat's SLUB walker), pages, and the memory
census (meminfo, whatis).  Every walk is bounded (helpers.common)."""
from .. import _object
from .._object import Object, container_of, NULL, sizeof
from .common import WALK_LIMIT, WalkError

__all__ = ['list_empty', 'list_is_singular', 'list_first_entry', 'list_last_entry',
           'list_next_entry', 'list_prev_entry', 'list_for_each', 'list_for_each_reverse',
           'list_for_each_entry', 'list_for_each_entry_reverse', 'list_count_nodes',
           'hlist_empty', 'hlist_for_each', 'hlist_for_each_entry',
           'rb_first', 'rb_last', 'rb_next', 'rb_prev', 'rb_parent',
           'rbtree_inorder_for_each', 'rbtree_inorder_for_each_entry',
           'for_each_task', 'find_task', 'task_state_to_char', 'for_each_possible_cpu',
           'for_each_online_cpu', 'for_each_present_cpu', 'per_cpu_ptr', 'per_cpu',
           'for_each_slab_cache', 'find_slab_cache', 'slab_cache_for_each_allocated_object',
           'slab_object_info', 'SlabObjectInfo', 'find_containing_slab_cache',
           'pfn_to_page', 'page_to_pfn', 'page_to_virt', 'virt_to_page', 'pfn_to_virt',
           'virt_to_pfn', 'page_to_phys', 'PageSlab', 'decode_page_flags', 'meminfo',
           'whatis', 'container_of', 'NULL']


# ------------------------------------------------------------------ lists

def list_empty(head):
    """Whether the list whose head is head (a list_head or a pointer to one) is empty."""
    head = _ptr(head)
    return head.next.value_() == head.value_()


def list_is_singular(head):
    """Whether the list holds exactly one entry."""
    head = _ptr(head)
    nxt = head.next
    return nxt.value_() != head.value_() and nxt.value_() == head.prev.value_()


def list_first_entry(head, type, member):
    """The first entry of the list, a pointer to type, linked through member."""
    return container_of(_ptr(head).next, type, member)


def list_last_entry(head, type, member):
    """The last entry of the list, a pointer to type, linked through member."""
    return container_of(_ptr(head).prev, type, member)


def list_next_entry(pos, member):
    """The entry after pos (a pointer to an entry) on its list, through member."""
    return container_of(getattr(pos, member).next, pos.type_.type, member)


def list_prev_entry(pos, member):
    """The entry before pos on its list, through member."""
    return container_of(getattr(pos, member).prev, pos.type_.type, member)


def _ptr(obj):
    """A pointer to obj (a list_head, or a pointer to one)."""
    if obj._peeled().kind == _object.TypeKind.POINTER:
        return obj
    return obj.address_of_()


def _list_addrs(head, field):
    """The addresses of a list's nodes, head excluded (field: 'next' or
    'prev'), read as plain words: the walk makes no object per step."""
    head = _ptr(head)
    prog = head.prog_
    stop = head.value_()
    off = _object.offsetof(prog.type('struct list_head'), field)
    read = prog._read_int
    pos = read(stop + off, 8, False)
    sp = _object._speedups
    if sp is not None and hasattr(sp, 'walk'):
        try:
            yield from sp.walk(prog, pos, off, stop, WALK_LIMIT)
        except RuntimeError as e:
            raise WalkError(str(e)) from None
        return
    n = 0
    while pos != stop:
        n += 1
        if n > WALK_LIMIT:
            raise WalkError('list at 0x%x does not end' % stop)
        yield pos
        pos = read(pos + off, 8, False)


def list_for_each(head):
    """Each struct list_head * on the list whose head is head."""
    head = _ptr(head)
    t = head.type_
    prog = head.prog_
    for a in _list_addrs(head, 'next'):
        yield Object(prog, t, value=a)


def list_for_each_reverse(head):
    """Each struct list_head * on the list, last to first."""
    head = _ptr(head)
    t = head.type_
    prog = head.prog_
    for a in _list_addrs(head, 'prev'):
        yield Object(prog, t, value=a)


def list_for_each_entry(type, head, member):
    """Each entry (a pointer to type) of the list, linked through member."""
    prog = head.prog_
    t = prog.type(type) if isinstance(type, str) else type
    ptype = prog.pointer_type(t)
    off = _object.offsetof(t, member)
    for a in _list_addrs(head, 'next'):
        yield Object(prog, ptype, value=a - off)


def list_for_each_entry_reverse(type, head, member):
    """Each entry (a pointer to type) of the list, last to first."""
    prog = head.prog_
    t = prog.type(type) if isinstance(type, str) else type
    ptype = prog.pointer_type(t)
    off = _object.offsetof(t, member)
    for a in _list_addrs(head, 'prev'):
        yield Object(prog, ptype, value=a - off)


def list_count_nodes(head):
    """The number of entries on the list."""
    return sum(1 for _ in list_for_each(head))


def hlist_empty(head):
    """Whether the hlist whose head is head is empty."""
    return not _ptr(head).first


def hlist_for_each(head):
    """Each struct hlist_node * on the hlist."""
    pos = _ptr(head).first
    n = 0
    while pos.value_():
        n += 1
        if n > WALK_LIMIT:
            raise WalkError('hlist does not end')
        yield pos
        pos = pos.next


def hlist_for_each_entry(type, head, member):
    """Each entry (a pointer to type) of the hlist, linked through member."""
    prog = head.prog_
    t = prog.type(type) if isinstance(type, str) else type
    ptype = prog.pointer_type(t)
    off = _object.offsetof(t, member)
    for pos in hlist_for_each(head):
        yield Object(prog, ptype, value=pos.value_() - off)


# ------------------------------------------------------------ rbtrees

def rb_parent(node):
    """A node's parent (struct rb_node *), from __rb_parent_color."""
    node = _ptr(node)
    return Object(node.prog_, node.type_, value=node.__rb_parent_color.value_() & ~3)


def _rb_root_node(root):
    root = _ptr(root)
    if root._peeled().type.type_name().endswith('rb_root_cached'):
        return root.rb_root.rb_node
    return root.rb_node


def rb_first(root):
    """The leftmost node (struct rb_node *) of an rb_root or rb_root_cached, or NULL."""
    node = _rb_root_node(root)
    if not node:
        return node
    while node.rb_left:
        node = node.rb_left
    return node


def rb_last(root):
    """The rightmost node of the tree, or NULL."""
    node = _rb_root_node(root)
    if not node:
        return node
    while node.rb_right:
        node = node.rb_right
    return node


def rb_next(node):
    """The node after node in order, or NULL."""
    node = _ptr(node)
    if node.rb_right:
        node = node.rb_right
        while node.rb_left:
            node = node.rb_left
        return node
    parent = rb_parent(node)
    while parent and node.value_() == parent.rb_right.value_():
        node = parent
        parent = rb_parent(node)
    return parent


def rb_prev(node):
    """The node before node in order, or NULL."""
    node = _ptr(node)
    if node.rb_left:
        node = node.rb_left
        while node.rb_right:
            node = node.rb_right
        return node
    parent = rb_parent(node)
    while parent and node.value_() == parent.rb_left.value_():
        node = parent
        parent = rb_parent(node)
    return parent


def rbtree_inorder_for_each(root):
    """Each node of the tree, in order."""
    node = rb_first(root)
    n = 0
    while node:
        n += 1
        if n > WALK_LIMIT:
            raise WalkError('rbtree does not end')
        yield node
        node = rb_next(node)


def rbtree_inorder_for_each_entry(type, root, member):
    """Each entry (a pointer to type) of the tree, in order, through member."""
    prog = root.prog_
    t = prog.type(type) if isinstance(type, str) else type
    ptype = prog.pointer_type(t)
    off = _object.offsetof(t, member)
    for node in rbtree_inorder_for_each(root):
        yield Object(prog, ptype, value=node.value_() - off)


# ------------------------------------------------------------------ tasks

def for_each_task(prog):
    """Every task with a pid (struct task_struct *), as drgn lists them:
    each thread group leader on init_task's tasks list, and its threads;
    not the idle tasks (init_task, swapper/N), which have none."""
    init = prog['init_task']
    t = prog.type('struct task_struct')
    has_threads = t.has_member('thread_node')
    for leader in list_for_each_entry('struct task_struct', init.tasks.address_of_(), 'tasks'):
        if has_threads:
            head = leader.signal.thread_head.address_of_()
            for th in list_for_each_entry('struct task_struct', head, 'thread_node'):
                yield th
        else:
            yield leader
            for th in list_for_each_entry('struct task_struct', leader.thread_group.address_of_(),
                                          'thread_group'):
                yield th


def find_task(prog, pid):
    """The task with pid pid (struct task_struct *), or NULL."""
    for task in for_each_task(prog):
        if task.pid.value_() == pid:
            return task
    return NULL(prog, 'struct task_struct *')


_TASK_STATE = 'RSDTtXZPI'


def task_state_to_char(task):
    """ps's state letter: R S D T t X Z P I (as the kernel's task_state_to_char)."""
    t = task.prog_.type('struct task_struct')
    state = (task.__state if t.has_member('__state') else task.state).value_()
    exit_state = task.exit_state.value_()
    bits = (state | exit_state) & 0x7f
    # TASK_IDLE (TASK_UNINTERRUPTIBLE | TASK_NOLOAD) exactly: 'I'
    if state == 0x402:
        return 'I'
    if bits == 0:
        return 'R'
    return _TASK_STATE[min(bits.bit_length(), len(_TASK_STATE) - 1)]


# ------------------------------------------------------------------- CPUs

def _cpumask_bits(prog, name):
    mask = prog[name]
    bits = mask.bits
    out = []
    for i, word in enumerate(bits):
        w = word.value_()
        b = 0
        while w:
            if w & 1:
                out.append(i * 64 + b)
            w >>= 1
            b += 1
    return out


def for_each_possible_cpu(prog):
    """The ids of the CPUs in __cpu_possible_mask."""
    return iter(_cpumask_bits(prog, '__cpu_possible_mask'))


def for_each_online_cpu(prog):
    """The ids of the CPUs in __cpu_online_mask."""
    return iter(_cpumask_bits(prog, '__cpu_online_mask'))


def for_each_present_cpu(prog):
    """The ids of the CPUs in __cpu_present_mask."""
    return iter(_cpumask_bits(prog, '__cpu_present_mask'))


def per_cpu_ptr(ptr, cpu):
    """ptr (a __percpu pointer) for CPU cpu."""
    prog = ptr.prog_
    off = prog['__per_cpu_offset'][cpu].value_()
    return Object(prog, ptr.type_, value=(ptr.value_() + off) & ((1 << 64) - 1))


def per_cpu(var, cpu):
    """The per-CPU variable var (a reference object) for CPU cpu."""
    return per_cpu_ptr(var.address_of_(), cpu)[0]


# ------------------------------------------------------------------- slab

def for_each_slab_cache(prog):
    """Each slab cache (struct kmem_cache *) on slab_caches."""
    return list_for_each_entry('struct kmem_cache', prog['slab_caches'].address_of_(), 'list')


def find_slab_cache(prog, name):
    """The slab cache named name (struct kmem_cache *), or None."""
    if isinstance(name, str):
        name = name.encode()
    for s in for_each_slab_cache(prog):
        if s.name.string_() == name:
            return s
    return None


def slab_cache_for_each_allocated_object(slab_cache, type):
    """Each allocated object of the cache, as a pointer to type (the
    library's SLUB walk: CPU freelists, partial lists and full slabs)."""
    prog = slab_cache.prog_
    name = slab_cache.name.string_().decode('utf-8', 'surrogateescape')
    ptype = prog.pointer_type(type)
    for o in prog.slab_objects(name):
        if o.allocated:
            yield Object(prog, ptype, value=o.address)


class SlabObjectInfo:
    """What slab_object_info says of an address: slab_cache (a struct
    kmem_cache *), slab (struct slab * or struct page *), address (the
    object's start) and allocated."""
    __slots__ = ('slab_cache', 'slab', 'address', 'allocated')

    def __init__(self, slab_cache, slab, address, allocated):
        self.slab_cache, self.slab, self.address, self.allocated = (slab_cache, slab,
                                                                    address, allocated)

    def __repr__(self):
        return 'SlabObjectInfo(slab_cache=%r, slab=%r, address=0x%x, allocated=%r)' % (
            self.slab_cache, self.slab, self.address, self.allocated)


def slab_object_info(prog, addr):
    """The slab object holding addr, or None (drgn's slab_object_info)."""
    w = prog.whatis(int(addr))
    if w.kind != 'slab':
        return None
    slab_t = 'struct slab *' if _has_type(prog, 'struct slab') else 'struct page *'
    return SlabObjectInfo(Object(prog, 'struct kmem_cache *', value=w.cache_address),
                          Object(prog, slab_t, value=getattr(w, 'page', 0) or 0),
                          w.object, w.allocated)


def find_containing_slab_cache(prog, addr):
    """The struct kmem_cache * whose slab holds addr, or NULL."""
    info = slab_object_info(prog, addr)
    if info is None:
        return NULL(prog, 'struct kmem_cache *')
    return info.slab_cache


def _has_type(prog, name):
    try:
        prog.type(name)
        return True
    except LookupError:
        return False


# ------------------------------------------------------------------ pages

def _vmemmap(prog):
    try:
        return prog['vmemmap_base'].value_()
    except (KeyError, LookupError):
        return 0xffffea0000000000


def _page_offset(prog):
    try:
        return prog['page_offset_base'].value_()
    except (KeyError, LookupError):
        return 0xffff888000000000


def pfn_to_page(prog, pfn):
    """The struct page * of page frame pfn (vmemmap)."""
    return Object(prog, 'struct page *',
                  value=_vmemmap(prog) + int(pfn) * sizeof(prog.type('struct page')))


def page_to_pfn(page):
    """The page frame number a struct page * describes."""
    prog = page.prog_
    return (page.value_() - _vmemmap(prog)) // sizeof(prog.type('struct page'))


def page_to_phys(page):
    """The physical address of a page's memory."""
    return page_to_pfn(page) << 12


def page_to_virt(page):
    """The direct-map address (void *) of a page's memory."""
    prog = page.prog_
    return Object(prog, 'void *', value=_page_offset(prog) + (page_to_pfn(page) << 12))


def pfn_to_virt(prog, pfn):
    """The direct-map address (void *) of page frame pfn."""
    return Object(prog, 'void *', value=_page_offset(prog) + (int(pfn) << 12))


def virt_to_pfn(prog, addr):
    """The page frame number of a direct-map address."""
    return (int(addr) - _page_offset(prog)) >> 12


def virt_to_page(prog, addr):
    """The struct page * of a direct-map address."""
    return pfn_to_page(prog, virt_to_pfn(prog, addr))


def PageSlab(page):
    """Whether the page belongs to the slab allocator (PG_slab, by the kernel's enum pageflags)."""
    prog = page.prog_
    bit = prog.constant('PG_slab', 'enum pageflags').value_()
    return bool(page.flags.value_() >> bit & 1)


def decode_page_flags(page):
    """The page's flags as 'PG_a|PG_b' by the kernel's own enum pageflags."""
    prog = page.prog_
    flags = page.flags.value_()
    names = []
    seen = set()
    for e in prog.type('enum pageflags').enumerators:
        if e.value in seen or e.name.startswith('__') or e.value >= 64:
            continue
        if e.name == 'NR_PAGEFLAGS':
            break
        seen.add(e.value)
        if flags >> e.value & 1:
            names.append(e.name)
    return '|'.join(names)


# ----------------------------------------------------------------- census

def meminfo(prog):
    """/proc/meminfo's lines from the dump: {name: kB or count}."""
    return {c.name: c.value for c in prog.meminfo()}


def whatis(prog, addr):
    """What holds addr (kvmstat whatis): a kvmstat.WhatIs record."""
    return prog.whatis(int(addr))
