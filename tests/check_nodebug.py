#!/usr/bin/env python3
"""check_nodebug.py - a Linux dump read with no kernel file, against the
fixture generator's truth.

fixtures/cores/linux-nodebug/vmcore (mkcore_linux.py --variant nodebug) is a
KASLR Linux 6.1 dump whose image also holds the kernel's kallsyms tables
(named by VMCOREINFO's SYMBOL(kallsyms_*)) and its BTF (between __start_BTF
and __stop_BTF).  With `-M vmcore` alone, kvmstat must find the symbols and
types in the dump: `slab` (text, --json, --json --percpu: every cache's
figures), `info` (text and --json), `dmesg` and `rd` of kallsyms symbols
against truth.json; and the same dump opened with its kernel file (-N, the
fixture vmlinux, its DWARF) must give the identical slab JSON.  Run with an
empty layout cache of its own, so the first answers come from the dump's BTF.
A missing fixture or truth fails the test.
"""
import hashlib
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nokernel_common import (FIX, KVMSTAT, ENV, check, num, run, load_json,  # noqa: E402
                             text_fields, slab_rows, main_with_cache)

DIR = os.path.join(FIX, "linux-nodebug")
CORE = os.path.join(DIR, "vmcore")


def kv(*args, **kw):
    """kvmstat on the dump alone: no -N."""
    return run("-M", CORE, *args, **kw)


