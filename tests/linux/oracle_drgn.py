#!/usr/bin/python3
"""Independent SLUB + profile oracle on a Linux dump, using drgn (Debian's
python3-drgn 0.0.22, hence /usr/bin/python3 and not whatever python3 is first
in PATH).

    oracle_drgn.py DUMP VMLINUX [--no-profile] [--no-page-walk] [--top N] [--ram]
                   [--image-alias]

DUMP may also be a raw guest-RAM file (QEMU memory-backend-file; --ram, or a
name ending in .ram), even while the guest runs: then the VMCOREINFO note is
found by scanning the RAM and drgn gets a stub core plus memory segments.
Reads of a running guest are racy: a walk that fails is an error, not a retry.

Prints JSON on stdout:
  caches: one entry per kmem_cache on slab_caches, in list order:
    name, address (hex), object_size, size, offset, objects_per_slab (oo & 0xffff),
    order (oo >> 16), num_slabs, num_objs (sums over nodes of nr_slabs and
    total_objects), active_objs (what /proc/slabinfo prints: num_objs minus the
    free objects on the node partial lists), allocated (exact: num_objs minus
    free on node partial slabs, on each CPU slab, on each CPU's lockless
    freelist and on each CPU's partial slabs), the parts of that sum, and
    allocated_pagewalk (a second, independent exact count: every page with
    PG_slab whose slab_cache is this cache contributes objects minus the length
    of its freelist, minus the CPU freelists of the CPU slabs).
  profile: prof_on, prof_shift, prof_len, _stext, total, every non-zero bin of
    prof_buffer as {"index": count}, and the top N bins with symbol names.
    Where the kernel has cpu_profile_hits (each CPU's two pages of recent
    {bin, hits} pairs not yet added to prof_buffer), their hits are added:
    what /proc/profile would show once it flushed them (hash_hits says how
    many).

drgn 0.0.22 reads the paging ELF and kdump files (with a filled utsname), not
QEMU's phys-only ELF (paging=false) nor the raw flattened kdump.  With
--image-alias it reads the phys-only ELF too: drgn opens the file as usual and
gets one more memory segment, the kernel image's virtual range read as the
physical memory under it (phys = virt - __START_KERNEL_map + phys_base, with
phys_base from the file's VMCOREINFO note), as a kexec-made vmcore carries
it; everything else goes through drgn's own page-table walker from there.
"""
import json
import struct
import sys
import time

import drgn
from drgn import FaultError, Object
from drgn.helpers.linux.cpumask import for_each_possible_cpu
from drgn.helpers.linux.list import list_for_each_entry
from drgn.helpers.linux.percpu import per_cpu_ptr

MAX_FREELIST = 1 << 17


def bswap64(x):
    return int.from_bytes(x.to_bytes(8, 'little'), 'big')


START_KERNEL_MAP = 0xffffffff80000000


def find_vmcoreinfo_note(mm):
    """Find the VMCOREINFO ELF note in raw guest RAM (file offset = phys):
    an Elf64_Nhdr (namesz 11, type 0) + "VMCOREINFO\\0" + pad + "OSRELEASE=..."."""
    pos = 0
    while True:
        i = mm.find(b'OSRELEASE=', pos)
        if i < 0:
            raise SystemExit('oracle_drgn: no VMCOREINFO note in the RAM file')
        pos = i + 1
        if i < 24 or mm[i - 12:i] != b'VMCOREINFO\0\0':
            continue
        namesz, descsz, ntype = struct.unpack_from('<III', mm, i - 24)
        if namesz == 11 and ntype == 0 and 0 < descsz < 65536:
            return i - 24, bytes(mm[i - 24:i + ((descsz + 3) & ~3)]), bytes(mm[i:i + descsz])


