#!/usr/bin/python3
"""oracle_drgn_generic.py DUMP VMLINUX [alias] [--slab-only] - a peer's reading of a dump
through drgn's own generic helpers only (no walk of ours), for the kernels
of tests/linux/kernel_check.sh: run it under the newest drgn Debian has
(trixie's, in the chroot kernel_check.sh makes), which knows 5.10's slab
fields in struct page and 6.10+'s page types.

Prints JSON on stdout:
  drgn: drgn's version
  caches: {name: {"allocated": exact count of allocated objects
           (slab_cache_for_each_allocated_object), "object_size", "size"}}
  profile: {"total", "hash_hits"} of the kernel profile (profile=N), with
          the hits the CPUs' hash pages still hold (oracle_drgn.prof_counts),
          or null when the kernel profiles nothing
  whatis: up to 8 addresses in each of up to 2 slabs of every cache that
          has objects (5 bytes into each slot of the slab: allocated and
          free alike), with drgn's slab_object_info answer: cache, object
          start, allocated.  Never past the slab's last object (drgn calls
          that slack an object; kvmstat does not).

--slab-only: the caches alone (bench/linux_kernels.sh times that walk).
"alias": DUMP is QEMU's phys-only ELF; the kernel image's virtual range is
added as one more segment over the physical memory under it (as a kexec
vmcore has it), so drgn finds the page tables and walks them itself."""
import json
import sys

import os

import drgn
from drgn import FaultError


def open_prog(dump, vmlinux, alias):
    """A drgn Program on dump with vmlinux's debug info; alias: QEMU's
    phys-only ELF, given the kernel image's virtual range as one more
    segment over the physical memory under it (as a kexec vmcore has it).
    arm64: exactly [_text, _end) at their runtime (KASLR) addresses, since
    the vmalloc area begins where the image does and must go through the
    page tables; x86_64: the kernel text mapping's 1 GiB."""
    prog = drgn.Program()
    prog.set_core_dump(dump)
    if alias:
        data = open(dump, 'rb').read(1 << 20)
        i = data.index(b'OSRELEASE=')
        end = data.index(b'\0', i)
        info = dict(l.split('=', 1) for l in data[i:end].decode('latin-1').split('\n')
                    if '=' in l)
    prog.load_debug_info([vmlinux])
    if alias:
        if 'NUMBER(kimage_voffset)' in info:
            voff = int(info['NUMBER(kimage_voffset)'], 16)
            start = prog.symbol('_text').address & ~0xfff
            size = prog.symbol('_end').address - start
        else:
            voff = (0xffffffff80000000 - int(info['NUMBER(phys_base)'])) & (2**64 - 1)
            start, size = 0xffffffff80000000, 1 << 30

        def read(address, count, offset, physical, start=start, voff=voff):
            return prog.read((start + offset - voff) & (2**64 - 1), count, True)
        prog.add_memory_segment(start, size, read, False)
    return prog


def main():
    from drgn.helpers.linux.mm import compound_head, page_to_virt, virt_to_page
    from drgn.helpers.linux.slab import (for_each_slab_cache,
                                         slab_cache_for_each_allocated_object, slab_object_info)
    args = [a for a in sys.argv[1:] if a != '--slab-only']
    slab_only = len(args) < len(sys.argv) - 1
    if len(args) not in (2, 3) or args[2:] not in ([], ['alias']):
        print(__doc__, file=sys.stderr)
        return 2
    prog = open_prog(args[0], args[1], args[2:] == ['alias'])
    caches, whatis = {}, []
    for s in for_each_slab_cache(prog):
        name = s.name.string_().decode()
        objs = []
        n = 0
        for o in slab_cache_for_each_allocated_object(s, 'void'):
            if len(objs) < 64:
                objs.append(o.value_())
            n += 1
        size = s.size.value_()
        caches[name] = {'allocated': n, 'object_size': s.object_size.value_(), 'size': size}
        per = s.oo.x.value_() & 0xffff
        seen = set()
        for a in ([] if slab_only else objs):
            if len(seen) == 2:
                break
            try:
                head = compound_head(virt_to_page(prog, a))
                base = page_to_virt(head).value_()
            except FaultError:
                continue
            if base in seen:
                continue
            seen.add(base)
            for k in range(min(per, 8)):
                addr = base + k * size + 5
                info = slab_object_info(prog, addr)
                if info is None:
                    whatis.append({'address': addr, 'cache': None})
                    continue
                whatis.append({'address': addr,
                               'cache': info.slab_cache.name.string_().decode(),
                               'object': info.address,
                               'allocated': bool(info.allocated)})
    profile = None
    buf, plen = prog['prof_buffer'].value_(), prog['prof_len'].value_()
    if buf and plen and not slab_only:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from oracle_drgn import prof_counts
        bins, hash_hits = prof_counts(prog, buf, plen)
        profile = {'total': sum(bins.values()), 'hash_hits': hash_hits}
    json.dump({'drgn': drgn.__version__, 'caches': caches, 'whatis': whatis,
               'profile': profile}, sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main())
