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


def truth_entries(t, allocators):
    """[(allocator, name, size, addr, bytes, count)] from a truth file."""
    out = []
    if "malloc" in allocators and "malloc" in t:
        for r in t["malloc"]["types"]:
            out.append(("malloc", r["name"], None, int(r["addr"], 16), r["memuse_bytes"],
                        r["inuse"]))
    if "uma" in allocators and "uma" in t:
        for z in t["uma"]["zones"]:
            out.append(("uma", z["name"], z["size"], int(z["addr"], 16), z["bytes"], z["count"]))
    if "slab" in allocators and "caches" in t:
        for c in t["caches"]:
            out.append(("slab", c["name"], None, int(c["address"], 16), c["bytes"],
                        c["allocated"]))
    return out


def expected(ta, tb, allocators, one_kernel=True):
    """(rows, matched_by): entries paired by (allocator, address, name,
    size) unless the sides are two kernels (--kernel-b); if any pair, every other entry is its own appeared or vanished
    row; else rows by (allocator, name, size), same-named entries summed."""
    a, b = truth_entries(ta, allocators), truth_entries(tb, allocators)
    bkeys = {e[:4] for e in b}
    pairs = {e[:4] for e in a if e[:4] in bkeys} if one_kernel else set()
    rows = {}

    def add(k, side, e):
        r = rows.setdefault(k, [None, None, 0, 0, 0, 0])
        r[side] = e[3]
        r[2 + side] += e[4]
        r[4 + side] += e[5]
    if pairs:
        for side, es in ((0, a), (1, b)):
            for e in es:
                if e[:4] in pairs:
                    ends = (e[3], e[3])
                else:
                    ends = (None, e[3]) if side else (e[3], None)
                add(e[:3] + ends, side, e)
    else:
        for side, es in ((0, a), (1, b)):
            for e in es:
                add(e[:3], side, e)
    out = []
    for k, (ka, kb, ba, bb, ca, cb) in rows.items():
        st = ("appeared" if ka is None else "vanished" if kb is None else
              "same" if (ba, ca) == (bb, cb) else "changed")
        r = {"allocator": k[0], "name": k[1], "size": k[2], "status": st,
             "bytes_a": ba, "bytes_b": bb, "delta_bytes": bb - ba,
             "count_a": ca, "count_b": cb, "delta_count": cb - ca}
        if pairs:
            r["kaddr_a"] = None if ka is None else "0x%016x" % ka
            r["kaddr_b"] = None if kb is None else "0x%016x" % kb
        out.append(r)
    return out, "address" if pairs else "name"


def key(r):
    return (r["allocator"], r["name"], r.get("size"), r.get("kaddr_a"), r.get("kaddr_b"))


def status_counts(rows):
    return {s: sum(r["status"] == s for r in rows) for s in ("appeared", "vanished")}


def truth_counts(ta, tb):
    """Appeared and vanished malloc types by the truth's own addresses."""
    a = {(r["addr"], r["name"]) for r in ta["malloc"]["types"]}
    b = {(r["addr"], r["name"]) for r in tb["malloc"]["types"]}
    return len(b - a), len(a - b)


def compare(label, args, want_by):
    want, by = want_by
    rc, out, err = run("--json", *args)
    check(rc == 0, "%s: exit %d: %s" % (label, rc, err[-400:]))
    if rc != 0:
        return None
    doc = json.loads(out)
    check(doc.get("schema") == "kvmstat/1", "%s: schema" % label)
    check(doc.get("matched_by") == by, "%s: matched_by %s, truth %s" % (
        label, doc.get("matched_by"), by))
    rows = doc["rows"]
    check(status_counts(rows) == status_counts(want), "%s: appeared/vanished %s, truth %s" % (
        label, status_counts(rows), status_counts(want)))
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
        want_by = expected(ta, tb, {"malloc", "uma"})
        want = want_by[0]
        check(want_by[1] == "address", "%s: the truth's moments share no address" % gen)
        check(any(r["status"] == "appeared" for r in want), "%s: the truth has no new type" % gen)
        # The module swap: a name both vanished (at one address) and
        # appeared (at another), and the counts the truth itself gives.
        swapped = {r["name"] for r in want if r["allocator"] == "malloc" and
                   r["status"] == "vanished"} & {r["name"] for r in want if
                                                  r["allocator"] == "malloc" and
                                                  r["status"] == "appeared"}
        check(swapped, "%s: the truth swaps no type" % gen)
        ma = [r for r in want if r["allocator"] == "malloc"]
        check((status_counts(ma)["appeared"], status_counts(ma)["vanished"]) ==
              truth_counts(ta, tb), "%s: oracle counts %s, truth %s" % (
                  gen, status_counts(ma), truth_counts(ta, tb)))
        doc = compare("%s dump/dump" % gen, ["-N", kernel, "diff", a, b], want_by)
        n += 1
        if doc:
            check(doc["a"] == {"source": a, "kernel": kernel}, "%s: a = %s" % (gen, doc["a"]))
        # Saved JSON in place of a dump: that allocator only.
        ja, jb = os.path.join(tmp, gen + ".a.json"), os.path.join(tmp, gen + ".b.json")
        for path, src, cmd in ((ja, a, "malloc"), (jb, b, "malloc")):
            rc, out, _ = run("--json", "-N", kernel, "-M", src, cmd)
            open(path, "w").write(out)
        wm = expected(ta, tb, {"malloc"})
        for lab, args in (("json/dump", ["-N", kernel, "diff", ja, b]),
                          ("json/json", ["diff", ja, jb])):
            d2 = compare("%s %s" % (gen, lab), args, wm)
            for nm in sorted(swapped):
                got = sorted(r["status"] for r in (d2 or {"rows": []})["rows"]
                             if r["allocator"] == "malloc" and r["name"] == nm)
                check(got == sorted(r["status"] for r in wm[0] if r["allocator"] == "malloc"
                                    and r["name"] == nm) and "appeared" in got and
                      "vanished" in got, "%s %s: swapped %s: %s" % (gen, lab, nm, got))
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
        for st in ("appeared", "vanished"):
            check(sum(l.endswith(st) for l in lines) == sum(r["status"] == st for r in want),
                  "%s text: %s rows" % (gen, st))
        check(lines[-1] == "(matched by kernel address: one boot)",
              "%s text: matching: %s" % (gen, lines[-1:]))
    # Two kernels: FreeBSD 12 against FreeBSD 14 (--kernel-b).
    t12 = json.load(open(os.path.join(FIX, "fbsd12", "truth.json")))
    t14 = json.load(open(os.path.join(FIX, "fbsd14", "truth.t2.json")))
    doc = compare("fbsd12/fbsd14 --kernel-b",
                  ["-N", os.path.join(FIX, "fbsd12", "kernel"), "--kernel-b",
                   os.path.join(FIX, "fbsd14", "kernel"), "diff",
                   os.path.join(FIX, "fbsd12", "vmcore.minidump2"),
                   os.path.join(FIX, "fbsd14", "vmcore.minidump3.t2")],
                  expected(t12, t14, {"malloc", "uma"}, one_kernel=False))
    if doc:
        check(doc.get("matched_by") == "name", "--kernel-b: matched_by %s" % doc.get("matched_by"))
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
    check(expected(tk, tn, {"slab"})[1] == "name", "linux: the oracle pairs kaslr by address")
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