def main():
    for f in (os.path.join(DIR, "truth.json"), CORE, KVMSTAT):
        if not check(os.path.isfile(f), "missing %s (the test's oracle or subject)" % f):
            return
    truth = json.load(open(os.path.join(DIR, "truth.json")))
    for k in ("kallsyms", "btf", "vmlinux", "caches", "slabinfo", "dmesg", "kernel"):
        if not check(k in truth, "truth.json has no %r: not the nodebug fixture's truth" % k):
            return
    vmlinux = os.path.join(FIX, truth["vmlinux"])
    if not check(os.path.isfile(vmlinux), "missing %s (the dump's kernel file)" % vmlinux):
        return
    check(truth["variant"] == "nodebug" and truth["caches"], "truth: the nodebug variant")
    ki = truth["kernel"]

    # --json slab, then --percpu: every cache's figures, in list order.
    rc, out, err = kv("--json", "slab")
    doc = load_json("slab --json", rc, out, err)
    if doc is not None:
        slab_rows("slab --json", doc, truth, False)
    rc, out, err = kv("--json", "slab", "--percpu")
    first = out
    doc = load_json("slab --json --percpu", rc, out, err)
    if doc is not None:
        slab_rows("slab --json --percpu", doc, truth, True)
    # A second run (its answers now in the layout cache) says the same.
    rc, out, err = kv("--json", "slab", "--percpu")
    check(rc == 0 and out == first, "slab --json --percpu: the cached run differs (rc %d)" % rc)
    rc, out, err = kv("--no-cache", "--json", "slab", "--percpu")
    check(rc == 0 and out == first, "slab --json --percpu --no-cache differs (rc %d)" % rc)

    # slab: /proc/slabinfo 2.1, byte for byte.
    rc, out, err = kv("slab")
    check(rc == 0, "slab: exit %d: %s" % (rc, err.strip()[-400:]))
    want = "".join(line + "\n" for line in truth["slabinfo"])
    check(out == want, "slab: not the truth's slabinfo (%d lines, truth %d)" %
          (out.count("\n"), want.count("\n")))

    # info: the kernel's banner, panic and CPUs, read through kallsyms.
    vc = truth["files"]["vmcore"]
    rc, out, err = kv("--json", "info")
    doc = load_json("info --json", rc, out, err)
    if doc is not None:
        for k, v in (("format", "elf"), ("page_size", 4096), ("dumped_pages", vc.get("pages")),
                     ("file_bytes", os.path.getsize(CORE)), ("version", ki["version"]),
                     ("panicstr", ki["panic"]), ("ncpus", ki["ncpus"]),
                     ("mp_maxid", ki["maxid"])):
            check(doc.get(k) == v, "info --json: %s %r, truth %r" % (k, doc.get(k), v))
    rc, out, err = kv("info")
    if check(rc == 0, "info: exit %d: %s" % (rc, err.strip()[-400:])):
        f = text_fields(out)
        for k, v in (("format", "elf"), ("page size", "4096"), ("dumped pages", str(vc.get("pages"))),
                     ("version", ki["version"]), ("panic", ki["panic"]),
                     ("cpus", str(ki["ncpus"])), ("mp_maxid", str(ki["maxid"]))):
            check(f.get(k) == v, "info: %s %r, truth %r" % (k, f.get(k), v))

    # dmesg: the printk ring, oldest first.
    rc, out, err = kv("dmesg")
    check(rc == 0, "dmesg: exit %d: %s" % (rc, err.strip()[-400:]))
    check(out == truth["dmesg"]["text"], "dmesg: not the truth's log (%d lines, truth %d)" %
          (out.count("\n"), truth["dmesg"]["text"].count("\n")))

    # rd by kallsyms names: the BTF's bytes, the relocated relative base,
    # the banner at its KASLR address.
    btf = truth["btf"]
    check(num(btf["stop"]) - num(btf["start"]) == btf["bytes"], "truth: BTF bounds")
    rc, out, err = kv("rd", "__start_BTF", str((btf["bytes"] + 7) // 8), "-o", "-", binary=True)
    check(rc == 0 and hashlib.sha256(out[:btf["bytes"]]).hexdigest() == btf["sha256"],
          "rd __start_BTF: not the BTF pahole made (rc %d, %d bytes) %s" % (rc, len(out), err))
    rc, out, err = kv("rd", "kallsyms_relative_base", "1", "-o", "-", binary=True)
    check(rc == 0 and out == num(truth["kallsyms"]["relative_base"]).to_bytes(8, "little"),
          "rd kallsyms_relative_base: %r (rc %d) %s" % (out, rc, err))
    banner = truth["kernel"]["banner"].encode()
    rc, out, err = kv("rd", "linux_banner", str((len(banner) + 7) // 8), "-o", "-", binary=True)
    check(rc == 0 and out[:len(banner)] == banner, "rd linux_banner: %r (rc %d) %s" %
          (out[:60], rc, err))
    syms = {s["name"]: s for s in truth["kallsyms"]["symbols"]}
    check(len(syms) == truth["kallsyms"]["num_syms"] and "_stext" in syms and
          any(s["type"] == "A" for s in syms.values()),
          "truth: kallsyms with _stext and absolute per-CPU symbols")
    check(truth["vmcoreinfo"]["text"].count("SYMBOL(kallsyms_") == 6,
          "truth: VMCOREINFO names the six kallsyms tables")

    # The same dump with its kernel file: DWARF (forced, and as chosen)
    # gives the JSON the dump's own kallsyms and BTF gave.
    for label, extra in (("-N, KVS_TYPES=dwarf", {"KVS_TYPES": "dwarf"}), ("-N", {})):
        env = dict(ENV, **extra)
        for args in (("--json", "slab"), ("--json", "slab", "--percpu")):
            rc0, out0, _ = kv(*args)
            rc, out, err = run("-N", vmlinux, "-M", CORE, "--no-cache", *args, env=env)
            check(rc == 0 and rc0 == 0 and out == out0,
                  "%s %s: differs from the run without a kernel file (rc %d): %s" %
                  (label, " ".join(args), rc, err.strip()[-300:]))
    rc, out, err = run("-N", vmlinux, "-M", CORE, "dmesg")
    check(rc == 0 and out == truth["dmesg"]["text"], "-N dmesg: not the truth's log")

    # A kernel before 6.0 names no kallsyms table in VMCOREINFO: the same
    # dump with those names removed (a copy, the keys renamed in place)
    # must find the tables by their shapes and give the same answers, and
    # the symbols the truth lists where it says.
    with tempfile.TemporaryDirectory() as tmp:
        bare = os.path.join(tmp, "vmcore")
        data = open(CORE, "rb").read()
        check(data.count(b"SYMBOL(kallsyms_") >= 6, "the dump's VMCOREINFO names the tables")
        with open(bare, "wb") as f:
            f.write(data.replace(b"SYMBOL(kallsyms_", b"SYMBOL(kallsyXs_"))
        for args in (("--json", "slab"), ("--json", "slab", "--percpu"), ("dmesg",)):
            rc0, out0, _ = kv(*args)
            rc, out, err = run("-M", bare, *args)
            check(rc == 0 and rc0 == 0 and out == out0,
                  "no kallsyms names in VMCOREINFO, %s: differs (rc %d): %s" %
                  (" ".join(args), rc, err.strip()[-300:]))
        slide = num(truth["kallsyms"]["relative_base"]) - num(truth["kallsyms"]["relative_base_link"])
        for name in ("_stext", "kallsyms_token_table", "slab_caches"):
            if name not in syms:
                continue
            want = num(syms[name]["link"]) + slide
            rc, out, err = run("-M", bare, "rd", name)
            check(rc == 0 and out.lower().startswith("%x:" % want),
                  "no kallsyms names: rd %s at 0x%x, got %r %s" % (name, want, out[:40], err))
        # a token index that does not index the table: refused, not
        # decoded into wrong names (the table is found in the file the way
        # the kernel lays it out: back from its "a" token, 256 forward)
        run_at = data.find(b"a\0b\0c\0d\0e\0f\0g\0h\0")
        p = run_at
        for _ in range(ord("a")):
            p = data.rindex(b"\0", 0, p - 1) + 1
        offs, q = [], p
        for _ in range(256):
            offs.append(q - p)
            q = data.index(b"\0", q) + 1
        index = struct.pack("<256H", *offs)
        at = data.find(index, q)
        check(run_at > 0 and 0 < at - q < 8, "the token index follows the table in the file")
        bad = bytearray(data.replace(b"SYMBOL(kallsyms_", b"SYMBOL(kallsyXs_"))
        bad[at + 2 * 0x62:at + 2 * 0x62 + 2] = struct.pack("<H", offs[0x62] + 1)
        with open(bare, "wb") as f:
            f.write(bad)
        rc, out, err = run("-M", bare, "slab")
        check(rc != 0 and "kallsyms" in err, "a token index off by one byte: %d %s" %
              (rc, err.strip()))
        # and a dump whose tables are not there either says so
        with open(bare, "wb") as f:
            f.write(data.replace(b"SYMBOL(kallsyms_", b"SYMBOL(kallsyXs_")
                    .replace(b"kallsyms_token_", b"kallsyms_tokXn_")
                    .replace(b"\0a\0b\0c\0d\0e\0f\0g\0h\0", b"\0a\0b\0c\0d\0e\0f\0g\0x\0"))
        rc, out, err = run("-M", bare, "slab")
        check(rc != 0 and "kallsyms" in err, "no tables at all: %d %s" % (rc, err.strip()))


if __name__ == "__main__":
    main_with_cache(main)
