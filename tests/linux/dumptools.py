#!/usr/bin/env python3
"""Small dump post-processing helpers for tests/linux/capture.sh.

  dumptools.py fill-uts KDUMP OUT RELEASE VERSION
      Copy a kdump-compressed file, filling the header utsname (QEMU 7.2 leaves
      everything but machine empty, which libkdumpfile 0.5.1 / drgn reject).
  dumptools.py move-phdrs ELF OUT
      Copy a QEMU 7.2 ELF core with its program headers moved to offset 64
      (makedumpfile 1.7.2 ignores e_phoff), section headers dropped.
  dumptools.py serial-section SERIAL BEGIN END OUT
      Write the lines strictly between the marker lines BEGIN and END (the last
      such section in the file), with CRs removed.
  dumptools.py census SERIAL OUTDIR
      Split the guest's census reads (LC_CENSUS_1, _2 before the dump, _A after
      it) into OUTDIR/census/{1,2,A}/{meminfo,buddyinfo,zoneinfo,vmstat,vmallocinfo}.
  dumptools.py ram-vs-elf RAM ELF
      Compare a raw guest-RAM file page by page with a paging=false ELF dump.
  dumptools.py ram-vmcoreinfo RAM
      Print crash's --kaslr/--machdep phys_base options for a raw RAM file.
  dumptools.py elf-info ELF
      Print e_phoff, e_shoff, real phnum, and the PT_LOAD count as JSON.
"""
import json
import shutil
import struct
import sys

CHUNK = 1 << 24


def copy(src, dst):
    with open(src, 'rb') as i, open(dst, 'wb') as o:
        shutil.copyfileobj(i, o, CHUNK)


def fill_uts(src, dst, release, version):
    copy(src, dst)
    with open(dst, 'r+b') as f:
        hdr = f.read(12 + 6 * 65)
        if hdr[:8] != b'KDUMP   ':
            sys.exit(f'fill-uts: {src} is not a kdump-compressed file (flattened? run makedumpfile -R)')
        fields = {0: 'Linux', 1: '(none)', 2: release, 3: version}
        for idx, val in fields.items():
            off = 12 + idx * 65
            cur = hdr[off:off + 65].split(b'\0')[0]
            if cur:
                continue            # keep what is there
            b = val.encode()[:64]
            f.seek(off)
            f.write(b + b'\0' * (65 - len(b)))


