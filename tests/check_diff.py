#!/usr/bin/env python3
"""check_diff.py - `kvmstat diff` against the fixture generator's truth.

The FreeBSD 12 and 14 fixtures have a second moment of the same machine
(vmcore.*.t2, truth.t2.json: types that appeared, counts that moved).  The
expected rows are computed here from the two truth files alone: per malloc
type name (same-named types summed) its count and bytes in use, per UMA zone
(name, item size) its count and bytes, then the deltas, the status
(appeared, vanished, same, changed) and the order (growth first).  Checked:
dump against dump, saved --json against dump and against saved --json, two
kernels (--kernel-b, FreeBSD 12 against 14), the Linux KASLR and nokaslr
fixtures (slab caches), the text table, and bad input.
"""
import json
import os
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


def run(*args):
    p = subprocess.run([KVMSTAT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def truth_rows(t, allocators):
    """{(allocator, name, size): (bytes, count)} from a truth file."""
    rows = {}

    def add(k, b, c):
        ob, oc = rows.get(k, (0, 0))
        rows[k] = (ob + b, oc + c)
    if "malloc" in allocators and "malloc" in t:
        for r in t["malloc"]["types"]:
            add(("malloc", r["name"], None), r["memuse_bytes"], r["inuse"])
    if "uma" in allocators and "uma" in t:
        for z in t["uma"]["zones"]:
            add(("uma", z["name"], z["size"]), z["bytes"], z["count"])
    if "slab" in allocators and "caches" in t:
        for c in t["caches"]:
            add(("slab", c["name"], None), c["bytes"], c["allocated"])
    return rows


def expected(ta, tb, allocators):
    a, b = truth_rows(ta, allocators), truth_rows(tb, allocators)
    out = []
    for k in set(a) | set(b):
        ba, ca = a.get(k, (0, 0))
        bb, cb = b.get(k, (0, 0))
        st = ("appeared" if k not in a else "vanished" if k not in b else
              "same" if (ba, ca) == (bb, cb) else "changed")
        out.append({"allocator": k[0], "name": k[1], "size": k[2], "status": st,
                    "bytes_a": ba, "bytes_b": bb, "delta_bytes": bb - ba,
                    "count_a": ca, "count_b": cb, "delta_count": cb - ca})
    return out


def key(r):
    return (r["allocator"], r["name"], r.get("size"))


def compare(label, args, want):
    rc, out, err = run("--json", *args)
    check(rc == 0, "%s: exit %d: %s" % (label, rc, err[-400:]))
    if rc != 0:
        return None
    doc = json.loads(out)
    check(doc.get("schema") == "kvmstat/1", "%s: schema" % label)
    rows = doc["rows"]
    got = {key(r): r for r in rows}
    check(len(got) == len(rows), "%s: duplicate rows" % label)
    w = {key(r): r for r in want}
    check(set(got) == set(w), "%s: rows differ: only kvmstat %s, only truth %s" % (
        label, sorted(set(got) - set(w))[:5], sorted(set(w) - set(got))[:5]))
    for k in set(got) & set(w):
        g = {f: got[k].get(f) for f in w[k]}
        check(g == w[k], "%s: %s: kvmstat %s, truth %s" % (label, k, g, w[k]))
    # Growth first: delta_bytes never increases down the list.
    d = [r["delta_bytes"] for r in rows]
    check(d == sorted(d, reverse=True), "%s: not sorted by growth" % label)
    return doc


def main():
    tmp = tempfile.mkdtemp()
    n = 0
    for gen, core, extra in (("fbsd14", "vmcore.minidump3", []), ("fbsd12", "vmcore.minidump2", [])):
        d = os.path.join(FIX, gen)
        kernel = os.path.join(d, "kernel")
        ta = json.load(open(os.path.join(d, "truth.json")))
        tb = json.load(open(os.path.join(d, "truth.t2.json")))
        a, b = os.path.join(d, core), os.path.join(d, core + ".t2")
        want = expected(ta, tb, {"malloc", "uma"})
        check(any(r["status"] == "appeared" for r in want), "%s: the truth has no new type" % gen)
        doc = compare("%s dump/dump" % gen, ["-N", kernel, "diff", a, b], want)
        n += 1
        if doc:
            check(doc["a"] == {"source": a, "kernel": kernel}, "%s: a = %s" % (gen, doc["a"]))
        # Saved JSON in place of a dump: that allocator only.
        ja, jb = os.path.join(tmp, gen + ".a.json"), os.path.join(tmp, gen + ".b.json")
        for path, src, cmd in ((ja, a, "malloc"), (jb, b, "malloc")):
            rc, out, _ = run("--json", "-N", kernel, "-M", src, cmd)
            open(path, "w").write(out)
        wm = expected(ta, tb, {"malloc"})
        compare("%s json/dump" % gen, ["-N", kernel, "diff", ja, b], wm)
        compare("%s json/json" % gen, ["diff", ja, jb], wm)
        za, zb = os.path.join(tmp, gen + ".za.json"), os.path.join(tmp, gen + ".zb.json")
        for path, src in ((za, a), (zb, b)):
            open(path, "w").write(run("--json", "-N", kernel, "-M", src, "zone")[1])
        compare("%s zone json/json" % gen, ["diff", za, zb], expected(ta, tb, {"uma"}))
        n += 3
        # Text: the header, growth first, new types marked, unchanged counted.
        rc, out, _ = run("-N", kernel, "diff", a, b)
        lines = out.splitlines()
        top = max(want, key=lambda r: (r["delta_bytes"], r["delta_count"]))
        check(rc == 0 and lines[0].split()[:2] == ["ALLOC", "NAME"] and
              top["name"] in lines[1], "%s text: %s" % (gen, lines[:2]))
        check(sum(l.endswith("appeared") for l in lines) ==
              sum(r["status"] == "appeared" for r in want), "%s text: appeared rows" % gen)
    # Two kernels: FreeBSD 12 against FreeBSD 14 (--kernel-b).
    t12 = json.load(open(os.path.join(FIX, "fbsd12", "truth.json")))
    t14 = json.load(open(os.path.join(FIX, "fbsd14", "truth.t2.json")))
    doc = compare("fbsd12/fbsd14 --kernel-b",
                  ["-N", os.path.join(FIX, "fbsd12", "kernel"), "--kernel-b",
                   os.path.join(FIX, "fbsd14", "kernel"), "diff",
                   os.path.join(FIX, "fbsd12", "vmcore.minidump2"),
                   os.path.join(FIX, "fbsd14", "vmcore.minidump3.t2")],
                  expected(t12, t14, {"malloc", "uma"}))
    if doc:
        st = {r["status"] for r in doc["rows"]}
        check({"appeared", "changed"} <= st, "--kernel-b statuses: %s" % st)
    n += 1
    # Without --kernel-b the FreeBSD 12 kernel does not match the 14 dump.
    rc, out, err = run("-N", os.path.join(FIX, "fbsd12", "kernel"), "diff",
                       os.path.join(FIX, "fbsd12", "vmcore.minidump2"),
                       os.path.join(FIX, "fbsd14", "vmcore.minidump3.t2"))
    check(rc == 1 and "vmcore.minidump3.t2" in err, "mismatched kernel B: %d %s" % (rc, err))
    # Linux: the KASLR and nokaslr placements of one model.
    lk = os.path.join(FIX, "linux-kaslr", "vmlinux")
    tk = json.load(open(os.path.join(FIX, "linux-kaslr", "truth.json")))
    tn = json.load(open(os.path.join(FIX, "linux-nokaslr", "truth.json")))
    compare("linux kaslr/nokaslr", ["-N", lk, "diff", os.path.join(FIX, "linux-kaslr", "vmcore"),
                                    os.path.join(FIX, "linux-nokaslr", "vmcore")],
            expected(tk, tn, {"slab"}))
    n += 1
    # Bad input: one argument; a JSON file that is not kvmstat's; allocators
    # in common none (a malloc document against a slab dump).
    rc, out, err = run("diff", os.path.join(FIX, "fbsd14", "vmcore.minidump3"))
    check(rc == 2 and "usage" in err, "one argument: %d %s" % (rc, err))
    bad = os.path.join(tmp, "bad.json")
    open(bad, "w").write('{"hello": 1}\n')
    rc, out, err = run("--json", "diff", bad, bad)
    check(rc == 1 and "bad.json" in err and json.loads(out)["error"]["code"] == "read",
          "foreign JSON: %d %s" % (rc, err))
    rc, out, err = run("-N", lk, "diff", os.path.join(tmp, "fbsd14.a.json"),
                       os.path.join(FIX, "linux-kaslr", "vmcore"))
    check(rc == 1 and "in common" in err, "nothing in common: %d %s" % (rc, err))
    print("%d diffs against truth, %d failures" % (n, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
