#!/usr/bin/env python3
"""check_census_linux.py - `kvmstat mem`, `buddyinfo` and `zoneinfo` on the
synthetic Linux dumps, against the fixture generator's own model.

mkcore_linux.py places two NUMA nodes (node 0: DMA and DMA32, node 1:
Normal; Movable and Device empty), their free lists, watermarks and boost,
lowmem_reserve, per-zone and per-node counters (some below zero, which the
kernel shows as 0), the CPUs' pagesets and pending NUMA events (online CPUs
only are folded in), the global counters and what /proc/meminfo reads
besides, and writes into truth.json["census"] each zone as /proc/zoneinfo
gives it, /proc/buddyinfo's lines and /proc/meminfo's values.  Checked, on
the KASLR and nokaslr ELF vmcores, the KASLR raw image, and the nodebug
dump without a kernel file (kallsyms and BTF from memory):
  buddyinfo   text = truth's lines byte for byte; --json zones
  zoneinfo    --json: every field of every zone, stats, node_stats, pagesets
  mem         text: every line, names and order, "%-16s%8lu kB"; --json
  --csv       parses, one row per line / zone
Every --json document is validated against docs/kvmstat-1.schema.json
(python3-jsonschema).  A copy of the raw image whose node_data[1] points outside memory must keep
node 0 whole, show node 1's zones as unreadable and exit 1 (incomplete).
A missing fixture, truth or jsonschema fails the test.
"""
import csv
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SRC = os.environ.get("KVS_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
VMLINUX = os.path.join(FIX, "linux-kaslr", "vmlinux")
failures = 0
checks = 0
VALIDATORS = {}


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def run(args):
    p = subprocess.run([KVMSTAT] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def valid(doc, kind, label):
    v = VALIDATORS.get(kind)
    if not check(v is not None, "no validator for %s" % kind):
        return
    errs = list(v.iter_errors(doc))
    check(not errs, "%s: %s --json against the schema: %s" % (
        label, kind, "; ".join(e.message[:200] for e in errs[:3])))


def meminfo_text(lines):
    out = []
    for name, v in lines:
        label = name + ":"
        if name.startswith("HugePages_"):
            out.append("%-16s%8d" % (label, v))
        else:
            out.append("%-16s%8d kB" % (label, v))
    return "\n".join(out) + "\n"


def one(label, args, truth):
    t = truth["census"]
    # buddyinfo
    rc, out, err = run(args + ["buddyinfo"])
    check(rc == 0, "%s: buddyinfo exits 0 (%d: %s)" % (label, rc, err.strip()))
    check(out == "".join(line + "\n" for line in t["buddyinfo"]),
          "%s: buddyinfo text equals the model's lines:\n%s" % (label, out))
    rc, out, err = run(args + ["--json", "buddyinfo"])
    check(rc == 0, "%s: buddyinfo --json exits 0" % label)
    doc = json.loads(out)
    valid(doc, "buddyinfo", label)
    want = [{"node": z["node"], "zone": z["zone"], "free": z["free"]}
            for z in t["zones"] if z["populated"]]
    check(doc.get("zones") == want, "%s: buddyinfo --json zones" % label)

    # zoneinfo
    rc, out, err = run(args + ["--json", "zoneinfo"])
    check(rc == 0, "%s: zoneinfo --json exits 0 (%s)" % (label, err.strip()))
    doc = json.loads(out)
    valid(doc, "zoneinfo", label)
    got = doc.get("zones", [])
    check(len(got) == len(t["zones"]), "%s: zoneinfo: %d zones, model %d" %
          (label, len(got), len(t["zones"])))
    for g, w in zip(got, t["zones"]):
        name = "%s: zoneinfo node %d %s" % (label, w["node"], w["zone"])
        for k in ("node", "zone", "kaddr", "populated", "boost", "min", "low", "high",
                  "spanned", "present", "managed", "cma", "start_pfn", "protection"):
            check(g.get(k) == w[k], "%s: %s %r, model %r" % (name, k, g.get(k), w[k]))
        check(g.get("pages_free") == w["pages_free"], "%s: pages_free" % name)
        for k in ("stats", "node_stats", "node_unreclaimable"):
            check(g.get(k) == w.get(k), "%s: %s %r, model %r" % (name, k, g.get(k), w.get(k)))
        if w["populated"]:
            check(g.get("pagesets") == w["pagesets"], "%s: pagesets %r, model %r" %
                  (name, g.get("pagesets"), w["pagesets"]))
    rc, out, err = run(args + ["zoneinfo"])
    check(rc == 0, "%s: zoneinfo exits 0" % label)
    for w in t["zones"]:
        check(("Node %d, zone %8s\n" % (w["node"], w["zone"])) in out or
              ("Node %d, zone %8s\n  per-node stats" % (w["node"], w["zone"])) in out,
              "%s: zoneinfo text has node %d zone %s" % (label, w["node"], w["zone"]))
    check(out.count("\n  pagesets") == sum(1 for w in t["zones"] if w["populated"]),
          "%s: zoneinfo text: pagesets of the populated zones only" % label)

    # mem
    rc, out, err = run(args + ["mem"])
    check(rc == 0, "%s: mem exits 0 (%s)" % (label, err.strip()))
    check(out == meminfo_text(t["meminfo"]), "%s: mem text equals the model's "
          "/proc/meminfo:\n%s\nmodel:\n%s" % (label, out, meminfo_text(t["meminfo"])))
    rc, out, err = run(args + ["--json", "mem"])
    doc = json.loads(out)
    valid(doc, "mem", label)
    check(list(doc.get("meminfo", {}).items()) == [tuple(x) for x in t["meminfo"]],
          "%s: mem --json meminfo in the kernel's order" % label)
    check(doc.get("flags") == {"MemAvailable": ["estimate"]},
          "%s: mem --json flags %r" % (label, doc.get("flags")))
    rc, out, err = run(args + ["--csv", "mem"])
    rows = list(csv.reader(io.StringIO(out)))
    check(rc == 0 and len(rows) == len(t["meminfo"]) + 1, "%s: mem --csv rows" % label)
    rc, out, err = run(args + ["--csv", "zoneinfo"])
    rows = list(csv.reader(io.StringIO(out)))
    check(rc == 0 and len(rows) == len(t["zones"]) + 1, "%s: zoneinfo --csv rows" % label)


def elf_symbol(path, want):
    """The link address of symbol `want` in an ELF64 file (its .symtab)."""
    b = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    for s in secs:
        if s[1] != 2:        # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for k in range(s[5] // 24):
            name, _info, _o, _sh, value, _size = struct.unpack_from("<IBBHQQ", b, s[4] + k * 24)
            end = b.index(b"\0", strtab[4] + name)
            if b[strtab[4] + name:end].decode() == want:
                return value
    return None


def lost_node(truth):
    """node_data[1] pointed outside memory in a copy of the KASLR raw image:
    node 1's zones are listed as unreadable (`?`, null), node 0's stay
    whole, and every command exits 1 saying the answer is incomplete."""
    t = truth["census"]
    k = truth["kaslr"]
    link = elf_symbol(VMLINUX, "node_data")
    if not check(link is not None, "lost node: node_data in the fixture vmlinux"):
        return
    pa = link + k["kerneloffset"] - 0xffffffff80000000 + k["phys_base"]
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "mem.raw")
        shutil.copy(os.path.join(FIX, "linux-kaslr", "mem.raw"), img)
        with open(img, "r+b") as f:
            f.seek(pa + 8)
            f.write(struct.pack("<Q", int(k["page_offset_base"], 16) + (1 << 38)))
        args = ["--no-cache", "-N", VMLINUX, "--raw", "-M", img]
        node0 = [line for line in t["buddyinfo"] if line.startswith("Node 0,")]
        rc, out, err = run(args + ["buddyinfo"])
        lines = out.splitlines()
        check(rc == 1 and "incomplete" in err, "lost node: buddyinfo exits 1, incomplete "
              "(%d: %s)" % (rc, err.strip()))
        check(lines[:len(node0)] == node0 and len(lines) == len(node0) + 5 and
              all(line.startswith("Node 1, zone") and line.endswith("?")
                  for line in lines[len(node0):]),
              "lost node: node 0's lines kept, node 1's zones shown as ?:\n%s" % out)
        rc, out, err = run(args + ["--json", "zoneinfo"])
        doc = json.loads(out)
        valid(doc, "zoneinfo", "lost node")
        z1 = [z for z in doc["zones"] if z["node"] == 1]
        check(rc == 1 and len(z1) == 5 and all("unreadable" in z for z in z1),
              "lost node: zoneinfo flags node 1's zones unreadable")
        z0 = [z for z in doc["zones"] if z["node"] == 0]
        check([z.get("stats") for z in z0] == [z.get("stats") for z in t["zones"]
                                                if z["node"] == 0],
              "lost node: node 0's counters kept")
        rc, out, err = run(args + ["--json", "mem"])
        doc = json.loads(out)
        valid(doc, "mem", "lost node")
        check(rc == 1 and doc["meminfo"].get("MemAvailable", 0) is None and
              "unreadable" in doc.get("flags", {}).get("MemAvailable", []) and
              doc["meminfo"].get("MemTotal") == dict(t["meminfo"])["MemTotal"],
              "lost node: MemAvailable null and flagged, MemTotal kept (%d)" % rc)
        rc, out, err = run(args + ["mem"])
        check(rc == 1 and "MemAvailable:          ? kB\n" in out,
              "lost node: mem text shows MemAvailable as ?")


def human(v):
    """kvmtop's figures: one decimal and a unit (B K M G T)."""
    units = ["B", "K", "M", "G", "T"]
    u = 0
    while abs(v) >= 1024 and u < 4:
        v /= 1024
        u += 1
    return ("%.1f%s" if u else "%.0f%s") % (v, units[u])


def kvmtop_memory(label, args, truth):
    """kvmtop's memory screen: each part of the bar is the sum of the
    meminfo lines it stands for, from the truth."""
    top = os.path.join(os.path.dirname(os.path.dirname(KVMSTAT)), "tui", "kvmtop")
    if not check(os.access(top, os.X_OK), "no kvmtop at %s" % top):
        return
    p = subprocess.run([top, "-b", "-n", "1", "--view", "memory", "--width", "100"] +
                       [a for a in args if a != "--no-cache"], capture_output=True, text=True,
                       timeout=120)
    if not check(p.returncode == 0, "%s: kvmtop memory: %s" % (label, p.stderr.strip())):
        return
    mi = dict(truth["census"]["meminfo"])
    want = {"anon": mi.get("AnonPages", 0), "page cache": mi.get("Cached", 0) + mi.get("Buffers", 0),
            "slab": mi.get("Slab", 0), "page tables": mi.get("PageTables", 0) +
            mi.get("SecPageTables", 0), "kernel stacks": mi.get("KernelStack", 0),
            "vmalloc": mi.get("VmallocUsed", 0), "per-CPU": mi.get("Percpu", 0),
            "free": mi.get("MemFree", 0)}
    got = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and len(f[0]) == 1 and f[-1].endswith("%"):
            got[" ".join(f[1:-2])] = f[-2]
    for part, kib in want.items():
        check(got.get(part) == human(kib * 1024), "%s: kvmtop %s %s, truth %s" % (
            label, part, got.get(part), human(kib * 1024)))

def main():
    if not os.access(KVMSTAT, os.X_OK):
        print("FAIL: no kvmstat at", KVMSTAT)
        return 1
    try:
        import jsonschema
    except ImportError:
        print("FAIL: python3-jsonschema is missing (the schema oracle)")
        return 1
    schema = json.load(open(os.path.join(SRC, "docs", "kvmstat-1.schema.json")))
    for kind in ("mem", "buddyinfo", "zoneinfo"):
        sub = dict(schema)
        sub.pop("anyOf", None)
        sub["$ref"] = "#/$defs/" + kind
        VALIDATORS[kind] = jsonschema.Draft202012Validator(sub)
    cases = [
        ("kaslr elf", "linux-kaslr", ["-N", VMLINUX, "-M", "vmcore"]),
        ("kaslr raw", "linux-kaslr", ["-N", VMLINUX, "--raw", "-M", "mem.raw"]),
        ("nokaslr elf", "linux-nokaslr", ["-N", VMLINUX, "-M", "vmcore"]),
        ("nodebug, no kernel file", "linux-nodebug", ["-M", "vmcore"]),
        ("nodebug with -N", "linux-nodebug", ["-N", VMLINUX, "-M", "vmcore"]),
    ]
    for label, d, args in cases:
        tpath = os.path.join(FIX, d, "truth.json")
        if not check(os.path.exists(tpath), "%s: no truth at %s" % (label, tpath)):
            continue
        truth = json.load(open(tpath))
        if not check("census" in truth, "%s: truth.json has no census (regenerate the "
                     "fixtures)" % label):
            continue
        args = [os.path.join(FIX, d, a) if a in ("vmcore", "mem.raw") else a for a in args]
        if not check(all(os.path.exists(a) for a in args if a.startswith(FIX)),
                     "%s: fixture missing" % label):
            continue
        one(label, ["--no-cache"] + args, truth)
        kvmtop_memory(label, args, truth)
    tpath = os.path.join(FIX, "linux-kaslr", "truth.json")
    if check(os.path.exists(tpath), "no truth at %s" % tpath):
        lost_node(json.load(open(tpath)))
    print("%d checks, %d failures" % (checks, failures))
    return 1 if failures or checks == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
