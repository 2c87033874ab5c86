#!/usr/bin/env python3
"""report.py PIECES_DIR results.json RESULTS.md - bench/run's pieces
(meta.json, open.jsonl, malloc.jsonl, uma.jsonl, types.jsonl, slab.json)
into one JSON document and a Markdown report with ratios."""
import json
import os
import sys


def jsonl(path):
    rows = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def opt(r, k, fmt):
    """A floor the bench could not measure (-1, or an older run without it)."""
    v = r.get(k, -1)
    return fmt % v if v is not None and v >= 0 else "n/a"


def main():
    d, out_json, out_md = sys.argv[1:4]
    meta = json.load(open(os.path.join(d, "meta.json")))
    opens = jsonl(os.path.join(d, "open.jsonl"))
    malloc = jsonl(os.path.join(d, "malloc.jsonl"))
    uma = jsonl(os.path.join(d, "uma.jsonl"))
    types = jsonl(os.path.join(d, "types.jsonl"))
    slab = json.load(open(os.path.join(d, "slab.json")))
    cj = os.path.join(d, "census.json")
    census = json.load(open(cj)) if os.path.exists(cj) else {"available": False,
                                                              "why": "not measured"}
    bj = os.path.join(d, "busy.json")
    busy = json.load(open(bj)) if os.path.exists(bj) else {"available": False,
                                                            "why": "not measured"}
    pyw = os.path.join(d, "pywalk.json")
    pywalk = json.load(open(pyw)) if os.path.exists(pyw) else {"available": False,
                                                               "why": "not measured"}

    # Open cost: ratio against the smallest dump of the same format.
    first = {}
    for r in opens:
        first.setdefault(r["format"], r)
        r["vs_smallest"] = r["open_us"] / first[r["format"]]["open_us"]
        r["size_ratio"] = r["size_bytes"] / first[r["format"]]["size_bytes"]
    # Type lookups: ratio against drgn's row of the same target and mode
    # (cached rows against drgn warm, drgn having no cache).
    drgn = {}
    for r in types:
        if r["tool"] == "drgn" and r.get("available"):
            drgn[(r["target"], r["mode"])] = r
    for r in types:
        if not r.get("available"):
            continue
        ref = drgn.get((r["target"], r["mode"])) or drgn.get((r["target"], "warm"))
        if ref:
            r["vs_drgn_time"] = r["median_s"] / ref["median_s"]
            r["vs_drgn_rss"] = r["peak_rss_kib"] / ref["peak_rss_kib"]

    doc = {"meta": meta, "open": opens, "malloc_refresh": malloc, "uma_refresh": uma,
           "type_lookup": types, "linux_slab": slab, "python_walks": pywalk,
           "linux_census": census, "linux_busy": busy}
    with open(out_json, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    L = []
    w = L.append
    w("# kvmstat benchmark results")
    w("")
    w("Written by `bench/run%s` (bench/report.py); every row of a table was measured"
      % (" --quick" if meta["quick"] else ""))
    w("side by side in the same run.  Machine: %s, nproc %s; load average %s at the start,"
      % (meta.get("cpu") or "?", meta["nproc"], " ".join("%.2f" % x for x in meta["loadavg_start"])))
    w("%s at the end (the CPUs are shared: absolute times move, the ratios much less)."
      % " ".join("%.2f" % x for x in meta.get("loadavg_end", [])))
    w("Commit %s, %s." % (meta["git"], meta["date"]))
    w("")
    w("## Issue 11 goals, as this run measured them")
    w("")
    for title, rows, key in (("malloc", malloc, "types"), ("UMA", uma, "zones")):
        if not rows:
            w("- %s refresh: not measured" % title)
            continue
        worst = min(rows, key=lambda r: r["speedup_vs_naive"])
        far = max(rows, key=lambda r: r["ours_over_memcpy"])
        w("- %s refresh never slower than naive: %s (lowest naive/ours %.1f× at %d %s × %d CPUs);"
          " farthest from the memcpy floor %.1f× (%d %s × %d CPUs, goal ≤ 2×); steady-state"
          " mallocs %d" % (title, "yes" if worst["speedup_vs_naive"] >= 1 else "NO",
                           worst["speedup_vs_naive"], worst[key], key, worst["cpus"],
                           far["ours_over_memcpy"], far[key], key, far["cpus"],
                           max(r["steady_mallocs"] for r in rows)))
    for title, rows, key in (("malloc", malloc, "types"), ("UMA", uma, "zones")):
        few = [r for r in rows if r["cpus"] <= 8 and r.get("list_ms", -1) >= 0]
        if few:
            w("- %s at 8 CPUs: this library's list bookkeeping alone (no kernel read) takes"
              " %s of the memcpy floor, so 2× leaves the rest for reading, summing and"
              " copying the per-CPU records; copying the same bytes from where they lie"
              " (gather) alone takes %s of it"
              % (title, ", ".join("%.2f× at %d" % (r["list_ms"] / r["memcpy_ms"], r[key])
                                  for r in few),
                 ", ".join("%.2f× at %d" % (r["gather_ms"] / r["memcpy_ms"], r[key])
                           for r in few if r.get("gather_ms", -1) >= 0)))
    for r in malloc:
        if r["types"] == 2000 and r["cpus"] == 64:
            w("- malloc refresh at 2,000 types × 64 CPUs: %.1f× naive (goal ≥ 10×)"
              % r["speedup_vs_naive"])
    if opens:
        w("- open time from the smallest to the largest dump: at most %.2f× for %.0f× the size"
          % (max(r["vs_smallest"] for r in opens), max(r["size_ratio"] for r in opens)))
    w("")
    w("## Open cost against dump size")
    w("")
    w("`kvs_open` + reading `version` + `kvs_close`, best of 20, each size in a fresh process;")
    w("sparse dumps built from the FreeBSD 14 fixture (bench_open).")
    w("")
    w("| format | dump size | open µs | × size | × time | peak RSS KiB |")
    w("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in opens:
        w("| %s | %s | %.0f | %.0f× | %.2f× | %d |" % (
            r["format"], human(r["size_bytes"]), r["open_us"], r["size_ratio"], r["vs_smallest"],
            r["peak_rss_kib"]))
    if not opens:
        w("| not available | | | | | |")
    for title, rows, key, what in (
            ("malloc(9) refresh", malloc, "types", "types"),
            ("UMA refresh", uma, "zones", "zones")):
        w("")
        w("## %s" % title)
        w("")
        w("Steady-state refresh against the naive libmemstat-style walk")
        w("(bench_refresh.c, bench_uma.c: names byte by byte, linear search, a read per")
        w("record and CPU), best of N runs each (N for about 0.25 s of both per row, at")
        w("least 5 or 15, at most 2,000: bench_reps), timed in alternating rounds of")
        w("runs of one and then of the other, each round after untimed runs until")
        w("the times settle (bench_side_by_side: this machine's hypervisor makes memory")
        w("left alone a moment slow to touch again for a few runs, whoever touches it),")
        w("and")
        w("against a `memcpy` of the bytes the refresh read (or summed where they lie:")
        w("kvs_peek), timed the same way, one copy after another.  `allocs`: the list's own")
        w("allocation count during one steady refresh; `mallocs`: every malloc/calloc/realloc")
        w("in the process during it (both must be 0).  Two more floors for the same")
        w("refresh: `reads`, its reads replayed alone with kvs_read (same addresses and order:")
        w("translation and copy, no bookkeeping), and `gather`, the same ranges copied")
        w("straight from the image's mapping at their physical addresses.  What ours")
        w("spends above `reads` is the walk's own work (summing, per-CPU copies, the list).")
        w("`list`: the list's own bookkeeping alone, as the walker drives it (begin, every")
        w("entry upserted in the kernel's order, its counters set, commit), no kernel")
        w("read (bench_list_floor); `g+l` = gather + list, against memcpy: copying the")
        w("bytes from where they lie and keeping this library's list, before any walking")
        w("or summing.  A reference, not a floor: the walkers sum where the bytes lie")
        w("(kvs_peek) instead of copying them, and beat it at many CPUs.  At few CPUs an")
        w("entry stands for little kernel data, so the list's share is large.")
        w("")
        w("| %s | CPUs | ours ms | naive ms | memcpy ms | gather ms | reads ms | list ms | MiB read | reads | naive / ours | ours / memcpy | ours / gather | ours / reads | g+l / memcpy | ours / g+l | allocs | mallocs |" % what)
        w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            w("| %d | %d | %.3f | %.3f | %.3f | %s | %s | %s | %.2f | %d | %.1f× | %.2f× | %s | %s | %s | %s | %d | %d |" % (
                r[key], r["cpus"], r["ours_ms"], r["naive_ms"], r["memcpy_ms"],
                opt(r, "gather_ms", "%.3f"), opt(r, "reads_ms", "%.3f"),
                opt(r, "list_ms", "%.3f"),
                r["bytes_read"] / 1048576, r["reads"], r["speedup_vs_naive"],
                r["ours_over_memcpy"], opt(r, "ours_over_gather", "%.2f×"),
                opt(r, "ours_over_reads", "%.2f×"), opt(r, "gather_list_over_memcpy", "%.2f×"),
                opt(r, "ours_over_gather_list", "%.2f×"), r["steady_list_allocs"],
                r["steady_mallocs"]))
        if not rows:
            w("| not available | | | | | | | | | | | | | | | | | |")
    w("")
    w("## Type lookup")
    w("")
    w("`kvmstat type NAME` (a new process each run) and drgn loading the same file and")
    w("looking the struct up.  cold: the debug file dropped from the page cache first")
    w("(posix_fadvise) and no layout cache; warm: file in the page cache, no layout cache;")
    w("cached: layout cache filled by an earlier run.  hyperfine medians; ratios against")
    w("drgn in the same mode (cached against drgn warm).")
    w("")
    w("| target | tool | mode | median s | vs drgn | peak RSS MiB | RSS vs drgn |")
    w("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for r in types:
        if r.get("available"):
            w("| %s | %s | %s | %.3f | %s | %.0f | %s |" % (
                r["target"], r["tool"], r["mode"], r["median_s"],
                "%.2f×" % r["vs_drgn_time"] if "vs_drgn_time" in r else "-",
                r["peak_rss_kib"] / 1024,
                "%.2f×" % r["vs_drgn_rss"] if "vs_drgn_rss" in r else "-"))
        else:
            w("| %s | %s | %s | not available: %s | | | |" % (r["target"], r["tool"], r["mode"], r["why"]))
    w("")
    w("## Linux SLUB table against drgn and crash")
    w("")
    w("bench/linux_slab.sh on the real Debian 6.1 capture (nokaslr): hyperfine medians,")
    w("warm page cache.")
    w("")
    w("| tool | median s | vs drgn | peak RSS MiB |")
    w("| --- | ---: | ---: | ---: |")
    if isinstance(slab, list):
        for r in slab:
            w("| %s | %.3f | %.2f× | %.0f |" % (r["tool"], r["median_s"], r["vs_drgn"],
                                              r["peak_rss_kib"] / 1024))
    else:
        w("| not available: %s | | | |" % slab.get("why", "?"))
    w("")
    w("## Linux SLUB table at scale")
    w("")
    w("bench/linux_busy.sh (`bench/run --busy`): a 2 GiB Debian 6.1 guest with 500,000 files in")
    w("tmpfs, dumped as QEMU's ELF; `kvmstat slab --format crash` (every freelist walked) against")
    w("drgn 0.0.22 doing the same walk (tests/linux/oracle_drgn.py); trixie's drgn 0.0.31 through its")
    w("own helper, which visits every object (one run); hyperfine medians, warm page cache.")
    w("")
    if "rows" in busy:
        w("%d caches, %d active objects in the guest's /proc/slabinfo; kvmstat's table against it: %s;"
          % (busy["caches"], busy["objects"], busy["compare"]))
        w("%s." % busy.get("allocated", "exactly allocated: not compared"))
        w("")
    w("| tool | median s | vs drgn 0.0.22 | peak RSS MiB |")
    w("| --- | ---: | ---: | ---: |")
    if "rows" in busy:
        for r in busy["rows"]:
            if r.get("available"):
                w("| %s | %.3f | %s | %.0f |" % (r["tool"], r["median_s"],
                  "%.2f×" % r["vs_drgn"] if "vs_drgn" in r else "-", r["peak_rss_kib"] / 1024))
            else:
                w("| %s | not available: %s | | |" % (r["tool"], r.get("why", "?")))
    else:
        w("| not available: %s | | | |" % busy.get("why", "?"))
    w("")
    w("## Linux memory census against crash and drgn")
    w("")
    w("bench/linux_census.sh on the nokaslr capture: `mem` against crash's `kmem -i`, and")
    w("1,000 `whatis` (objects of every cache) against drgn's slab_object_info, one process each.")
    w("")
    w("| question | kvmstat s | peer | peer s | kvmstat / peer |")
    w("| --- | ---: | --- | ---: | ---: |")
    if isinstance(census, list):
        for r in census:
            w("| %s | %.3f | %s | %.3f | %.3f× |" % (r["question"], r["kvmstat_s"], r["peer"],
                                                   r["peer_s"], r["ratio"]))
    else:
        w("| not available: %s | | | | |" % census.get("why", "?"))
    w("")
    w("## Python object layer against drgn")
    w("")
    w("bench/python_walks.py: one walk written once, run under drgn 0.0.22 (paging ELF) and")
    w("kvmstat's object layer with its C hot paths (phys ELF), same memory; medians of five.")
    w("")
    w("| walk | drgn ms | kvmstat ms | kvmstat / drgn |")
    w("| --- | ---: | ---: | ---: |")
    if isinstance(pywalk, list):
        for r in pywalk:
            w("| %s | %.1f | %.1f | %.2f× |" % (r["walk"], r["drgn_ms"], r["kvmstat_ms"],
                                              r["vs_drgn"]))
    else:
        w("| not available: %s | | | |" % pywalk.get("why", "?"))
    w("")
    with open(out_md, "w") as f:
        f.write("\n".join(L))


def human(n):
    for unit, div in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= div:
            return "%g %s" % (n / div, unit)
    return "%d B" % n


if __name__ == "__main__":
    main()