def elf_vmcoreinfo(path):
    """The VMCOREINFO note's text of an ELF core, from its PT_NOTE segments."""
    with open(path, 'rb') as f:
        eh = f.read(64)
        if eh[:4] != b'\x7fELF':
            raise SystemExit(f'oracle_drgn: {path} is not an ELF file')
        phoff, = struct.unpack_from('<Q', eh, 32)
        phentsize, phnum = struct.unpack_from('<HH', eh, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        for i in range(phnum):
            p_type, _, off, _, _, filesz = struct.unpack_from('<IIQQQQ', ph, i * phentsize)
            if p_type != 4:
                continue
            f.seek(off)
            notes = f.read(filesz)
            o = 0
            while o + 12 <= len(notes):
                namesz, descsz, ntype = struct.unpack_from('<III', notes, o)
                name = notes[o + 12:o + 12 + namesz].rstrip(b'\0')
                d = o + 12 + ((namesz + 3) & ~3)
                if name == b'VMCOREINFO':
                    return notes[d:d + descsz].decode()
                o = d + ((descsz + 3) & ~3)
    raise SystemExit(f'oracle_drgn: no VMCOREINFO note in {path}')


def add_image_alias(prog, dump):
    info = dict(l.split('=', 1) for l in elf_vmcoreinfo(dump).split('\n') if '=' in l)
    phys_base = int(info['NUMBER(phys_base)'])

    def read(address, count, offset, physical):
        return prog.read(offset, count, True)
    prog.add_memory_segment((START_KERNEL_MAP - phys_base) & (2**64 - 1), 1 << 30, read, False)
    return {'image_alias': True, 'phys_base': phys_base, 'kerneloffset': info.get('KERNELOFFSET')}


def stub_core(note, path):
    """An ELF core holding nothing but one PT_NOTE (the VMCOREINFO note)."""
    ehdr = bytearray(64)
    ehdr[:16] = b'\x7fELF\x02\x01\x01' + bytes(9)
    struct.pack_into('<HHIQQQIHHHHHH', ehdr, 16, 4, 62, 1, 0, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    phdr = struct.pack('<IIQQQQQQ', 4, 0, 120, 0, 0, len(note), len(note), 4)   # PT_NOTE
    with open(path, 'wb') as f:
        f.write(bytes(ehdr) + phdr + note)


def setup_ram(prog, ram):
    """Make drgn read a raw guest-RAM file (QEMU memory-backend-file, file
    offset = guest physical address, flat below 3.5 GiB) like a core dump:
    a stub core for VMCOREINFO, then physical, kernel-image and direct-map
    segments. Everything else goes through drgn's page-table walker."""
    import mmap
    import tempfile
    f = open(ram, 'rb')
    mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    size = len(mm)
    note_off, note, desc = find_vmcoreinfo_note(mm)
    info = dict(l.split('=', 1) for l in desc.decode().split('\n') if '=' in l)
    phys_base = int(info['NUMBER(phys_base)'])
    stub = tempfile.NamedTemporaryFile(prefix='kvs-stub-', suffix='.core', delete=False)
    stub.close()
    stub_core(note, stub.name)
    prog.set_core_dump(stub.name)
    import os
    os.unlink(stub.name)

    def read(address, count, offset, physical):
        return mm[offset:offset + count]
    prog.add_memory_segment(0, size, read, True)
    # kernel image: phys = v - __START_KERNEL_map + phys_base (phys_base may be < 0)
    prog.add_memory_segment((START_KERNEL_MAP - phys_base) & (2**64 - 1), min(size, 1 << 30), read, False)
    return mm, size, {'vmcoreinfo_phys': hex(note_off), 'phys_base': phys_base,
                      'kerneloffset': info.get('KERNELOFFSET')}


def prof_counts(prog, buf_ptr, plen):
    """The profile's counters: {bin: count} of prof_buffer's non-zero bins,
    plus the hits each online CPU still holds in its two hash pages
    (cpu_profile_hits, where the kernel has it), and how many those were."""
    data = prog.read(buf_ptr, plen * 4)
    bins = {}
    step = 4096                       # skip all-zero stretches quickly
    zero = bytes(step)
    for base in range(0, len(data), step):
        part = data[base:base + step]
        if part == zero[:len(part)]:
            continue
        for j, c in enumerate(struct.unpack(f'<{len(part) // 4}I', part)):
            if c:
                bins[base // 4 + j] = c
    # hits still held in each online CPU's two hash pages
    hash_hits = 0
    try:
        pairs = prog['cpu_profile_hits']
    except KeyError:
        pairs = None
    if pairs is not None:
        from drgn.helpers.linux.cpumask import for_each_online_cpu
        from drgn.helpers.linux.percpu import per_cpu
        page_size = prog['PAGE_SIZE'].value_()
        for cpu in for_each_online_cpu(prog):
            for half in per_cpu(pairs, cpu):
                if not half.value_():
                    continue
                for pc, hits in struct.iter_unpack('<II', prog.read(half.value_(), page_size)):
                    if hits:
                        bins[pc] = bins.get(pc, 0) + hits
                        hash_hits += hits
    return bins, hash_hits


class Oracle:
    def __init__(self, dump, vmlinux, ram=False, image_alias=False):
        t0 = time.monotonic()
        self.prog = prog = drgn.Program()
        self.ram_info = None
        if ram:
            mm, size, self.ram_info = setup_ram(prog, dump)
        else:
            prog.set_core_dump(dump)
            if image_alias:
                self.ram_info = add_image_alias(prog, dump)
        prog.load_debug_info([vmlinux], default=False, main=False)
        if ram:
            # direct map, now that page_offset_base can be read through the image
            pob = prog['page_offset_base'].value_()
            prog.add_memory_segment(pob, size, lambda a, c, o, p: mm[o:o + c], False)
            self.ram_info['page_offset_base'] = hex(pob)
        self.t_load = time.monotonic() - t0
        self.errors = []
        self.cpus = list(for_each_possible_cpu(prog))
        self.nr_node_ids = prog['nr_node_ids'].value_()
        self.hardened = prog.type('struct kmem_cache').has_member('random')

    def read_word(self, addr):
        return self.prog.read_u64(addr)

    def freelist_len(self, s, head, limit):
        """Length of a SLUB freelist starting at object address head."""
        n = 0
        ptr = head
        offset = s['offset']
        seen = set()
        while ptr:
            if ptr in seen or n >= limit:
                raise ValueError(f'freelist of {s["name"]} loops or exceeds {limit} objects')
            seen.add(ptr)
            n += 1
            at = ptr + offset
            stored = self.read_word(at)
            ptr = stored ^ s['random'] ^ bswap64(at) if self.hardened else stored
        return n

    def caches(self, page_walk=True):
        prog = self.prog
        out = []
        slab_of = {}                   # kmem_cache address -> entry
        for kc in list_for_each_entry('struct kmem_cache', prog['slab_caches'].address_of_(), 'list'):
            oo = kc.oo.x.value_()
            s = {
                'name': kc.name.string_().decode(),
                'address': hex(kc.value_()),
                'object_size': kc.object_size.value_(),
                'size': kc.size.value_(),
                'offset': kc.offset.value_(),
                'objects_per_slab': oo & 0xffff,
                'order': oo >> 16,
                'random': kc.random.value_() if self.hardened else 0,
                'refcount': kc.refcount.value_(),
            }
            num_slabs = num_objs = node_partial_free = nr_partial = 0
            for nid in range(self.nr_node_ids):
                n = kc.node[nid]
                if not n:
                    continue
                num_slabs += n.nr_slabs.counter.value_()
                num_objs += n.total_objects.counter.value_()
                nr_partial += n.nr_partial.value_()
                for slab in list_for_each_entry('struct slab', n.partial.address_of_(), 'slab_list'):
                    node_partial_free += slab.objects.value_() - slab.inuse.value_()
            cpu_slab_free = cpu_freelist = cpu_partial_free = cpu_partial_slabs = cpu_slabs = 0
            cpu_slab_addrs = {}
            for cpu in self.cpus:
                c = per_cpu_ptr(kc.cpu_slab, cpu)
                slab = c.slab.read_()
                if slab:
                    cpu_slabs += 1
                    cpu_slab_free += slab.objects.value_() - slab.inuse.value_()
                    nfl = self.freelist_len(s, c.freelist.value_(), slab.objects.value_() + 1)
                    cpu_freelist += nfl
                    cpu_slab_addrs[slab.value_()] = cpu_slab_addrs.get(slab.value_(), 0) + nfl
                p = c.partial.read_()
                while p:
                    cpu_partial_slabs += 1
                    cpu_partial_free += p.objects.value_() - p.inuse.value_()
                    if cpu_partial_slabs > 1 << 20:
                        raise ValueError(f'cpu partial list of {s["name"]} loops')
                    p = p.next.read_()
            free = node_partial_free + cpu_slab_free + cpu_freelist + cpu_partial_free
            s.update({
                'num_slabs': num_slabs,
                'num_objs': num_objs,
                'active_objs': num_objs - node_partial_free,
                'allocated': num_objs - free,
                'nr_partial': nr_partial,
                'free_node_partial': node_partial_free,
                'free_cpu_slab': cpu_slab_free,
                'free_cpu_freelist': cpu_freelist,
                'free_cpu_partial': cpu_partial_free,
                'cpu_slabs': cpu_slabs,
                'cpu_partial_slabs': cpu_partial_slabs,
            })
            s['_cpu_slab_freelists'] = cpu_slab_addrs
            slab_of[kc.value_()] = s
            out.append(s)
        if page_walk:
            self.page_walk(slab_of)
        for s in out:
            del s['_cpu_slab_freelists']
            s['random'] = hex(s['random'])
        return out

    def page_walk(self, slab_of):
        """allocated_pagewalk: from every PG_slab page, independent of the
        node counters and of slab->inuse."""
        prog = self.prog
        t0 = time.monotonic()
        page_t = prog.type('struct page')
        psize = page_t.size
        slab_t = prog.type('struct slab')
        off_cache = drgn.offsetof(slab_t, 'slab_cache')
        off_freelist = drgn.offsetof(slab_t, 'freelist')
        off_counters = drgn.offsetof(slab_t, 'counters')
        pg_slab = 1 << prog.constant('PG_slab').value_()
        vmemmap = prog['vmemmap_base'].value_()
        max_pfn = prog['max_pfn'].value_()
        counts = {a: [0, 0, 0] for a in slab_of}     # objects, free in slab freelists, slabs
        chunk = 4096
        for pfn0 in range(0, max_pfn, chunk):
            npages = min(chunk, max_pfn - pfn0)
            try:
                buf = prog.read(vmemmap + pfn0 * psize, npages * psize)
            except FaultError:
                continue                  # an unpopulated piece of vmemmap
            for i in range(npages):
                o = i * psize
                flags, = struct.unpack_from('<Q', buf, o)
                if not flags & pg_slab:
                    continue
                cache, = struct.unpack_from('<Q', buf, o + off_cache)
                ent = slab_of.get(cache)
                if ent is None:
                    self.errors.append(f'pfn {pfn0 + i:#x}: PG_slab page of unknown cache {cache:#x}')
                    continue
                freelist, counters = struct.unpack_from('<QQ', buf, o + off_freelist)
                objects = (counters >> 16) & 0x7fff
                c = counts[cache]
                c[0] += objects
                c[1] += self.freelist_len(ent, freelist, objects + 1)
                c[2] += 1
        for a, s in slab_of.items():
            objects, free, nslabs = counts[a]
            cpu_fl = sum(s['_cpu_slab_freelists'].values())
            s['allocated_pagewalk'] = objects - free - cpu_fl
            s['slabs_pagewalk'] = nslabs
        self.t_pagewalk = time.monotonic() - t0

    def profile(self, top_n):
        prog = self.prog
        prof_on = prog['prof_on'].value_()
        shift = prog['prof_shift'].value_()
        plen = prog['prof_len'].value_()
        stext = prog.symbol('_stext').address
        res = {'prof_on': prof_on, 'prof_shift': shift, 'prof_len': plen, '_stext': hex(stext)}
        buf_ptr = prog['prof_buffer'].value_()
        if not buf_ptr or not plen:
            res.update({'total': 0, 'bins': {}, 'top': []})
            return res
        bins, hash_hits = prof_counts(prog, buf_ptr, plen)
        res['hash_hits'] = hash_hits
        res['total'] = sum(bins.values())
        res['nonzero_bins'] = len(bins)
        res['bins'] = {str(i): c for i, c in bins.items()}
        # by symbol (the last bin is the overflow bucket in older kernels)
        bysym = {}
        for i, c in bins.items():
            try:
                name = prog.symbol(stext + (i << shift)).name
            except LookupError:
                name = '*unknown*'
            bysym[name] = bysym.get(name, 0) + c
        res['top_symbols'] = sorted(bysym.items(), key=lambda kv: (-kv[1], kv[0]))[:top_n]
        return res


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    opts = [a for a in sys.argv[1:] if a.startswith('--')]
    top_n = 20
    if '--top' in opts:
        i = sys.argv.index('--top')
        top_n = int(sys.argv[i + 1])
        args.remove(sys.argv[i + 1])
    if len(args) != 2:
        sys.exit(__doc__)
    dump, vmlinux = args
    t0 = time.monotonic()
    o = Oracle(dump, vmlinux, ram='--ram' in opts or dump.endswith('.ram'),
               image_alias='--image-alias' in opts)
    t1 = time.monotonic()
    caches = o.caches(page_walk='--no-page-walk' not in opts)
    t2 = time.monotonic()
    prof = None if '--no-profile' in opts else o.profile(top_n)
    t3 = time.monotonic()
    out = {
        'tool': f'drgn {drgn.__version__}',
        'dump': dump,
        'vmlinux': vmlinux,
        'hardened_freelist': o.hardened,
        'ram': o.ram_info,
        'nr_cpus': len(o.cpus),
        'ncaches': len(caches),
        'totals': {
            'num_objs': sum(c['num_objs'] for c in caches),
            'active_objs': sum(c['active_objs'] for c in caches),
            'allocated': sum(c['allocated'] for c in caches),
        },
        'caches': caches,
        'profile': prof,
        'errors': o.errors,
        'seconds': {'load': round(t1 - t0, 3), 'caches': round(t2 - t1, 3),
                    'pagewalk': round(getattr(o, 't_pagewalk', 0), 3), 'profile': round(t3 - t2, 3)},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
