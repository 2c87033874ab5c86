"""FreeBSD kernel helpers, named after the kernel's own macros and
functions, for scripts written the way drgn's Linux helpers are used:

    from kvmstat.helpers.freebsd import for_each_proc, tailq_foreach
    for p in for_each_proc(prog):
        print(p.p_pid.value_(), p.p_comm.string_())

queue(3)'s lists (TAILQ, LIST, STAILQ, SLIST: *_foreach(head, field)),
processes and threads, per-CPU data (pcpu, zpcpu, counter(9)), and malloc
types and UMA zones as typed objects (from libkvmstat's walkers, whichever
FreeBSD generation the kernel is).  Every walk is bounded."""
from .._object import Object, container_of, NULL
from .common import WALK_LIMIT, WalkError

__all__ = ['tailq_foreach', 'tailq_foreach_reverse', 'list_foreach', 'stailq_foreach',
           'slist_foreach', 'tailq_empty', 'list_empty', 'for_each_proc', 'find_proc',
           'for_each_thread', 'for_each_cpu', 'pcpu', 'zpcpu_get', 'counter_u64_fetch',
           'for_each_malloc_type', 'find_malloc_type', 'for_each_uma_zone',
           'container_of', 'NULL']


def _walk(first, nxt, what):
    elm = first
    n = 0
    while elm.value_():
        n += 1
        if n > WALK_LIMIT:
            raise WalkError('%s does not end' % what)
        yield elm
        elm = nxt(elm)


def _head(head):
    """head itself (a struct) when given a pointer to it."""
    return head.deref_() if head._peeled().kind == 'pointer' else head


def tailq_foreach(head, field):
    """TAILQ_FOREACH: each element (a pointer) of the tail queue head,
    linked through field (a TAILQ_ENTRY member of the element)."""
    head = _head(head)
    return _walk(head.tqh_first, lambda e: e.member_(field).tqe_next, 'TAILQ')


def _word(prog, addr):
    return Object(prog, 'unsigned long', address=addr).value_()


def tailq_foreach_reverse(head, field):
    """TAILQ_FOREACH_REVERSE: last to first.  An entry's tqe_prev (and the
    head's tqh_last) points at the previous next-pointer; read as a head,
    the word after it is that entry's own back pointer, whose target is the
    element before (TAILQ_PREV, TAILQ_LAST)."""
    head = _head(head)
    prog = head.prog_
    ptype = head.tqh_first.type_
    elm = _word(prog, _word(prog, head.tqh_last.value_() + 8))
    n = 0
    while elm:
        n += 1
        if n > WALK_LIMIT:
            raise WalkError('TAILQ does not end')
        o = Object(prog, ptype, value=elm)
        yield o
        elm = _word(prog, _word(prog, o.member_(field).tqe_prev.value_() + 8))


def list_foreach(head, field):
    """LIST_FOREACH: each element of the list head, linked through field."""
    head = _head(head)
    return _walk(head.lh_first, lambda e: e.member_(field).le_next, 'LIST')


def stailq_foreach(head, field):
    """STAILQ_FOREACH: each element of the singly-linked tail queue, through field."""
    head = _head(head)
    return _walk(head.stqh_first, lambda e: e.member_(field).stqe_next, 'STAILQ')


def slist_foreach(head, field):
    """SLIST_FOREACH: each element of the singly-linked list, through field."""
    head = _head(head)
    return _walk(head.slh_first, lambda e: e.member_(field).sle_next, 'SLIST')


def tailq_empty(head):
    """TAILQ_EMPTY: whether the tail queue is empty."""
    return not _head(head).tqh_first


def list_empty(head):
    """LIST_EMPTY: whether the list is empty."""
    return not _head(head).lh_first


# -------------------------------------------------------- processes, threads

def for_each_proc(prog):
    """FOREACH_PROC_IN_SYSTEM: each struct proc * on allproc."""
    return list_foreach(prog['allproc'], 'p_list')


def find_proc(prog, pid):
    """pfind: the process with pid pid (struct proc *), or NULL."""
    for p in for_each_proc(prog):
        if p.p_pid.value_() == pid:
            return p
    return NULL(prog, 'struct proc *')


def for_each_thread(proc):
    """FOREACH_THREAD_IN_PROC: each struct thread * of the process."""
    return tailq_foreach(proc.p_threads, 'td_plist')


# ------------------------------------------------------------------- CPUs

def for_each_cpu(prog):
    """The CPU ids in all_cpus (they may be sparse)."""
    mask = prog['all_cpus']
    bits = mask.__bits if mask._peeled().kind == 'struct' else mask
    out = []
    for i, word in enumerate(bits):
        w = word.value_()
        b = 0
        while w:
            if w & 1:
                out.append(i * 64 + b)
            w >>= 1
            b += 1
    return iter(out)


def pcpu(prog, cpu):
    """CPU cpu's struct pcpu * (cpuid_to_pcpu[], else the __pcpu array or
    the page a 13+ kernel's __pcpu pointer starts)."""
    if 'cpuid_to_pcpu' in prog:
        return prog['cpuid_to_pcpu'][cpu]
    p = prog['__pcpu']
    if p._peeled().kind == 'array':
        return p[cpu].address_of_()
    return Object(prog, p.type_, value=p.value_() + cpu * prog.type('struct pcpu').size)


def _zpcpu_base(prog, base):
    """Where CPU 0's copy of a zpcpu object lies: a 13+ amd64 kernel
    stores offsets from __pcpu (its __pcpu is a pointer), older ones
    addresses."""
    p = prog['__pcpu']
    if p._peeled().kind == 'pointer':
        return p.value_() + base
    return base


def zpcpu_get(obj, cpu):
    """zpcpu_get_cpu: CPU cpu's copy of the per-CPU object obj (a pointer)."""
    prog = obj.prog_
    stride = prog.type('struct pcpu').size
    return Object(prog, obj.type_, value=_zpcpu_base(prog, obj.value_()) + cpu * stride)


def counter_u64_fetch(counter):
    """counter(9)'s value: the sum of every CPU's part, over the CPUs the
    kernel has (all_cpus, as its own counter_u64_fetch's CPU_FOREACH; else
    0 to mp_maxid)."""
    prog = counter.prog_
    if 'all_cpus' in prog:
        cpus = list(for_each_cpu(prog))
    else:
        cpus = range(prog['mp_maxid'].value_() + 1)
    stride = prog.type('struct pcpu').size
    base = _zpcpu_base(prog, counter.value_())
    total = 0
    for cpu in cpus:
        total += Object(prog, 'unsigned long', address=base + cpu * stride).value_()
    return total & ((1 << 64) - 1)


# ----------------------------------------------------- the allocators

def for_each_malloc_type(prog):
    """Each malloc(9) type (struct malloc_type *), from kmemstatistics."""
    mt = prog['kmemstatistics']
    return _walk(mt, lambda e: e.ks_next, 'kmemstatistics')


def find_malloc_type(prog, name):
    """The malloc type whose ks_shortdesc is name (struct malloc_type *), or NULL."""
    if isinstance(name, str):
        name = name.encode()
    for mt in for_each_malloc_type(prog):
        if mt.ks_shortdesc.string_() == name:
            return mt
    return NULL(prog, 'struct malloc_type *')


def for_each_uma_zone(prog):
    """Each UMA zone (struct uma_zone *), as libkvmstat's UMA walker finds
    them in this kernel's generation."""
    for mt in prog.uma_zones():
        yield Object(prog, 'struct uma_zone *', value=mt.kaddr)
