#!/usr/bin/env python3
"""check_nodata.py - a Linux dump whose kallsyms names text only (a kernel
without CONFIG_KALLSYMS_ALL), read with no kernel file, against the fixture
generator's truth.

fixtures/cores/linux-nodata/vmcore (mkcore_linux.py --variant nodata): the
data come from VMCOREINFO's SYMBOL lines and the memory itself -- BTF found
by its header past decoy headers, the banner by init_uts_ns past weak
decoys, slab_caches through the memory map past decoy self-hosted caches,
nr_node_ids from node_online_map.  No route gives the per-CPU offsets: the
CPUs' slabs are flagged unread.  So:
  - `slab` is /proc/slabinfo byte for byte (nothing in it needs the CPUs),
    and the same bytes -N vmlinux gives; exit 1 with a warning;
  - `slab --json` (and --percpu): every figure exact, count/free/bytes and
    percpu null, rows incomplete; exit 1;
  - `--format crash`: ALLOCATED is `?`;
  - `info` gives the banner, `dmesg` the log;
  - copies of the dump without the real BTF / with the banner's version
    changed must refuse the decoys (no types; no version), never take one.
A missing fixture or truth fails the test.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nokernel_common import (FIX, KVMSTAT, check, num, run, load_json,  # noqa: E402
                             text_fields, slab_rows, main_with_cache)

DIR = os.path.join(FIX, "linux-nodata")
CORE = os.path.join(DIR, "vmcore")


def kv(*args, **kw):
    return run("-M", CORE, *args, **kw)


def main():
    for f in (os.path.join(DIR, "truth.json"), CORE, KVMSTAT):
        if not check(os.path.isfile(f), "missing %s (the test's oracle or subject)" % f):
            return
    truth = json.load(open(os.path.join(DIR, "truth.json")))
    for k in ("kallsyms", "btf", "vmlinux", "caches", "slabinfo", "dmesg", "kernel", "nodata"):
        if not check(k in truth, "truth.json has no %r: not the nodata fixture's truth" % k):
            return
    vmlinux = os.path.join(FIX, truth["vmlinux"])
    if not check(os.path.isfile(vmlinux), "missing %s (the dump's kernel file)" % vmlinux):
        return
    nd = truth["nodata"]
    ks = truth["kallsyms"]
    check(truth["variant"] == "nodata" and truth["caches"], "truth: the nodata variant")
    check(ks.get("text_only") and ks["symbols"] and
          all(s["type"] in "tTwW" for s in ks["symbols"]) and
          not any(s["name"] in ("slab_caches", "linux_banner", "__per_cpu_offset",
                                "__start_BTF", "nr_cpu_ids") for s in ks["symbols"]),
          "truth: kallsyms of text symbols only")
    for n in ("init_uts_ns", "node_online_map", "prb", "_stext"):
        check(n in nd["vmcoreinfo_symbols"], "truth: VMCOREINFO names %s" % n)
    check(len(truth["btf"]["decoys"]) >= 4 and len(nd["banner_decoys"]) == 2 and
          len(nd["cache_decoys"]) == 4, "truth: the decoys are there")

    # slab: /proc/slabinfo, byte for byte; the exact counts are not known.
    want = "".join(line + "\n" for line in truth["slabinfo"])
    rc, out, err = kv("slab")
    check(rc == 1, "slab: exit %d, want 1 (the CPUs' slabs are unread): %s" %
          (rc, err.strip()[-300:]))
    check(out == want, "slab: not the truth's slabinfo (%d lines, truth %d)" %
          (out.count("\n"), want.count("\n")))
    check("CPUs' slabs" in err and "warning" in err, "slab: no warning of the unread CPUs: %s" %
          err.strip()[-300:])
    rc2, out2, err2 = run("-N", vmlinux, "-M", CORE, "slab")
    check(rc2 == 0 and out2 == out, "slab: -N vmlinux's table differs (rc %d): %s" %
          (rc2, err2.strip()[-300:]))

    schema = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                         "docs", "kvmstat-1.schema.json")))
    for args, pc in ((("--json", "slab"), False), (("--json", "slab", "--percpu"), True)):
        rc, out, err = kv(*args)
        doc = load_json(" ".join(args), rc, out, err, want_rc=1)
        if doc is not None:
            slab_rows(" ".join(args), doc, truth, pc, percpu_known=False)
            # the nulls are the schema's (docs/kvmstat-1.schema.json)
            import jsonschema
            v = jsonschema.validators.validator_for(schema)(
                {"$ref": "#/$defs/slab", "$defs": schema["$defs"]})
            errs = [e.message[:120] for e in v.iter_errors(doc)]
            check(not errs, "%s: not the schema's slab document: %s" % (" ".join(args), errs[:3]))
    # with the kernel file the CPUs are known: the exact counts are the truth's
    rc, out, err = run("-N", vmlinux, "-M", CORE, "--json", "slab")
    doc = load_json("-N --json slab", rc, out, err)
    if doc is not None:
        slab_rows("-N --json slab", doc, truth, False)

    rc, out, err = kv("slab", "--format", "crash")
    lines = out.splitlines()[1:]
    check(rc == 1 and len(lines) == len(truth["caches"]), "slab --format crash: exit %d, %d rows"
          % (rc, len(lines)))
    for line, t in zip(lines, truth["caches"]):
        f = line.split()
        check(len(f) >= 7 and int(f[0], 16) == num(t["address"]) and f[2] == "?" and
              f[3] == str(t["num_objs"]) and f[4] == str(t["num_slabs"]),
              "slab --format crash %s: %r" % (t["name"], line))

    # info: the banner init_uts_ns vouches for (not a decoy); dmesg.
    ki = truth["kernel"]
    rc, out, err = kv("--json", "info")
    doc = load_json("info --json", rc, out, err)
    if doc is not None:
        check(doc.get("version") == ki["version"], "info --json: version %r, truth %r" %
              (doc.get("version"), ki["version"]))
        check(doc.get("panicstr") == ki["panic"], "info --json: panic %r, truth %r" %
              (doc.get("panicstr"), ki["panic"]))
    rc, out, err = kv("info")
    check(rc == 0 and text_fields(out).get("version") == ki["version"],
          "info: version %r (rc %d)" % (text_fields(out).get("version"), rc))
    rc, out, err = kv("dmesg")
    check(rc == 0 and out == truth["dmesg"]["text"], "dmesg: not the truth's log (rc %d) %s" %
          (rc, err.strip()[-300:]))
    # a VMCOREINFO symbol reads as any other
    rc, out, err = kv("rd", "init_uts_ns", "1", "-o", "-", binary=True)
    check(rc == 0 and out[:6] == b"Linux\0", "rd init_uts_ns: %r (rc %d) %s" % (out[:8], rc, err))

    # kvmtop: the objects in use are not known, so not summed; slabinfo's stand
    kvmtop = os.path.join(os.path.dirname(KVMSTAT), "..", "tui", "kvmtop")
    p = subprocess.run([kvmtop, "-M", CORE, "-b", "-n", "1"], capture_output=True, text=True,
                       env=dict(os.environ, COLUMNS="200"))
    lines = p.stdout.splitlines()
    head = lines[1] if len(lines) > 1 else ""
    check(p.returncode == 0 and "in use ?" in head and "memory ?" in head,
          "kvmtop -b: the header sums counts nobody knows: %r (rc %d) %s" %
          (head, p.returncode, p.stderr.strip()[-200:]))
    cols = next((ln.split() for ln in lines if ln.startswith("CACHE ")), [])
    rows = {ln.split()[0]: ln.split() for ln in lines[4:] if ln.strip()}
    if check("OBJS" in cols and "INUSE" in cols, "kvmtop -b at 200 columns: no OBJS/INUSE: %r"
             % cols):
        for t in truth["caches"][:10]:
            r = rows.get(t["name"])
            check(r is not None and len(r) == len(cols) and
                  r[cols.index("OBJS")] == str(t["num_objs"]) and r[cols.index("INUSE")] == "?",
                  "kvmtop -b %s: OBJS not slabinfo's %s, or INUSE not ?: %r" %
                  (t["name"], t["num_objs"], r))

    # what needs each object's state needs the CPUs' slabs: a clear refusal
    addr = "0x%x" % num(truth["caches"][0]["address"])
    for args in (("whatis", addr), ("slab", "--objects", truth["caches"][0]["name"])):
        rc, out, err = kv(*args)
        check(rc != 0 and "per-CPU offsets" in err and "-N" in err,
              "%s: not a refusal that says why (rc %d): %r" % (" ".join(args), rc,
                                                               err.strip()[-200:]))

    # SYMBOL(mem_section) holds a pointer's value in the direct map: no symbol
    check("mem_section" in nd["vmcoreinfo_symbols"], "truth: VMCOREINFO gives mem_section")
    rc, out, err = kv("rd", "mem_section")
    check(rc != 0, "rd mem_section: a pointer's value taken as a symbol: %r" % out[:60])

    # Decoys refused: copies of the dump whose real BTF or banner is spoilt.
    data = open(CORE, "rb").read()
    with tempfile.TemporaryDirectory() as tmp:
        spoilt = os.path.join(tmp, "vmcore")
        btf_at = -1
        for k in range(data.count(b"\x9f\xeb\x01\x00")):
            btf_at = data.find(b"\x9f\xeb\x01\x00", btf_at + 1)
            hl = int.from_bytes(data[btf_at + 4:btf_at + 8], "little")
            if hl == 24 and hashlib.sha256(data[btf_at:btf_at + truth["btf"]["bytes"]]).hexdigest() \
                    == truth["btf"]["sha256"]:
                break
        else:
            btf_at = -1
        if check(btf_at > 0, "the real BTF is in the dump file"):
            b = bytearray(data)
            b[btf_at + 2] = 9                  # its version: no longer BTF
            open(spoilt, "wb").write(b)
            rc, out, err = run("-M", spoilt, "--json", "slab")
            check(rc != 0 and "caches" not in out, "without the real BTF a decoy was taken: "
                  "rc %d %s" % (rc, out[:100]))
            check("BTF" in err, "without the real BTF: the error does not say why: %r" %
                  err.strip()[-200:])
        bl = ki["banner"].encode()
        if check(data.count(bl) >= 1, "the banner is in the dump file"):
            # every copy (the log holds one too), inside the version's date
            open(spoilt, "wb").write(data.replace(bl, bl[:-3] + bytes([bl[-3] ^ 1]) + bl[-2:]))
            rc, out, err = run("-M", spoilt, "--json", "info")
            doc = load_json("info, banner spoilt", rc, out, err)
            if doc is not None:
                check(doc.get("version") is None, "banner spoilt: a weak match was taken: %r"
                      % doc.get("version"))


if __name__ == "__main__":
    main_with_cache(main)
