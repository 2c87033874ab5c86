#!/usr/bin/env python3
"""check_whatis_freebsd.py - `kvmstat whatis` and `slab --objects` on the
FreeBSD fixtures (fbsd14, fbsd14-s2, fbsd12, fbsd11, every dump kvmstat
reads, both moments) against the generator's own model (truth.json "zslab",
"zthread", "symbols"; fixtures/gen/mkcore_zslab.py, mkcore_zthread.py):

  * every item of the modelled zones, one address inside each: cache,
    object, offset, index, state (allocated, free in the slab's bitset,
    free (cpu) with its CPU, free (zone bucket)), malloc_zone where the zone
    is one of malloc(9)'s; the text form of some;
  * struct vm_page addresses (kind page, pfn), pages no slab holds, thread
    stacks (14: pid, tid, comm, thread), kernel symbols;
  * slab --objects ZONE item by item (JSON) and its text;
  * the malloc-384 slab page a minidump leaves out: rows kept with a null
    state, exit status 1, in whatis and slab --objects;
  * hostile copies of the raw images made here: a garbage or unreadable
    slab pointer in a struct vm_page, an absurd slab free count, a looping
    bucket list - each a named error or a noted recovery, never a hang.

A missing fixture or truth fails."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
checks = failures = 0
DUMPS = {
    "fbsd14": [("vmcore.minidump1", "truth.json"), ("vmcore.minidump2", "truth.json"),
               ("vmcore.minidump3", "truth.json"), ("vmcore.elf", "truth.json"),
               ("mem.raw", "truth.json"), ("vmcore.minidump3.t2", "truth.t2.json")],
    "fbsd14-s2": [("vmcore.minidump3", "truth.json"), ("vmcore.elf", "truth.json"),
                  ("mem.raw", "truth.json")],
    "fbsd12": [("vmcore.minidump2", "truth.json"), ("mem.raw", "truth.json"),
               ("vmcore.minidump2.t2", "truth.t2.json")],
    "fbsd11": [("vmcore.minidump2", "truth.json"), ("mem.raw", "truth.json")],
}


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def A(x):
    return int(x, 16) if isinstance(x, str) else x


def kernel(fixture):
    return os.path.join(FIX, "fbsd14" if fixture == "fbsd14-s2" else fixture, "kernel")


def kv(fixture, core, *args, stdin=None):
    p = subprocess.run([KVMSTAT, "-N", kernel(fixture), "-M", core] + list(args),
                       capture_output=True, text=True, timeout=120, input=stdin)
    return p.returncode, p.stdout, p.stderr


def whatis(fixture, core, addrs):
    """whatis --json, the addresses on standard input: (rc, answers, stderr)."""
    rc, out, err = kv(fixture, core, "--json", "whatis", "-",
                      stdin="".join("%x\n" % a for a in addrs))
    try:
        doc = json.loads(out)
    except ValueError:
        return rc, None, err
    return rc, doc.get("addresses"), err


def expect_item(label, z, name, o, a, missing):
    want_state = None if missing else o["state"]
    obj = A(o["address"])
    ok = (a.get("kind") == "slab" and a.get("cache") == name and A(a.get("object")) == obj and
          a.get("index") == o["index"] and a.get("object_size") == z["rsize"] and
          a.get("state") == want_state and a.get("cpu") == o["cpu"] and
          a.get("allocated") == (None if missing else o["state"] == "allocated") and
          a.get("cache_address") and A(a["cache_address"]) == A(z["zone"]) and
          a.get("pfn") == o["pfn"] and a.get("malloc_zone") == z["malloc_zone"])
    return check(ok, "%s: %s item %#x: %r, truth %r (malloc zone %r)" % (
        label, name, obj, a, o, z["malloc_zone"]))


def items(fixture, core, label, t):
    z = t["zslab"]
    mini = "minidump" in core
    addrs, want = [], []
    for name, zt in sorted(z["zones"].items()):
        for o in zt["objects"]:
            off = (o["index"] * 7) % zt["rsize"]
            addrs.append(A(o["address"]) + off)
            want.append((name, zt, o, off))
    rc, got, err = whatis(fixture, core, addrs)
    if not check(got is not None and len(got) == len(addrs),
                 "%s: whatis of %d items: %s" % (label, len(addrs), err.strip())):
        return
    any_missing = False
    for (name, zt, o, off), a in zip(want, got):
        missing = mini and o["missing"]
        any_missing |= missing
        if expect_item(label, zt, name, o, a, missing):
            check(a["offset"] == off, "%s: offset %r, want %d" % (label, a["offset"], off))
    check(rc == (1 if any_missing else 0), "%s: whatis exit %d, want %d" % (
        label, rc, 1 if any_missing else 0))
    check(any_missing == (mini and "missing_pfn" in z),
          "%s: the left-out slab page is %s" % (label, "missing" if any_missing else "there"))
    # The text of one item in each state.
    seen = {}
    for name, zt, o, off in want:
        if not (mini and o["missing"]):
            seen.setdefault(o["state"], (name, zt, o))
    check(set(seen) == {"allocated", "free", "free (cpu)", "free (zone bucket)"},
          "%s: the model lacks a state: %r" % (label, sorted(seen)))
    for st, (name, zt, o) in sorted(seen.items()):
        rc, out, err = kv(fixture, core, "whatis", "%x" % (A(o["address"]) + 1))
        lines = out.splitlines()
        if not check(rc == 0 and len(lines) >= 3, "%s: whatis text %r %s" % (label, out, err)):
            continue
        check(lines[0].endswith(": slab") and (" %s " % name) in lines[1] + " ",
              "%s: text head %r" % (label, lines[:2]))
        tail = ("[ALLOCATED]" if st == "allocated" else "FREE " + st +
                (" cpu %d" % o["cpu"] if o["cpu"] is not None else ""))
        check(lines[2].endswith(tail) and "INDEX %d" % o["index"] in lines[2],
              "%s: text %r, want ...%r" % (label, lines[2], tail))
        mz = [l for l in lines if l.startswith("  MALLOC ZONE ")]
        check(mz == (["  MALLOC ZONE %s" % zt["malloc_zone"]] if zt["malloc_zone"] else []),
              "%s: malloc zone line %r" % (label, mz))


def pages_stacks_symbols(fixture, core, label, t):
    z = t["zslab"]
    arr, psz, first = A(z["vm_page_array"]), z["page_size"], z["first_page"]
    addrs, want = [], []
    for i in (0, 1, 77, z["vm_page_array_size"] - 1):
        addrs.append(arr + i * psz + (i % psz))
        want.append(("page", {"pfn": first + i, "page": arr + i * psz}))
    for name, zt in sorted(z["zones"].items()):
        if zt["inline"] and zt["pages_name_slab"]:      # the slab header itself
            o = next(o for o in zt["objects"] if not o["missing"])
            addrs.append(A(o["slab"]) + 2)
            want.append(("page", {"pfn": o["pfn"], "page": arr + (o["pfn"] - first) * psz}))
    check(len(z.get("plain_page_fields", [])) == len(z["plain_pages"]),
          "%s: truth has no plain_page_fields" % label)
    for p, pf in zip(z["plain_pages"], z.get("plain_page_fields", [])):
        pa = A(p) - 0xfffff80000000000
        addrs.append(A(p))
        want.append(("page", {"pfn": pa // 4096, "page": arr + (pa // 4096 - first) * psz,
                              "mapping": pf["object"],
                              "page_flags": ["0x%x" % pf["flags"]] if pf["flags"] else []}))
    for th in t.get("zthread", {}).get("threads", []):
        for a in (A(th["kstack"]) + 8, A(th["kstack_end"]) - 1):
            addrs.append(a)
            want.append(("stack", {"pid": th["pid"], "tid": th["tid"], "comm": th["comm"],
                                   "thread": A(th["thread"])}))
    for name in ("version", "mp_maxid", "kmemstatistics"):
        s = t["symbols"].get(name)
        if check(s is not None, "%s: truth has no symbol %s" % (label, name)):
            addrs.append(A(s["addr"]) + 3)
            want.append(("symbol", {"symbol": "%s+0x3" % name}))
    check(fixture.startswith("fbsd14") == bool(t.get("zthread", {}).get("threads")),
          "%s: threads in the model: %r" % (label, bool(t.get("zthread"))))
    rc, got, err = whatis(fixture, core, addrs)
    if not check(rc == 0 and got is not None and len(got) == len(addrs),
                 "%s: whatis pages/stacks/symbols: rc %d %s" % (label, rc, err.strip())):
        return
    for a, (kind, fields), g in zip(addrs, want, got):
        ok = g["kind"] == kind
        for k, v in fields.items():
            gv = g.get(k)
            ok = ok and (A(gv) if k in ("page", "thread") and gv is not None else gv) == v
        check(ok, "%s: whatis %#x: %r, want %s %r" % (label, a, g, kind, fields))


def objects(fixture, core, label, t):
    z = t["zslab"]
    mini = "minidump" in core
    for name, zt in sorted(z["zones"].items()):
        rc, out, err = kv(fixture, core, "--json", "slab", "--objects", name)
        missing = mini and any(o["missing"] for o in zt["objects"])
        check(rc == (1 if missing else 0), "%s: slab --objects %s exit %d: %s" % (
            label, name, rc, err.strip()))
        try:
            rows = json.loads(out)["objects"]
        except (ValueError, KeyError):
            check(False, "%s: slab --objects %s: no JSON" % (label, name))
            continue
        got = {A(r["address"]): r for r in rows}
        check(len(got) == len(rows) == len(zt["objects"]),
              "%s: %s: %d rows (%d distinct), truth %d" % (label, name, len(rows), len(got),
                                                          len(zt["objects"])))
        bad = 0
        for o in zt["objects"]:
            r = got.get(A(o["address"]))
            miss = mini and o["missing"]
            st = None if miss else o["state"]
            if r is None or A(r["slab"]) != A(o["slab"]) or r["index"] != o["index"] or \
                    r["state"] != st or r["cpu"] != o["cpu"] or \
                    r["allocated"] != (None if miss else o["state"] == "allocated"):
                bad += 1
                if bad <= 3:
                    check(False, "%s: %s item %s: %r, truth %r" % (label, name, o["address"], r, o))
        check(bad == 0, "%s: %s: %d items differ" % (label, name, bad))
        rc, out, err = kv(fixture, core, "slab", "--objects", name)
        lines = out.splitlines()
        nslab = len({o["slab"] for o in zt["objects"]})
        check(lines[:1] == ["CACHE " + name] and
              sum(1 for l in lines if l.startswith("  SLAB ")) == nslab and
              sum(1 for l in lines if l.startswith("  [")) ==
              sum(1 for o in zt["objects"] if o["state"] == "allocated" and
                  not (mini and o["missing"])),
              "%s: slab --objects %s text: %d lines" % (label, name, len(lines)))


def hostile(fixture, t, tmp):
    """Copies of mem.raw (file offset = physical address) with one thing broken."""
    z = t["zslab"]
    raw = os.path.join(FIX, fixture, "mem.raw")
    if not check(os.path.exists(raw), "%s: no mem.raw" % fixture):
        return
    h = z["hostile"]

    def patched(tag, pa, value, fmt):
        import struct
        p = os.path.join(tmp, "%s-%s.raw" % (fixture, tag))
        shutil.copyfile(raw, p)
        with open(p, "r+b") as f:
            f.seek(pa)
            f.write(struct.pack(fmt, value))
        return p

    item = A(h["slab_ptr_item"])
    label = fixture + " hostile"
    # An unreadable slab pointer: recovered from the keg's slab lists.
    core = patched("unreadable-slab", h["slab_ptr_pa"], 0xdead000000000000, "<Q")
    rc, good, err = whatis(fixture, raw, [item])
    rc2, got, err2 = whatis(fixture, core, [item])
    if check(rc == 0 and rc2 == 0 and good and got, "%s: unreadable slab pointer: %s %s" % (
            label, err.strip(), err2.strip())):
        g = dict(got[0])
        note = g.pop("note", "")
        check(g == good[0] and "unreadable" in note and "slab lists" in note,
              "%s: recovered answer %r, note %r; want %r" % (label, g, note, good[0]))
    # A readable slab pointer that is no slab (the vm_page array itself): 13+
    # (the page names the zone too) a named error; 12/11 (the keg is the
    # slab's us_keg, here none) recovered from the keg lists.
    core = patched("garbage-slab", h["slab_ptr_pa"], A(z["vm_page_array"]), "<Q")
    rc, out, err = kv(fixture, core, "--json", "whatis", "%x" % item)
    if fixture.startswith("fbsd14"):
        check(rc == 1 and "slab" in err and "%x" % A(z["vm_page_array"]) in err and
              json.loads(out).get("error"), "%s: garbage slab pointer: rc %d %r" % (
                  label, rc, err))
    else:
        g = dict(json.loads(out)["addresses"][0]) if rc == 0 else {}
        note = g.pop("note", "")
        check(rc == 0 and good and g == good[0] and "of no keg" in note,
              "%s: garbage slab pointer: rc %d %r, note %r" % (label, rc, err, note))
    # An absurd free count.
    zt = z["zones"]["malloc-384"]
    core = patched("freecount", zt["slab_free_count_pa"], 5000, "<H")
    rc, out, err = kv(fixture, core, "whatis", "%x" % A(zt["slab_item"]))
    check(rc == 1 and "free count 5000" in err, "%s: absurd free count: rc %d %r" % (
        label, rc, err))
    rc, out, err = kv(fixture, core, "slab", "--objects", "malloc-384")
    check(rc == 1 and "free count 5000" in err, "%s: slab --objects, absurd free count: "
          "rc %d %r" % (label, rc, err))
    # A zone's bucket list that loops back on itself.
    name, zt = next((n, v) for n, v in sorted(z["zones"].items()) if v["zone_bucket"])
    core = patched("bucketloop", zt["zone_bucket_link_pa"], A(zt["zone_bucket"]), "<Q")
    rc, out, err = kv(fixture, core, "whatis", "%x" % A(zt["allocated_item"]))
    check(rc == 1 and "loops" in err and name in err, "%s: looping bucket list: rc %d %r" % (
        label, rc, err))
    rc, out, err = kv(fixture, core, "slab", "--objects", name)
    check(rc == 1 and "loops" in err, "%s: slab --objects, looping bucket list: rc %d %r" % (
        label, rc, err))


def main():
    if not check(os.path.exists(KVMSTAT), "no kvmstat at %s" % KVMSTAT):
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        for fixture, dumps in DUMPS.items():
            for core, truth in dumps:
                tp = os.path.join(FIX, fixture, truth)
                cp = os.path.join(FIX, fixture, core)
                if not check(os.path.exists(tp) and os.path.exists(cp),
                             "%s: no %s or %s" % (fixture, core, truth)):
                    continue
                t = json.load(open(tp))
                if not check("zslab" in t and len(t["zslab"].get("zones", {})) == 3,
                             "%s %s: truth has no zslab model" % (fixture, truth)):
                    continue
                label = "%s %s" % (fixture, core)
                items(fixture, cp, label, t)
                pages_stacks_symbols(fixture, cp, label, t)
                objects(fixture, cp, label, t)
            t = json.load(open(os.path.join(FIX, fixture, "truth.json")))
            if "zslab" in t:
                hostile(fixture, t, tmp)
    print("%d checks, %d failed" % (checks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
