#!/usr/bin/env python3
"""check_vmmap_freebsd.py - `kvmstat whatis` in FreeBSD's kernel_map, against
the fixture generator's model (truth.json "vmmap", mkcore_zvmap.py).

On fbsd14 and fbsd14-s2 (13+'s threaded entry tree) and fbsd12 (12's tree
with NULL children): for the first, a middle and the last byte of every
entry that is no submap, including the entries of the submap exec_map,
`whatis --json` must name the map, the entry, its range, object, offset,
flags and protections; for the first and last byte of every gap, `unknown`
with the map, the gap and the entries around it (null at a map's edge);
just before and after kernel_map, `unknown` with no map.
The text form must say the same.  The model's trees must be unbalanced
(deeper than a balanced tree of as many entries), so the walk is seen to
descend chains.  Hostile copies of a fixture's mem.raw, made here: a tree
whose child pointer leads back to the root or to the entry itself, and an
entry that ends before it starts; each must fail with its named error and
a non-zero exit status, in time.  A root entry the dump cannot translate
gives an unknown answer whose note names it, and exit status 1.  Every --json document is valid against
docs/kvmstat-1.schema.json (python3-jsonschema).  A missing fixture, truth
or validator fails.
"""
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SRC = os.environ.get("KVS_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
failures = 0
checks = 0
validator = None


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def h(x):
    """truth.json and kvmstat's JSON write large addresses as "0x..." strings."""
    if x is None or isinstance(x, int):
        return x
    return int(x, 16)


def run(args, stdin=None, timeout=60):
    try:
        return subprocess.run([KVMSTAT] + args, input=stdin, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def want_json(p, a):
    """The answer's fields the probe fixes, from the model."""
    if p["kind"] == "vmalloc":
        return {"address": h(p["addr"]), "kind": "vmalloc", "map": p["map"],
                "map_entry": h(p["entry"]), "area_start": h(p["start"]),
                "area_end": h(p["end"]), "map_object": h(p["object"]) or None,
                "map_offset": h(p["offset"]), "map_eflags": p["eflags"],
                "map_protection": p["protection"], "map_max_protection": p["max_protection"]}
    if p["kind"] == "outside":
        return {"address": h(p["addr"]), "kind": "unknown", "map": None}
    return {"address": h(p["addr"]), "kind": "unknown", "map": p["map"],
            "gap_start": h(p["gap_start"]), "gap_end": h(p["gap_end"]),
            "prev_entry": h(p["prev_entry"]) or None, "next_entry": h(p["next_entry"]) or None}


def got_json(a, keys):
    return {k: (h(a.get(k)) if isinstance(a.get(k), str) and k not in ("kind", "map")
                else a.get(k)) for k in keys}


def text_lines(p):
    """The lines `whatis` must print for the probe."""
    a = "%016x" % h(p["addr"])
    if p["kind"] == "vmalloc":
        def prot(v):
            return "".join(c if v >> i & 1 else "-" for i, c in enumerate("rwx"))
        return [f"{a}: vmalloc", "  AREA %016x-%016x  -" % (h(p["start"]), h(p["end"])),
                "  MAP %s ENTRY %016x OBJECT %016x OFFSET 0x%x EFLAGS 0x%x PROT %s/%s" % (
                    p["map"], h(p["entry"]), h(p["object"]), h(p["offset"]), p["eflags"],
                    prot(p["protection"]), prot(p["max_protection"]))]
    if p["kind"] == "outside":
        return [f"{a}: unknown"]
    pe, ne = h(p["prev_entry"]), h(p["next_entry"])
    return [f"{a}: unknown", "  GAP %016x-%016x in %s  PREV %s  NEXT %s" % (
        h(p["gap_start"]), h(p["gap_end"]), p["map"], "%016x" % pe if pe else "-",
        "%016x" % ne if ne else "-")]


def fixture(name, dumps):
    d = os.path.join(FIX, name)
    tpath = os.path.join(d, "truth.json")
    kernel = os.path.join(FIX, name.split("-")[0], "kernel")      # fbsd14-s2: fbsd14's
    if not check(os.path.exists(tpath) and os.path.exists(kernel), f"{name}: truth or kernel missing"):
        return None
    truth = json.load(open(tpath))
    vm = truth.get("vmmap")
    if not check(vm and vm.get("probes"), f"{name}: truth.json has no vmmap model"):
        return None
    probes = vm["probes"]
    kinds = {p["kind"] for p in probes}
    maps = {p["map"] for p in probes if p["kind"] != "outside"}
    check(kinds == {"vmalloc", "unknown", "outside"} and maps == {"kernel_map", "exec_map"},
          f"{name}: the model's probes cover {sorted(kinds)} in {sorted(maps)}")
    for mp in vm["maps"]:
        n = len(mp["entries"])
        check(mp["depth"] > math.ceil(math.log2(n + 1)),
              f"{name} {mp['name']}: the model's tree of {n} entries is {mp['depth']} deep: "
              f"not unbalanced")
        check(mp["threaded"] == (name != "fbsd12"), f"{name}: {mp['name']} threaded "
              f"{mp['threaded']}")
    stdin = "".join("0x%x\n" % h(p["addr"]) for p in probes)
    for dump in dumps:
        core = os.path.join(d, dump)
        if not check(os.path.exists(core), f"{name}: {dump} missing"):
            continue
        base = ["-N", kernel, "-M", core]
        r = run(base + ["whatis", "--json", "-"], stdin)
        if not check(r is not None and r.returncode == 0, f"{name} {dump}: whatis --json rc "
                     f"{r and r.returncode}: {r and r.stderr[:300]}"):
            continue
        doc = json.loads(r.stdout)
        errs = [e.message for e in validator.iter_errors(doc)]
        check(not errs, f"{name} {dump}: whatis --json against the schema: {errs[:3]}")
        got = doc["addresses"]
        if not check(len(got) == len(probes), f"{name} {dump}: {len(got)} answers for "
                     f"{len(probes)} addresses"):
            continue
        for p, a in zip(probes, got):
            w = want_json(p, a)
            g = got_json(a, w.keys())
            check(g == w, f"{name} {dump} whatis 0x{h(p['addr']):x}: {g} != {w}")
        r = run(base + ["whatis", "-"], stdin)
        if not check(r is not None and r.returncode == 0, f"{name} {dump}: whatis rc "
                     f"{r and r.returncode}"):
            continue
        blocks = re.split(r"\n(?=[0-9a-f]{16}: )", r.stdout.strip())
        if not check(len(blocks) == len(probes), f"{name} {dump}: {len(blocks)} text answers"):
            continue
        for p, b in zip(probes, blocks):
            lines = b.split("\n")
            want = text_lines(p)
            check(lines[:len(want)] == want, f"{name} {dump} text 0x{h(p['addr']):x}: "
                  f"{lines} != {want}")
            if p["kind"] == "outside":
                check(not any(l.startswith(("  GAP", "  MAP")) for l in lines),
                      f"{name} {dump} text 0x{h(p['addr']):x}: a map's answer outside it: {lines}")
            if p["kind"] == "unknown":
                check(len(lines) == 3 and "gap between" in lines[2],
                      f"{name} {dump} text 0x{h(p['addr']):x}: no note naming the gap: {lines}")
    # a kernel symbol still answers as the symbol, before the map
    sym = h(truth["symbols"]["version"]["addr"])
    r = run(["-N", kernel, "-M", os.path.join(d, dumps[0]), "whatis", "--json", "%x" % sym])
    check(r is not None and r.returncode == 0 and
          json.loads(r.stdout)["addresses"][0]["kind"] == "symbol", f"{name}: version's address")
    return truth


def path_to(mp, addr):
    """The entries the descent for addr visits, each with the side it
    leaves by (None at the entry holding addr), from the model's pointers."""
    by = {h(e["addr"]): e for e in mp["entries"]}
    out = []
    cur = by[h(mp["root"])]
    while True:
        if addr < h(cur["start"]):
            side = "left"
        elif addr >= h(cur["end"]):
            side = "right"
        else:
            out.append((cur, None))
            return out
        out.append((cur, side))
        cur = by[h(cur[side])]


def hostile(name, truth, tmp):
    d = os.path.join(FIX, name)
    raw = os.path.join(d, "mem.raw")
    if not check(os.path.exists(raw), f"{name}: mem.raw missing"):
        return
    kmap = [m for m in truth["vmmap"]["maps"] if m["name"] == "kernel_map"][0]
    ents = kmap["entries"]
    leaves = [e for e in ents if not e["submap"]]
    # the deepest entry (the longest path): loops can start low in the tree
    deep = max(leaves, key=lambda e: len(path_to(kmap, h(e["start"]))))
    addr = h(deep["start"])
    path = path_to(kmap, addr)
    check(len(path) >= 3, f"{name}: the deepest entry is only {len(path)} levels down")
    root = path[0][0]
    cases = []
    # the root's child on the way down points back at the root
    cases.append(("root-self", [(root["fields_pa"][path[0][1]], h(root["addr"]))],
                  "loops or is out of order"))
    # an entry two levels down points back at the root
    e2, side2 = path[len(path) - 2]
    cases.append(("back-to-root", [(e2["fields_pa"][side2], h(root["addr"]))],
                  "loops or is out of order"))
    # the entry holding addr ends before it starts
    cases.append(("end-before-start", [(deep["fields_pa"]["end"], h(deep["start"]) - 0x1000)],
                  "before it starts"))
    for cname, patches, words in cases:
        copy = os.path.join(tmp, f"{name}-{cname}.raw")
        shutil.copyfile(raw, copy)
        with open(copy, "r+b") as f:
            for pa, v in patches:
                f.seek(pa)
                f.write(struct.pack("<Q", v & (1 << 64) - 1))
        for js in ([], ["--json"]):
            r = run(["-N", os.path.join(d, "kernel"), "-M", copy, "whatis"] + js + ["%x" % addr],
                    timeout=20)
            if not check(r is not None, f"{name} {cname}: whatis hangs"):
                continue
            check(r.returncode != 0 and words in r.stderr and "kernel_map" in r.stderr,
                  f"{name} {cname}{' --json' if js else ''}: rc {r.returncode}, stderr "
                  f"{r.stderr.strip()[:300]!r}, wanted {words!r}")
    # the root entry at an address the dump cannot translate: the answer
    # is kept, unknown, its note naming what could not be read; exit 1
    copy = os.path.join(tmp, f"{name}-unreadable.raw")
    shutil.copyfile(raw, copy)
    with open(copy, "r+b") as f:
        f.seek(h(kmap["root_pa"]))
        f.write(struct.pack("<Q", h(truth["unmapped"][0])))
    r = run(["-N", os.path.join(d, "kernel"), "-M", copy, "whatis", "--json", "%x" % addr],
            timeout=20)
    if check(r is not None and r.returncode == 1, f"{name} unreadable root: rc "
             f"{r and r.returncode}: {r and r.stderr[:200]}"):
        a = json.loads(r.stdout)["addresses"][0]
        check(a["kind"] == "unknown" and "kernel_map" in a.get("note", "") and
              "%x" % h(truth["unmapped"][0]) in a.get("note", "") and "incomplete" in r.stderr,
              f"{name} unreadable root: {a} {r.stderr[:200]!r}")
    # an address in no map is untouched by the corruption
    r = run(["-N", os.path.join(d, "kernel"), "-M", os.path.join(tmp, f"{name}-root-self.raw"),
             "whatis", "--json", "%x" % h(truth["symbols"]["version"]["addr"])], timeout=20)
    check(r is not None and r.returncode == 0, f"{name}: a symbol's whatis in the looping copy")


def main():
    if not check(os.access(KVMSTAT, os.X_OK), f"{KVMSTAT} not built"):
        return 1
    global validator
    try:
        import jsonschema
    except ImportError:
        check(False, "python3-jsonschema (the schema's validator) is not installed")
        return 1
    schema = json.load(open(os.path.join(SRC, "docs", "kvmstat-1.schema.json")))
    sub = {k: v for k, v in schema.items() if k != "anyOf"}
    sub["$ref"] = "#/$defs/whatis"
    validator = jsonschema.Draft202012Validator(sub)
    with tempfile.TemporaryDirectory() as tmp:
        for name, dumps in (("fbsd14", ["vmcore.minidump2", "mem.raw"]),
                            ("fbsd14-s2", ["vmcore.minidump3", "vmcore.elf"]),
                            ("fbsd12", ["vmcore.minidump2", "mem.raw"])):
            truth = fixture(name, dumps)
            if truth is not None and name != "fbsd14-s2":
                hostile(name, truth, tmp)
    print(f"check_vmmap_freebsd: {checks} checks, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
