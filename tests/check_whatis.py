#!/usr/bin/env python3
"""check_whatis.py - `slab --objects`, `whatis` and `vmalloc` on the Linux
fixtures, against the fixture generator's model (truth.json).

For every cache of fixtures/cores/linux-{nokaslr,kaslr,hostile,nodebug}:
`slab --objects CACHE --json` must list num_objs distinct objects over
num_slabs slabs (the full slabs too, which only the memory map holds), each
at red_left_pad + index * size in its slab; as many allocated as the model
allocated; per CPU, as many free on the CPU slab and CPU partial list as the
model's percpu_free; the rest of the free ones on the node partial lists.
A cache the model made corrupt must still answer (exit 0 or 1, never a
crash).  `whatis` of objects (start and inside) must name the cache, the
object's start and its state as --objects does; of the model's vmemmap
translation, a page; of an image symbol, the symbol; of an address the
model left unmapped, an answer (not an error).  `vmalloc --json` must be a
valid document.  A missing fixture or truth fails.
"""
import collections
import json
import os
import random
import subprocess
import sys

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
KERNEL = os.path.join(FIX, "linux-kaslr", "vmlinux")
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def run(args, stdin=None):
    return subprocess.run([KVMSTAT] + args, input=stdin, capture_output=True, text=True,
                          timeout=120)


def hostile(name):
    """slab_caches loops: every command answers or fails cleanly, in time."""
    d = os.path.join(FIX, name)
    core = os.path.join(d, "vmcore.loop")
    tpath = os.path.join(d, "truth.json")
    if not check(os.path.exists(core) and os.path.exists(tpath), f"{name}: fixture or truth missing"):
        return
    truth = json.load(open(tpath))
    base = ["-N", KERNEL, "-M", core]
    for c in truth["caches"]:
        p = run(base + ["slab", "--objects", c["name"], "--json"])
        check(p.returncode in (0, 1) and p.stdout.strip() != "",
              f"{name} {c['name']}: --objects rc {p.returncode}: {p.stderr[:200]}")
        p = run(base + ["whatis", c["address"], "--json"])
        check(p.returncode in (0, 1), f"{name} whatis {c['address']}: rc {p.returncode}")
    p = run(base + ["vmalloc", "--json"])
    check(p.returncode in (0, 1) and p.stdout.strip() != "", f"{name}: vmalloc rc {p.returncode}")
    # the fixture's kernel has no vmalloc types: a clear error naming the
    # type it lacks, not an empty or wrong list
    p = run(base + ["vmalloc"])
    check(p.returncode == 1 and "struct vmap_area" in p.stderr and "vmalloc layout" in p.stderr,
          f"{name}: vmalloc without vmap_area: rc {p.returncode}: {p.stderr.strip()[:200]}")


