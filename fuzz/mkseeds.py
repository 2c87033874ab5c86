#!/usr/bin/env python3
"""mkseeds.py FIXTURES OUT - build the harnesses' seed corpora from the
fixtures, into OUT/<harness>/ (run time only: nothing big is checked in).

Dumps are made small enough to mutate quickly but still open: ELF cores keep
their headers, notes and the first bytes of every segment (p_memsz kept, so
the rest reads as zeros); a kdump-compressed dump and its flattened stream
are written from the Linux fixture's raw image (zero pages filtered out, the
others zlib-compressed) with its VMCOREINFO; raw images are cut to their
first MiB.  The translation seeds are small hand-built page tables, the
walker seeds a few patch lists, the type seeds the fixture kernels and the
DWARF/BTF test objects.
"""
import gzip
import os
import shutil
import struct
import subprocess
import sys
import zlib

FIX, OUT = sys.argv[1], sys.argv[2]
PG = 4096


def fx(rel):
    return os.path.join(FIX, rel)


def put(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(rel):
    with open(fx(rel), "rb") as f:
        return f.read()


def elf_shrink(data, keep=16384):
    """Headers, program headers, PT_NOTEs whole, each PT_LOAD's first
    `keep` bytes (p_filesz cut, p_memsz kept)."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    out = bytearray(data[:phoff + phentsize * phnum])
    for i in range(phnum):
        o = phoff + i * phentsize
        p_type, flags, off, va, pa, fsz, msz, al = struct.unpack_from("<IIQQQQQQ", data, o)
        n = fsz if p_type != 1 else min(fsz, keep)
        new = len(out)
        out += data[off:off + n]
        struct.pack_into("<IIQQQQQQ", out, o, p_type, flags, new, va, pa, n, msz, al)
    return bytes(out)


def elf_notes(data):
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        p_type, _, off, _, _, fsz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 4:
            return data[off:off + fsz]
    return b""


def vmcoreinfo(notes):
    p = 0
    while p + 12 <= len(notes):
        nsz, dsz, typ = struct.unpack_from("<III", notes, p)
        name = notes[p + 12:p + 12 + nsz]
        d0 = p + 12 + ((nsz + 3) & ~3)
        if name.startswith(b"VMCOREINFO"):
            return notes[d0:d0 + dsz]
        p = d0 + ((dsz + 3) & ~3)
    return b""


def kdump(mem, vmci, notes, version=6, sub_vmci=True):
    """A kdump-compressed dump of mem as makedumpfile lays it out."""
    npfn = len(mem) // PG
    bmbytes = max(PG, ((npfn + 7) // 8 + PG - 1) // PG * PG)
    sub_blocks = 1 + (len(vmci) + len(notes) + 1024 + PG - 1) // PG
    dumped = [pfn for pfn in range(npfn) if mem[pfn * PG:(pfn + 1) * PG].strip(b"\0")]
    pd_off = (1 + sub_blocks + 2 * bmbytes // PG) * PG
    h = bytearray(PG)
    h[0:8] = b"KDUMP   "
    struct.pack_into("<I", h, 8, version)
    h[12:17] = b"Linux"
    h[12 + 4 * 65:12 + 4 * 65 + 6] = b"x86_64"
    struct.pack_into("<iiIII", h, 424, 0, PG, sub_blocks, 2 * bmbytes // PG, npfn)
    struct.pack_into("<I", h, 460, 1)
    sh = bytearray(sub_blocks * PG)
    struct.pack_into("<Qi", sh, 0, 0, 31)
    vo = PG + 512
    sh[vo - PG:vo - PG + len(vmci)] = vmci
    if version >= 3 and sub_vmci:
        struct.pack_into("<QQ", sh, 32, vo, len(vmci))
    no = vo + len(vmci) + 64
    sh[no - PG:no - PG + len(notes)] = notes
    if version >= 4 and notes:
        struct.pack_into("<QQ", sh, 48, no, len(notes))
    if version >= 6:
        struct.pack_into("<Q", sh, 96, npfn)
    bm1 = bytearray(bmbytes)
    bm2 = bytearray(bmbytes)
    for pfn in range(npfn):
        bm1[pfn // 8] |= 1 << (pfn % 8)
    for pfn in dumped:
        bm2[pfn // 8] |= 1 << (pfn % 8)
    pds = bytearray(24 * len(dumped))
    data = bytearray()
    at = pd_off + len(pds)
    for i, pfn in enumerate(dumped):
        page = mem[pfn * PG:(pfn + 1) * PG]
        z = zlib.compress(page, 6)
        if len(z) < PG:
            struct.pack_into("<QIIQ", pds, 24 * i, at + len(data), len(z), 1, 0)
            data += z
        else:
            struct.pack_into("<QIIQ", pds, 24 * i, at + len(data), PG, 0, 0)
            data += page
    return bytes(h + sh + bm1 + bm2 + pds + data)


def flat(dump, rec=65536):
    out = bytearray(PG)
    out[0:12] = b"makedumpfile"
    struct.pack_into(">QQ", out, 16, 1, 1)
    for off in range(0, len(dump), rec):
        chunk = dump[off:off + rec]
        out += struct.pack(">QQ", off, len(chunk)) + chunk
    out += struct.pack(">QQ", 0xffffffffffffffff, 0)
    return bytes(out)


def section(data, want):
    """An ELF64 file's section `want`, or b""."""
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    def sh(i):
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
    stro = sh(shstrndx)[4]
    for i in range(shnum):
        name, _, _, _, off, size = sh(i)
        end = data.index(b"\0", stro + name)
        if data[stro + name:end] == want:
            return data[off:off + size]
    return b""


def lc_str(s):
    if s is None:
        return struct.pack("<H", 0xffff)
    b = s.encode()
    return struct.pack("<H", len(b)) + b


def lc_typeinfo(off, size, count, esize, kind, ekind, bsize, boff, tname):
    return struct.pack("<4Q4I", off, size, count, esize, kind, ekind, bsize, boff) + lc_str(tname)


def lc_record(q, status, a, b, body):
    payload = lc_str(a) + lc_str(b) + body
    return struct.pack("<BBHI", ord(q), status, 0, 8 + len(payload)) + payload


def lcache_file(ident, recs):
    """A layout cache file: header, identity, records; FNV-1a 64 of all
    after the 32-byte header."""
    body = ident.encode() + b"".join(recs)
    h = 0xcbf29ce484222325
    for x in body:
        h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return b"KVSLC001" + struct.pack("<IIIIQ", 32, len(ident.encode()), len(recs), 0, h) + body


def lcache_seeds():
    t = lc_record("T", 0, "struct kmem_cache", None,
                  lc_typeinfo(0, 200, 0, 0, 1, 0, 0, 0, "struct kmem_cache"))
    m = lc_record("M", 0, "struct kmem_cache", "size",
                  lc_typeinfo(24, 4, 0, 0, 3, 0, 0, 0, "unsigned int"))
    bf = lc_record("M", 0, "struct bits", "b",
                   lc_typeinfo(0, 4, 0, 0, 3, 0, 3, 5, "unsigned int"))
    arr = lc_record("M", 0, "struct kmem_cache", "node",
                    lc_typeinfo(96, 512, 64, 8, 4, 2, 0, 0, "struct kmem_cache_node *[64]"))
    v = lc_record("V", 0, "slab_caches", None,
                  lc_typeinfo(0, 16, 0, 0, 1, 0, 0, 0, "struct list_head"))
    nf = lc_record("T", 1, "struct nosuch", None, lc_str("no type \"struct nosuch\""))
    mems = [("next", 0, 0, 8, 0, 2, 0, "struct list_head *"),
            ("prev", 8, 64, 8, 0, 2, 0, "struct list_head *"),
            (None, 16, 128, 8, 0, 6, 0, "union {...}"),
            ("flag", 16, 131, 4, 1, 3, 1, "unsigned int")]
    lbody = struct.pack("<I", len(mems)) + b"".join(
        lc_str(n) + struct.pack("<3Q3I", off, boff, size, bsize, kind, depth) + lc_str(tn)
        for n, off, boff, size, bsize, kind, depth, tn in mems)
    lst = lc_record("L", 0, "struct list_head", None, lbody)
    return [("empty", []), ("one-type", [t]), ("all", [t, m, bf, arr, v, nf, lst]),
            ("members", [lst, lst])]


def zstd_frame(data, fcs=True, chunk=PG):
    """A zstd frame written here (no library): raw blocks, and RLE blocks
    for runs of one byte, with the content size when fcs (8 bytes, single
    segment) or without it (window descriptor: 8 MiB)."""
    if fcs:
        out = bytearray(b"\x28\xb5\x2f\xfd" + bytes([0xe0]) + struct.pack("<Q", len(data)))
    else:
        out = bytearray(b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x58]))
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)] or [b""]
    for n, p in enumerate(pieces):
        last = 1 if n == len(pieces) - 1 else 0
        if len(p) > 0 and p.count(p[:1]) == len(p):
            out += struct.pack("<I", last | 1 << 1 | len(p) << 3)[:3] + p[:1]
        else:
            out += struct.pack("<I", last | 0 << 1 | len(p) << 3)[:3] + p
    return bytes(out)