def elf_hdr(f):
    eh = f.read(64)
    if eh[:4] != b'\x7fELF' or eh[4] != 2 or eh[5] != 1:
        sys.exit('not a little-endian ELF64 file')
    (e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize,
     e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from('<HHIQQQIHHHHHH', eh, 16)
    phnum = e_phnum
    if e_phnum == 0xffff:           # PN_XNUM: real count in section 0's sh_info
        f.seek(e_shoff)
        sh0 = f.read(64)
        phnum = struct.unpack_from('<I', sh0, 44)[0]
    return eh, e_phoff, e_shoff, e_phentsize, phnum


def move_phdrs(src, dst):
    with open(src, 'rb') as f:
        eh, phoff, shoff, phentsize, phnum = elf_hdr(f)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        first = min(struct.unpack_from('<Q', ph, i * phentsize + 8)[0] for i in range(phnum))
    if phnum >= 0xffff:
        sys.exit('move-phdrs: too many program headers (use the paging=false dump)')
    if 64 + len(ph) > first:
        sys.exit('move-phdrs: no room for the program headers at 64')
    copy(src, dst)
    neh = bytearray(eh)
    struct.pack_into('<QQ', neh, 32, 64, 0)               # e_phoff, e_shoff
    struct.pack_into('<HHHHHH', neh, 52, 64, phentsize, phnum, 0, 0, 0)
    with open(dst, 'r+b') as o:
        o.write(neh)
        o.write(ph)
        # zero the rest of the old header area up to the first segment data
        end = max(phoff + len(ph), shoff + 64 if shoff else 0)
        end = min(end, first)
        if end > 64 + len(ph):
            o.write(b'\0' * (end - 64 - len(ph)))


def serial_section(src, begin, end, dst):
    data = open(src, 'rb').read().replace(b'\r', b'').decode('latin-1').split('\n')
    starts = [i for i, l in enumerate(data) if l.strip() == begin]
    if not starts:
        sys.exit(f'serial-section: marker {begin} not found in {src}')
    s = starts[-1] + 1
    for e in range(s, len(data)):
        if data[e].strip() == end:
            break
    else:
        sys.exit(f'serial-section: marker {end} not found after {begin} in {src}')
    with open(dst, 'w') as o:
        o.write(''.join(l + '\n' for l in data[s:e]))


CENSUS_FILES = ('meminfo', 'buddyinfo', 'zoneinfo', 'vmstat', 'vmallocinfo')


def census(src, outdir):
    """Each census read of the serial log into its own directory."""
    import os
    data = open(src, 'rb').read().replace(b'\r', b'').decode('latin-1').split('\n')
    for tag in ('1', '2', 'A'):
        begin, end = f'===LC_CENSUS_{tag}_BEGIN===', f'===LC_CENSUS_{tag}_END==='
        starts = [i for i, l in enumerate(data) if l.strip() == begin]
        if not starts:
            sys.exit(f'census: marker {begin} not found in {src}')
        s = starts[-1] + 1
        try:
            e = next(i for i in range(s, len(data)) if data[i].strip() == end)
        except StopIteration:
            sys.exit(f'census: marker {end} not found after {begin} in {src}')
        files, cur = {}, None
        for line in data[s:e]:
            if line.startswith('===LC_FILE_') and line.strip().endswith('==='):
                cur = line.strip()[len('===LC_FILE_'):-3]
                files[cur] = []
            elif cur is not None:
                files[cur].append(line)
        d = os.path.join(outdir, 'census', tag)
        os.makedirs(d, exist_ok=True)
        for name in CENSUS_FILES:
            if name not in files or not files[name]:
                sys.exit(f'census: read {tag} has no {name} in {src}')
            with open(os.path.join(d, name), 'w') as o:
                o.write(''.join(l + '\n' for l in files[name]))


def elf_info(src):
    with open(src, 'rb') as f:
        eh, phoff, shoff, phentsize, phnum = elf_hdr(f)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    loads = sum(1 for i in range(phnum) if struct.unpack_from('<I', ph, i * phentsize)[0] == 1)
    print(json.dumps({'e_phoff': phoff, 'e_shoff': shoff, 'phnum': phnum, 'pt_load': loads}))


def ram_vs_elf(ram, elf):
    """Compare a raw RAM file (offset = phys) with the PT_LOADs of a
    paging=false ELF dump below the RAM file's size, page by page."""
    import mmap
    with open(elf, 'rb') as f:
        eh, phoff, shoff, phentsize, phnum = elf_hdr(f)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    r = open(ram, 'rb')
    rm = mmap.mmap(r.fileno(), 0, prot=mmap.PROT_READ)
    e = open(elf, 'rb')
    em = mmap.mmap(e.fileno(), 0, prot=mmap.PROT_READ)
    pages = diff = 0
    for i in range(phnum):
        p_type, _, off, _, paddr, filesz = struct.unpack_from('<IIQQQQ', ph, i * phentsize)
        if p_type != 1 or paddr >= len(rm):
            continue
        n = min(filesz, len(rm) - paddr)
        for o in range(0, n, 4096):
            pages += 1
            if rm[paddr + o:paddr + o + 4096] != em[off + o:off + o + 4096]:
                diff += 1
    print(json.dumps({'pages_compared': pages, 'pages_different': diff}))
    return diff


def ram_vmcoreinfo(ram):
    """Find the VMCOREINFO note in a raw guest-RAM file; print the crash(8)
    options that a raw RAM image needs (crash cannot find them itself)."""
    import mmap
    with open(ram, 'rb') as f:
        mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    pos = 0
    while True:
        i = mm.find(b'OSRELEASE=', pos)
        if i < 0:
            sys.exit(f'ram-vmcoreinfo: no VMCOREINFO note in {ram}')
        pos = i + 1
        if i >= 24 and mm[i - 12:i] == b'VMCOREINFO\0\0':
            namesz, descsz, ntype = struct.unpack_from('<III', mm, i - 24)
            if namesz == 11 and ntype == 0 and 0 < descsz < 65536:
                break
    info = dict(l.split('=', 1) for l in mm[i:i + descsz].decode().split('\n') if '=' in l)
    print(f'--kaslr 0x{info.get("KERNELOFFSET", "0")} --machdep phys_base={int(info["NUMBER(phys_base)"])}')


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    cmd = a[0]
    if cmd == 'fill-uts' and len(a) == 5:
        fill_uts(*a[1:])
    elif cmd == 'move-phdrs' and len(a) == 3:
        move_phdrs(*a[1:])
    elif cmd == 'serial-section' and len(a) == 5:
        serial_section(*a[1:])
    elif cmd == 'census' and len(a) == 3:
        census(*a[1:])
    elif cmd == 'ram-vs-elf' and len(a) == 3:
        sys.exit(1 if ram_vs_elf(*a[1:]) else 0)
    elif cmd == 'ram-vmcoreinfo' and len(a) == 2:
        ram_vmcoreinfo(a[1])
    elif cmd == 'elf-info' and len(a) == 2:
        elf_info(a[1])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
