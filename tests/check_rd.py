#!/usr/bin/env python3
"""check_rd.py - `kvmstat rd` against oracles that are not kvmstat.

- gdb (`x/Ngx`) on the FreeBSD 14 fixture's virtually addressed ELF core
  (vmcore.kva.elf) with the fixture kernel: the words at every symbol the
  generator recorded, compared with `kvmstat rd` on every dump format of
  that machine (minidump v1-v3, full ELF, raw image, kva ELF).
- The generator's truth.json "reads" (bytes it placed at given addresses).
- Linux fixtures: `rd -p` and `rd VA` against the bytes of the ELF vmcore
  at offsets computed here from its program headers (p_paddr, p_offset),
  for the truth's translations (va -> pa).
- Unreadable addresses (truth "unmapped", "not_dumped_va") fail naming the
  address, one line per run of unreadable pages; `-o FILE` writes exactly
  the bytes, and nothing when a byte is unreadable.

Without gdb the test fails, unless KVS_ALLOW_MISSING_ORACLES=1 (exit 77).
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def kvmstat(*args):
    p = subprocess.run([KVMSTAT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def rd_words(out):
    """{address: word} from rd's text: 'ADDR:  W [W]   ASCII'."""
    words = {}
    for line in out.splitlines():
        addr, rest = line.split(":", 1)
        a = int(addr, 16)
        fields = rest[2:].split("   ", 1)[0].split()
        for i, w in enumerate(fields):
            words[a + 8 * i] = int(w, 16)
    return words


def gdb_words(kernel, core, items):
    """gdb's x/Ngx at each (addr, n): {address: word}."""
    cmds = []
    for a, n in items:
        cmds += ["-ex", "x/%dgx 0x%x" % (n, a)]
    p = subprocess.run(["gdb", "-batch", "-nx"] + cmds + [kernel, core],
                       capture_output=True, text=True, timeout=120)
    words = {}
    for line in p.stdout.splitlines():
        if not line.startswith("0x") or ":" not in line:
            continue
        head, vals = line.split(":\t", 1) if ":\t" in line else (line, "")
        a = int(head.split()[0], 16)
        for i, v in enumerate(vals.split("\t")):
            if not v.startswith("0x"):
                break
            words[a + 8 * i] = int(v.split()[0], 16)
    return words


def elf_loads(path):
    """PT_LOAD (paddr, vaddr, offset, filesz) of an ELF64 core."""
    with open(path, "rb") as f:
        eh = f.read(64)
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        loads = []
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _fl, off, va, pa, filesz = struct.unpack("<IIQQQQ", f.read(40))
            if p_type == 1:
                loads.append((pa, va, off, filesz))
    return loads


def file_bytes_at_pa(path, loads, pa, n):
    for lpa, _va, off, sz in loads:
        if lpa <= pa and pa + n <= lpa + sz:
            with open(path, "rb") as f:
                f.seek(off + pa - lpa)
                return f.read(n)
    return None