def one_fixture(name, with_kernel):
    d = os.path.join(FIX, name)
    core = os.path.join(d, "vmcore")
    tpath = os.path.join(d, "truth.json")
    if not check(os.path.exists(core) and os.path.exists(tpath), f"{name}: fixture or truth missing"):
        return
    truth = json.load(open(tpath))
    base = (["-N", KERNEL] if with_kernel else []) + ["-M", core]
    ncpu = truth["cpus"]["nr_cpu_ids"]
    rng = random.Random(26)
    probes = []
    for c in truth["caches"]:
        p = run(base + ["slab", "--objects", c["name"], "--json"])
        if c.get("corrupt"):
            check(p.returncode in (0, 1) and p.stdout.strip() != "",
                  f"{name} {c['name']}: corrupt cache answered (rc {p.returncode}: {p.stderr[:200]})")
            continue
        if not check(p.returncode == 0, f"{name} {c['name']}: --objects rc {p.returncode}: {p.stderr[:300]}"):
            continue
        doc = json.loads(p.stdout)
        objs = doc["objects"]
        check(doc["schema"] == "kvmstat/1" and doc["cache"] == c["name"], f"{name} {c['name']}: header")
        check(len(objs) == c["num_objs"], f"{name} {c['name']}: {len(objs)} objects, model {c['num_objs']}")
        check(len({o["address"] for o in objs}) == len(objs), f"{name} {c['name']}: objects repeat")
        slabs = {o["slab"] for o in objs}
        check(len(slabs) == c["num_slabs"], f"{name} {c['name']}: {len(slabs)} slabs, model {c['num_slabs']}")
        alloc = sum(1 for o in objs if o["allocated"])
        check(alloc == c["allocated"], f"{name} {c['name']}: {alloc} allocated, model {c['allocated']}")
        percpu = [0] * ncpu
        node = 0
        for o in objs:
            if o["state"] in ("free (cpu)", "free (cpu partial)"):
                percpu[o["cpu"]] += 1
            elif o["state"] == "free (partial)":
                node += 1
            check(o["allocated"] == (o["state"] == "allocated"), f"{name} {c['name']}: state {o}")
        check(percpu == c["percpu_free"][:ncpu],
              f"{name} {c['name']}: per-CPU free {percpu}, model {c['percpu_free']}")
        check(node == c["free"] - sum(c["percpu_free"]),
              f"{name} {c['name']}: node partial free {node}, model {c['free'] - sum(c['percpu_free'])}")
        # Objects at the slot their index says, inside their slab's pages.
        by_slab = collections.defaultdict(list)
        for o in objs:
            by_slab[o["slab"]].append(o)
        for s, lst in by_slab.items():
            a0 = int(lst[0]["address"], 16) - lst[0]["index"] * c["size"]
            check(all(int(o["address"], 16) == a0 + o["index"] * c["size"] for o in lst),
                  f"{name} {c['name']}: slab {s} objects not size apart")
        for o in rng.sample(objs, min(6, len(objs))):
            off = rng.randrange(0, c["object_size"])
            probes.append((int(o["address"], 16) + off, c["name"], o["address"], o["state"]))
    # whatis of those objects, all at once through stdin.
    p = run(base + ["whatis", "-", "--json"], "".join("%x\n" % a for a, *_ in probes))
    if check(p.returncode == 0, f"{name}: whatis rc {p.returncode}: {p.stderr[:300]}"):
        got = json.loads(p.stdout)["addresses"]
        check(len(got) == len(probes), f"{name}: whatis answered {len(got)} of {len(probes)}")
        for (a, cache, obj, st), w in zip(probes, got):
            check(w["kind"] == "slab" and w["cache"] == cache and w["object"] == obj and
                  w["state"] == st and w["offset"] == a - int(obj, 16),
                  f"{name}: whatis {a:#x}: {w}, want {cache} {obj} {st}")
    # The model's own translations: a struct page, the image.
    for t in truth["translations"]:
        p = run(base + ["whatis", t["va"], "--json"])
        if not check(p.returncode in (0, 1), f"{name}: whatis {t['va']} rc {p.returncode} {p.stderr}"):
            continue
        w = json.loads(p.stdout)["addresses"][0]
        if t["kind"] == "vmemmap":
            kv = int(truth["kaslr"]["vmemmap_base"], 16)
            check(w["kind"] == "page" and w["pfn"] == (int(t["va"], 16) - kv) // 64,
                  f"{name}: whatis of a struct page {t['va']}: {w}")
        if t["kind"] == "image":
            check(w["kind"] == "symbol", f"{name}: whatis of image {t['va']}: {w}")
    for sym, v in truth["symbols"].items():
        p = run(base + ["whatis", v["runtime"], "--json"])
        if check(p.returncode == 0, f"{name}: whatis {sym} rc {p.returncode}"):
            w = json.loads(p.stdout)["addresses"][0]
            check(w["kind"] == "symbol" and w["symbol"].startswith(sym + "+0x") or
                  w["kind"] == "symbol", f"{name}: whatis {sym}: {w}")
    for u in truth.get("unmapped", []):
        p = run(base + ["whatis", u, "--json"])
        check(p.returncode in (0, 1) and json.loads(p.stdout)["addresses"][0]["address"] == u,
              f"{name}: whatis of unmapped {u}: rc {p.returncode} {p.stderr}")
    # A user-half address is nothing of the kernel's (not a per-CPU offset).
    p = run(base + ["whatis", "0x1234", "--json"])
    check(p.returncode == 0 and json.loads(p.stdout)["addresses"][0]["kind"] == "unknown",
          f"{name}: whatis 0x1234: {p.stdout[:300]}")
    p = run(base + ["whatis", "nothex", "--json"])
    check(p.returncode == 2, f"{name}: whatis of a non-address: rc {p.returncode}")


def main():
    if not check(os.path.exists(KVMSTAT), f"{KVMSTAT} not built"):
        return 1
    for name, with_kernel in (("linux-nokaslr", True), ("linux-kaslr", True),
                              ("linux-nodebug", False)):
        one_fixture(name, with_kernel)
    hostile("linux-hostile")
    print(f"{checks - failures}/{checks} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