def zstd_cli(data, *args):
    """zstd(1)'s own compression when it is installed, else None."""
    if shutil.which("zstd") is None:
        return None
    try:
        return subprocess.run(["zstd", "-q", "-c"] + list(args), input=data,
                              stdout=subprocess.PIPE, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def compressed_seeds():
    """gzip and zstd files of small dumps: what savecore -z leaves, and
    the layer's corners (several gzip restart points, concatenated members,
    a truncated file, indexed zstd frames, a frame without its size, a
    skippable frame)."""
    mini = read("fbsd14/vmcore.minidump3")
    kva = read("fbsd14/vmcore.kva.elf")
    raw = read("fbsd14/mem.raw")
    gz = lambda d, lvl=6: gzip.compress(d, compresslevel=lvl, mtime=0)
    yield "minidump.gz", gz(mini)
    yield "kva.elf.gz", gz(kva)
    yield "mem.raw.gz", gz(raw, 9)                    # 6 MiB: restart points
    yield "members.gz", gz(mini[:PG * 8]) + gz(mini[PG * 8:])
    yield "truncated.gz", gz(mini)[:4000]
    yield "stored.gz", gz(mini[:2 * PG], 0)
    head = mini[:6 * PG] + bytes(64 * PG)             # the headers; zeros as RLE
    yield "minidump.frames.zst", b"".join(zstd_frame(head[i:i + 8 * PG])
                                          for i in range(0, len(head), 8 * PG))
    yield "minidump.nosize.zst", zstd_frame(head, fcs=False)
    yield "skippable.zst", (b"\x50\x2a\x4d\x18" + struct.pack("<I", 4) + b"seed" +
                            zstd_frame(kva[:4 * PG]))
    yield "truncated.zst", zstd_frame(kva[:3 * PG], fcs=False)[:PG + 100]
    z = zstd_cli(mini, "-19")
    if z is not None:
        yield "minidump.zst", z
        yield "minidump.nosize.cli.zst", zstd_cli(mini, "-3", "--no-content-size")
        yield "mem.raw.zst", zstd_cli(raw, "-19")


def cli_seeds():
    """Command lines (NUL-separated), as kvmstat's tests and manual use
    them, and its usage errors."""
    lines = [
        ["-N", "k", "-M", "c", "info"], ["-N", "k", "-M", "c", "--json", "malloc", "--format", "5"],
        ["-m", "--sort", "memuse", "--percpu"], ["-z", "--csv"], ["--json", "zone", "--libxo"],
        ["--version"], ["-h"], ["help", "rd"], ["help", "nope"], ["--json", "help", "nope"],
        ["-m", "-z"], ["-M", "a", "-M", "b", "-M", "c", "--json", "info"], ["--format"],
        ["--top", "0", "profile"], ["--top", "x", "--json", "profile"], ["--csv", "--json", "malloc"],
        ["--demo", "-M", "x", "info"], ["-N", "k", "type", "struct malloc_type", "int"],
        ["rd", "-p", "0x1000", "4", "-o", "out"], ["diff", "a", "b", "--kernel-b", "k"],
        ["cache", "--clear"], ["-K", "a.ko", "-K", "b.ko", "--module-dir", "d", "probes", "--all"],
        ["--no-cache", "--raw", "--no-verify", "info", "--stats"], ["--", "--json", "info"],
        ["--jso", "bogus"], ["-q"], ["slab", "--format", "crash"], ["gmon", "-o", "x", "-f"],
        ["--json", "info", "\x1b[2J\xc3("],
    ]
    for n, l in enumerate(lines):
        yield "line%02d" % n, b"\0".join(a.encode("latin-1") for a in l)


def escape_seeds():
    """The flags byte (bit 0 keep_newlines, the rest a short buffer's
    size), then the string."""
    strs = [b"plain name", b"tab\there\nline", b"\x1b[31mred\x1b[0m", b"\xc2\x9b2J c1",
            b"caf\xc3\xa9 \xe2\x80\xae rlo \xf0\x9f\x98\x80", b"\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80",
            b"cut \xe2\x80", b"nul\0after", b"a,b\"c\r\n", b"back\\x41slash", b"\x7f\xff\x80"]
    for n, s in enumerate(strs):
        yield "str%02d" % n, bytes([(n * 11) & 0xff]) + s


def lcache_rt_seeds():
    """Answers in fuzz_lcache_roundtrip's input form: the split, then per
    answer an op byte (bits 0-1: T M V L; bit 2: not found), strings as a
    length byte and bytes, numbers little-endian."""
    def st(s):
        return bytes([len(s)]) + s
    ti = (struct.pack("<QQ", 24, 4) + bytes([3]) + struct.pack("<QQ", 0, 0) + bytes([0, 3, 5]) +
          st(b"unsigned int"))
    t = bytes([0]) + st(b"struct kmem_cache") + struct.pack("<QQ", 0, 200) + bytes([1]) + \
        struct.pack("<QQ", 0, 0) + bytes([0, 0, 0]) + st(b"struct kmem_cache")
    m = bytes([1]) + st(b"struct kmem_cache") + st(b"size") + ti
    v = bytes([2]) + st(b"slab_caches") + ti
    nf = bytes([4]) + st(b"struct nosuch") + st(b'no type "struct nosuch"')
    mem = (st(b"next") + struct.pack("<Q", 0) + bytes([0]) + struct.pack("<Q", 8) +
           st(b"struct list_head *") + bytes([2, 0]))
    anon = (bytes([0xfe]) + struct.pack("<Q", 131) + bytes([1]) + struct.pack("<Q", 4) +
            st(b"unsigned int") + bytes([3, 1]))
    lst = bytes([3]) + st(b"struct list_head") + bytes([2]) + mem + anon
    longname = bytes([0]) + bytes([0xff]) + struct.pack("<QQ", 0, 8) + bytes([1]) + \
        struct.pack("<QQ", 0, 0) + bytes([0, 0, 0]) + st(b"long")
    yield "all", bytes([3]) + t + m + v + nf + lst
    yield "twice", bytes([1]) + t + t + nf
    yield "long", bytes([0]) + longname + t


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    # minidump: the small fixtures whole.
    for rel in ["fbsd14/vmcore.minidump1", "fbsd14/vmcore.minidump2", "fbsd14/vmcore.minidump3",
                "fbsd14-s2/vmcore.minidump3", "fbsd14-arm64/vmcore.minidump1",
                "fbsd14-arm64/vmcore.minidump2", "fbsd14-arm64/vmcore.minidump3"]:
        put("fuzz_minidump", rel.replace("/", "_"), read(rel))
    # elfdump: virtual-only cores whole, full cores shrunk.
    for rel in ["fbsd14/vmcore.kva.elf", "fbsd14-s2/vmcore.kva.elf"]:
        put("fuzz_elfdump", rel.replace("/", "_"), read(rel))
    for rel in ["fbsd14/vmcore.elf", "fbsd5/vmcore.elf", "linux-kaslr/vmcore",
                "linux-nokaslr/vmcore", "linux-hostile/vmcore.loop"]:
        put("fuzz_elfdump", rel.replace("/", "_") + ".small", elf_shrink(read(rel)))
    # kdump: from the Linux raw image, with the ELF core's VMCOREINFO.
    notes = elf_notes(read("linux-kaslr/vmcore"))
    vmci = vmcoreinfo(notes)
    mem = read("linux-kaslr/mem.raw")
    k6 = kdump(mem, vmci, notes, 6)
    put("fuzz_kdump", "kaslr.v6", k6)
    put("fuzz_kdump", "kaslr.v3", kdump(mem, vmci, b"", 3))
    put("fuzz_kdump", "kaslr.v6.flat", flat(k6))
    # raw: first MiB of each image (page tables and VMCOREINFO are low).
    for rel in ["fbsd14/mem.raw", "linux-kaslr/mem.raw"]:
        put("fuzz_raw", rel.replace("/", "_"), read(rel)[:1 << 20])
    # kvtop: root at 0x1000; PML4[511] -> PDP 0x2000; PDP[510] -> PD 0x3000,
    # PDP[0] a 1 GiB page; PD[0] -> PT 0x4000, PD[1] a 2 MiB page; PT[0..7].
    img = bytearray(6 * PG)
    struct.pack_into("<Q", img, 0x1000 + 511 * 8, 0x2003)
    struct.pack_into("<Q", img, 0x1000 + 256 * 8, 0x2003)
    struct.pack_into("<Q", img, 0x2000 + 510 * 8, 0x3003)
    struct.pack_into("<Q", img, 0x2000 + 0 * 8, 0x40000083)
    struct.pack_into("<Q", img, 0x3000 + 0 * 8, 0x4003)
    struct.pack_into("<Q", img, 0x3000 + 1 * 8, 0x200083)
    for i in range(8):
        struct.pack_into("<Q", img, 0x4000 + i * 8, 0x5003 if i % 2 == 0 else 0x8000000000000003)
    vas = [0xffffffff80000000, 0xffffffff80201234, 0xffff800000001000, 0xffffffff80003abc]
    for mode in (0, 1, 8, 9):
        put("fuzz_kvtop", "pml4.%d" % mode,
            struct.pack("<Q", 0x1000) + struct.pack("<4Q", *vas) + bytes([mode]) + bytes(img))
    for mode in (2, 6, 7):
        put("fuzz_kvtop", "pmap.%d" % mode,
            struct.pack("<Q", 0) + struct.pack("<4Q", *vas) + bytes([mode]) + bytes(img[0x3000:]) +
            bytes(img))
    # walkers: nothing, a byte, a pointer, a count.
    for w in ["malloc", "uma", "gprof", "dtrace", "slub"]:
        put("fuzz_walk_" + w, "none", b"")
        put("fuzz_walk_" + w, "byte", bytes([0]) + struct.pack("<I", 100) + bytes([0, 0xff]))
        put("fuzz_walk_" + w, "ptr", bytes([2]) + struct.pack("<II", 8, 64))
        put("fuzz_walk_" + w, "count", bytes([3]) + struct.pack("<I", 200) + bytes([3, 0x7f]))
    # types: the fixture kernels and the DWARF and BTF test objects.
    for rel in ["fbsd14/kernel", "fbsd14/kernel.dwarf2", "fbsd14/kernel.dwarf5", "fbsd5/kernel",
                "fbsd11/kernel", "linux-kaslr/vmlinux", "../dwarf-test/t.dwarf2",
                "../dwarf-test/t.dwarf3", "../dwarf-test/t.dwarf4", "../dwarf-test/t.dwarf5",
                "../dwarf-test/t.exec5", "../dwarf-test/t.clang5"]:
        put("fuzz_dwarf", os.path.basename(os.path.dirname(rel)) + "_" + os.path.basename(rel),
            read(rel))
    for rel in ["../btf-test/kernel.btf", "../btf-test/t.gcc", "../btf-test/t.clang",
                "../btf-test/t.pahole"]:
        put("fuzz_btf", os.path.basename(rel), read(rel))
        put("fuzz_btf", os.path.basename(rel) + ".BTF", section(read(rel), b".BTF"))
    # layout cache: files made here from the format (types/cache_file.c's
    # header comment), not by the library: one of every record kind.
    for name, recs in lcache_seeds():
        put("fuzz_lcache", name, lcache_file("kvmstat-layouts/1 lib:seed types:btf kernel:x",
                                             recs))
    for name, data in compressed_seeds():
        put("fuzz_compressed", name, data)
    for name, data in cli_seeds():
        put("fuzz_cli", name, data)
    for name, data in escape_seeds():
        put("fuzz_escape", name, data)
    for name, data in lcache_rt_seeds():
        put("fuzz_lcache_roundtrip", name, data)
    for h in sorted(os.listdir(OUT)):
        d = os.path.join(OUT, h)
        files = os.listdir(d)
        print("%-18s %3d seeds, largest %d bytes" %
              (h, len(files), max(os.path.getsize(os.path.join(d, f)) for f in files)))


main()