def fbsd_gdb():
    d = os.path.join(FIX, "fbsd14")
    kernel = os.path.join(d, "kernel")
    t = json.load(open(os.path.join(d, "truth.json")))
    kva = os.path.join(d, "vmcore.kva.elf")
    loads = elf_loads(kva)

    def in_core(a, n):
        return any(va <= a and a + 8 * n <= va + sz for _pa, va, _off, sz in loads)
    # Only what the core holds: gdb would fill the rest from the kernel file.
    names = [k for k, s in t["symbols"].items()
             if in_core(int(s["addr"], 16), max(1, min(8, (s["size"] + 7) // 8)))]
    check(len(names) >= 10, "only %d symbols in the kva core" % len(names))
    syms = [(int(t["symbols"][k]["addr"], 16),
             max(1, min(8, (t["symbols"][k]["size"] + 7) // 8))) for k in names]
    oracle = gdb_words(kernel, kva, syms)
    check(len(oracle) >= len(syms), "gdb read %d words for %d symbols" % (len(oracle), len(syms)))
    for core, extra in (("vmcore.minidump1", []), ("vmcore.minidump2", []),
                        ("vmcore.minidump3", []), ("vmcore.elf", []),
                        ("mem.raw", ["--raw"]), ("vmcore.kva.elf", [])):
        got = {}
        for name in names:
            s = t["symbols"][name]
            n = max(1, min(8, (s["size"] + 7) // 8))
            rc, out, err = kvmstat("-N", kernel, "-M", os.path.join(d, core), *extra,
                                   "rd", name, str(n))
            check(rc == 0, "%s rd %s exited %d: %s" % (core, name, rc, err))
            if rc == 0:
                got.update(rd_words(out))
        for a, w in oracle.items():
            check(got.get(a) == w, "%s: word at %#x: kvmstat %s, gdb %#x"
                  % (core, a, hex(got[a]) if a in got else None, w))
    print("fbsd14: %d words against gdb on 6 formats" % len(oracle))
    # The generator's own reads (bytes it wrote at an address).
    for r in t["reads"]:
        va, want = int(r["va"], 16), bytes.fromhex(r["hex"])
        rc, out, err = kvmstat("-N", kernel, "-M", os.path.join(d, "vmcore.minidump3"),
                               "rd", r["va"], str((len(want) + 7) // 8))
        check(rc == 0, "rd %s: %s" % (r["va"], err))
        words = rd_words(out)
        got = b"".join(struct.pack("<Q", words[va + 8 * i])
                       for i in range((len(want) + 7) // 8) if va + 8 * i in words)
        check(got[:len(want)] == want, "truth read at %s: %s != %s"
              % (r["va"], got[:len(want)].hex(), want.hex()))
    # The ASCII column shows the version string the generator placed there.
    rc, out, _ = kvmstat("-N", kernel, "-M", os.path.join(d, "vmcore.minidump3"), "rd",
                         t["reads"][2]["va"], "2")
    check(out.rstrip("\n").endswith("FreeBSD 14.1-REL"), "ASCII column: %r" % out)
    # Unreadable addresses: an error at that address, exit status 1.
    for va in [t["unmapped"][0], t["not_dumped_va"]]:
        rc, out, err = kvmstat("-N", kernel, "-M", os.path.join(d, "vmcore.minidump3"),
                               "rd", va, "4")
        check(rc == 1 and ("%016x" % int(va, 16)) in err and out == "",
              "unreadable %s: rc %d, out %r, err %r" % (va, rc, out, err))
    # A long read over unreadable memory: one stderr line per run of
    # consecutive unreadable pages (first and last byte, page count), not
    # one per page; --json's errors are the same runs.
    va = int(t["unmapped"][0], 16)
    count = 100000000
    rc, out, err = kvmstat("-N", kernel, "-M", os.path.join(d, "vmcore.minidump3"),
                           "rd", "%x" % va, str(count))
    lines = err.splitlines()
    check(rc == 1 and 1 <= len(lines) <= 64, "rd over unreadable memory: rc %d, %d stderr "
          "lines: %s" % (rc, len(lines), lines[:3]))
    runs = []
    for line in lines[:64]:
        try:
            rng, rest = line.split("kvmstat: rd: ", 1)[1].split(": not read, ", 1)
            lo, hi = (int(x, 16) for x in rng.split("-"))
            runs.append((lo, hi, int(rest.split(" page", 1)[0])))
        except (IndexError, ValueError):
            check(False, "rd run line: %r" % line)
    check(bool(runs) and runs[0][0] == va, "first run %s starts at %#x" % (runs[:1], va))
    for i, (lo, hi, n) in enumerate(runs):
        check(hi >= lo and n == (hi // 4096) - (lo // 4096) + 1,
              "run %#x-%#x: %d pages" % (lo, hi, n))
        check(i == 0 or lo > runs[i - 1][1] + 1, "runs %s and %s touch" % (runs[i - 1], runs[i]))
    check(runs[-1][1] == va + 8 * count - 1 or out != "",
          "last run ends at %#x" % runs[-1][1])
    rc, out, err = kvmstat("-N", kernel, "-M", os.path.join(d, "vmcore.minidump3"),
                           "--json", "rd", "%x" % va, str(count))
    errs = json.loads(out)["errors"] if rc == 1 else []
    check([int(e["address"], 16) for e in errs] == [r[0] for r in runs],
          "--json errors %s, text runs %s" % ([e["address"] for e in errs][:5], runs[:5]))
    # A read that runs into an unreadable page prints what it could and
    # names the first unreadable address.
    bad = next(va + sz for _pa, va, _off, sz in loads if not in_core(va + sz, 1))
    rc, out, err = kvmstat("-N", kernel, "-M", kva, "rd", "%x" % (bad - 16), "4")
    check(rc == 1 and len(rd_words(out)) == 2 and ("%016x" % bad) in err,
          "partial read: rc %d out %r err %r" % (rc, out, err))
    # -o FILE: exactly the bytes; nothing written when one is unreadable.
    tmp = tempfile.mkdtemp()
    try:
        f = os.path.join(tmp, "out.bin")
        r = t["reads"][2]
        rc, _, err = kvmstat("-N", kernel, "-M", os.path.join(d, "vmcore.elf"), "rd",
                             r["va"], "8", "-o", f)
        check(rc == 0 and open(f, "rb").read() == bytes.fromhex(r["hex"]),
              "rd -o wrote the wrong bytes: %s" % err)
        g = os.path.join(tmp, "bad.bin")
        rc, _, err = kvmstat("-N", kernel, "-M", kva, "rd", "%x" % (bad - 16), "4",
                             "-o", g)
        check(rc == 1 and not os.path.exists(g) and os.listdir(tmp) == ["out.bin"],
              "rd -o on an unreadable page left %s" % os.listdir(tmp))
    finally:
        shutil.rmtree(tmp)


def linux():
    kernel = os.path.join(FIX, "linux-kaslr", "vmlinux")
    n = 0
    for var in ("linux-kaslr", "linux-nokaslr"):
        core = os.path.join(FIX, var, "vmcore")
        t = json.load(open(os.path.join(FIX, var, "truth.json")))
        loads = elf_loads(core)
        for tr in t["translations"]:
            pa = tr["pa"] & ~7
            va = int(tr["va"], 16) & ~7
            want = file_bytes_at_pa(core, loads, pa, 32)
            check(want is not None, "%s: pa %#x in no PT_LOAD" % (var, pa))
            if want is None:
                continue
            words = [struct.unpack_from("<Q", want, 8 * i)[0] for i in range(4)]
            for args, base in ((["-p", "%x" % pa], pa), (["0x%x" % va], va)):
                rc, out, err = kvmstat("-N", kernel, "-M", core, "rd", *args, "4")
                got = rd_words(out) if rc == 0 else {}
                check([got.get(base + 8 * i) for i in range(4)] == words,
                      "%s rd %s: %s, file has %s (%s)" % (var, " ".join(args), out,
                                                         [hex(w) for w in words], err))
                n += 1
        for va in t["unmapped"]:
            rc, out, err = kvmstat("-N", kernel, "-M", core, "rd", va)
            check(rc == 1 and ("%016x" % int(va, 16)) in err, "%s unmapped %s: %s"
                  % (var, va, err))
    print("linux: %d reads against the vmcore's bytes" % n)


def main():
    if shutil.which("gdb") is None:
        if os.environ.get("KVS_ALLOW_MISSING_ORACLES") == "1":
            print("SKIPPED: gdb is not installed")
            return 77
        print("FAIL: gdb (the oracle) is not installed")
        return 1
    fbsd_gdb()
    linux()
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
