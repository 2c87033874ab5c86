#!/usr/bin/env python3
"""Compare kvmstat's answers on real Linux dumps with truth that is not ours.

    check_kvmstat.py CAPTURES_DIR KVMSTAT_OUT_DIR CAPTURE...

For each capture (made by capture.sh, oracles by run_oracles.sh, kvmstat's
outputs by realcore.sh; OUT/CAPTURE/forms.txt lists the forms kvmstat read):
  - every kvmstat run succeeded;
  - every dump form of one moment gives the same answers (physical ELF,
    paging ELF, the guest's RAM file when there is one, the kdump-compressed
    forms: QEMU's flattened stream, it rebuilt, makedumpfile's filtered zlib
    and lzo outputs, its split set), with and without the debug vmlinux;
  - on EVERY form, per cache: num_objs, num_slabs, active_objs, the exactly
    allocated objects, object_size, size, objects_per_slab, pages per slab
    and the address equal drgn's on that same form, wherever drgn reads it
    (oracles/readers.tsv says which it could not and why);
    ALLOCATED / TOTAL / SLABS / OBJSIZE / SSIZE and the address equal
    crash's `kmem -s` on that same form, and `kvmstat slab --format crash`
    on it is byte-identical to crash's table;
  - on every form, each /proc/slabinfo line equals the guest's where its two
    reads (just before the stop, slabinfo.final, and after the dumps,
    slabinfo.after) agree on the line, and each number lies within the two
    reads where they do not; anything else fails;
  - `kvmstat dmesg` is byte-identical to crash's `log`;
  - `kvmstat info` names the kernel the guest's /proc/version names;
  - the memory census (check_census.py): mem, buddyinfo, zoneinfo, vmalloc,
    whatis and slab --objects against the guest's /proc reads around the
    dump, drgn and crash.
Prints one line per failed check, a summary per capture, the form table
(which oracles checked kvmstat on each form), what an oracle could not read,
what could not be made here, what was opted out, and finally
"linux-realcore: N passed, M failed".
"""
import bisect
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_census import check_census  # noqa: E402

passed = 0
failed = 0
# Oracles opted out (realcore.sh names them in the summary).
SKIPPED = set(os.environ.get("KVS_SKIP_ORACLES", "").split())


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}" + (f": {detail}" if detail else ""))
    return ok


def read(path):
    with open(path, "rb") as f:
        return f.read()


def parse_slabinfo(path):
    caches = {}
    for line in open(path):
        if line.startswith("slabinfo") or line.startswith("#") or not line.strip():
            continue
        f = line.split()
        caches[f[0]] = {
            "line": line.rstrip("\n"),
            "active_objs": int(f[1]), "num_objs": int(f[2]), "size": int(f[3]),
            "objects_per_slab": int(f[4]), "pages_per_slab": int(f[5]),
            "num_slabs": int(f[14]),
        }
    return caches


def parse_crash_tsv(path):
    rows = {}
    lines = open(path).read().splitlines()
    head = lines[0].split("\t")
    for line in lines[1:]:
        r = dict(zip(head, line.split("\t")))
        rows[r["name"]] = r
    return rows


def readprofile(bins, nbins, step, stext, sysmap):
    """Per-function ticks as readprofile computes them from System.map: a
    bin counts for the last text symbol (T t W w) at or below its address,
    in the file's order; the last bin is *unknown*.  bins: {index: count}
    at runtime _stext.  Returns ({runtime address: ticks}, {address: names},
    unknown)."""
    syms, link_stext = [], None
    for line in open(sysmap):
        f = line.split()
        if len(f) >= 3 and f[1] in "TtWw":
            syms.append((int(f[0], 16), f[2]))
        if len(f) >= 3 and f[2] == "_stext":
            link_stext = int(f[0], 16)
    syms.sort(key=lambda s: s[0])
    slide = stext - link_stext
    addrs = [a for a, _ in syms]
    names = {}
    for a, n in syms:
        names.setdefault(a + slide, set()).add(n)
    ticks, unknown = {}, 0
    for i, c in bins.items():
        if i == nbins - 1:
            unknown += c
            continue
        k = bisect.bisect_right(addrs, link_stext + i * step) - 1
        a = syms[k][0] + slide if k >= 0 else 0
        ticks[a] = ticks.get(a, 0) + c
    return ticks, names, unknown


def check_profile(cap, cd, od):
    """The profile buffer: every bin equal to drgn's on the same dump; the
    per-function ticks equal readprofile's binning of those bins against
    System.map (aliases at one address are one function); against the
    guest's /proc/profile, read about a second before the dump: the same
    step, no counter lower than the guest's (counters only grow), and the
    guest's top-10 order wherever two functions' ticks differ by more than
    the ticks that arrived in between."""
    drgn = json.load(open(os.path.join(cd, "oracles", "drgn.vmcore.elf-paging.json")))
    dp = drgn.get("profile")
    if not check(dp is not None and dp.get("prof_len"), f"{cap}: drgn found a profile buffer"):
        return
    g = read(os.path.join(od, "gmon.out"))
    lpc, hpc, ncnt, version, rate, bits = struct.unpack_from("<QQiiii", g, 0)
    n = (len(g) - 40) // 4
    ours = struct.unpack_from("<%dI" % n, g, 40)
    stext, step = int(dp["_stext"], 16), 1 << dp["prof_shift"]
    dbins = {int(k): v for k, v in dp["bins"].items()}
    check(n == dp["prof_len"] and lpc == stext and bits == 32 and (hpc - lpc) // n == step,
          f"{cap}: profile geometry", f"{n} bins from 0x{lpc:x}, drgn {dp['prof_len']}")
    obins = {i: c for i, c in enumerate(ours) if c}
    check(obins == dbins, f"{cap}: profile bins differ from drgn's prof_buffer",
          f"{len(set(obins.items()) ^ set(dbins.items()))} bins differ")
    sysmap = os.environ["SYSTEM_MAP"]
    rp, names, unknown = readprofile(dbins, n, step, stext, sysmap)
    for tag in ["profile___json", "nodebug.profile___json"]:
        j = json.load(open(os.path.join(od, f"vmcore.elf.{tag}")))
        mine = {int(f["address"], 16): f["ticks"] for f in j["functions"]}
        check(j["step"] == step and j["total"] == dp["total"] and j["unknown"] == unknown,
              f"{cap}: {tag} step/total/unknown",
              f"{j['step']} {j['total']} {j['unknown']} vs {dp['total']} {unknown}")
        bad = [hex(k) for k in set(mine) | set(rp) if mine.get(k) != rp.get(k)]
        check(not bad, f"{cap}: {tag} per-function ticks differ from readprofile on "
              f"System.map", f"{len(bad)} functions: {sorted(bad)[:5]}")
        badn = [f["function"] for f in j["functions"]
                if f["function"] not in names.get(int(f["address"], 16), ())]
        check(not badn, f"{cap}: {tag} names not in System.map at their address", str(badn[:5]))
        ticks = [f["ticks"] for f in j["functions"]]
        check(ticks == sorted(ticks, reverse=True), f"{cap}: {tag} busiest first")
    b = read(os.path.join(cd, "gt", "profile"))
    gv = struct.unpack("<%dI" % (len(b) // 4), b)
    gbins = {i: c for i, c in enumerate(gv[1:]) if c}
    check(gv[0] == step, f"{cap}: /proc/profile step {gv[0]} vs {step}")
    check(len(gv) - 1 == n and all(obins.get(i, 0) >= c for i, c in gbins.items()),
          f"{cap}: a counter in the dump is lower than in the guest's earlier /proc/profile")
    drift = sum(obins.values()) - sum(gbins.values())
    grp, _, _ = readprofile(gbins, n, step, stext, sysmap)
    j = json.load(open(os.path.join(od, "vmcore.elf.profile___json")))
    mine = {int(f["address"], 16): f["ticks"] for f in j["functions"]}
    top_g = sorted(grp, key=lambda a: -grp[a])[:10]
    pos = {int(f["address"], 16): i for i, f in enumerate(j["functions"])}
    wrong = [(hex(a), hex(b)) for x, a in enumerate(top_g) for b in top_g[x + 1:]
             if grp[a] - grp[b] > drift and not pos.get(a, 1 << 30) < pos.get(b, 1 << 30)]
    check(not wrong, f"{cap}: the guest's top-10 order (gaps over {drift} ticks) not kept",
          str(wrong[:3]))
    same = [pos.get(a) for a in top_g] == list(range(10))
    print(f"{cap}: profile {n} bins, {len(obins)} non-zero, total {dp['total']} (guest's "
          f"/proc/profile {sum(gbins.values())}: {drift} ticks later); top-10 order "
          f"{'identical' if same else 'differs only where the gap is within the drift'}")


def check_kcore(kd):
    """kvmstat -M /proc/kcore inside the guest against /proc/slabinfo read
    just before and just after it: the same caches, object sizes, objects
    and pages per slab exactly; every line identical to the guest's when
    its two reads agree on the cache; else slabs and objects between them
    and the active count at most the objects."""
    rc = open(os.path.join(kd, "rc")).read().strip()
    err = open(os.path.join(kd, "err")).read().strip() if os.path.exists(
        os.path.join(kd, "err")) else ""
    if not check(rc == "0", "kcore: kvmstat -M /proc/kcore slab in the guest exit " + rc, err):
        return
    before = parse_slabinfo(os.path.join(kd, "before"))
    after = parse_slabinfo(os.path.join(kd, "after"))
    ours = parse_slabinfo(os.path.join(kd, "slab"))
    check(set(ours) == set(before) == set(after), "kcore: cache names differ from "
          "/proc/slabinfo", f"only ours {sorted(set(ours) - set(before))[:5]}, only "
          f"slabinfo's {sorted(set(before) - set(ours))[:5]}")
    exact = changed = 0
    for name, o in ours.items():
        b, a = before.get(name), after.get(name)
        if b is None or a is None:
            continue
        check(all(o[f] == b[f] == a[f] for f in ["size", "objects_per_slab", "pages_per_slab"]),
              f"kcore: {name} objsize/objperslab/pagesperslab", f"{o['line']} vs {b['line']}")
        # A cache the two reads agree on must read the same.  One that
        # changed between them (the reading process's own mm, files and
        # task come and go in that window) must have its slabs and objects
        # between the two reads, give or take what that window allocated
        # and freed again: the reader's own mappings take maple nodes and
        # VMAs while it runs and give them back before the second read, so
        # a cache may hold up to two slabs more than either read saw
        # (maple_node: 17 slabs before and after, 18 while kvmstat ran).
        # Its active count (which includes per-CPU free objects) is then
        # only bounded by its objects.
        if b["line"] == a["line"]:
            ok = o["line"] == b["line"]
        else:
            spare = {"num_slabs": 2, "num_objs": 2 * o["objects_per_slab"]}
            ok = all(min(b[f], a[f]) <= o[f] <= max(b[f], a[f]) + spare[f]
                     for f in ["num_objs", "num_slabs"]) and \
                0 <= o["active_objs"] <= o["num_objs"]
        check(ok, f"kcore: {name} counts outside the guest's before/after",
              f"ours '{o['line']}' before '{b['line']}' after '{a['line']}'")
        if o["line"] == b["line"] == a["line"]:
            exact += 1
        elif b["line"] != a["line"]:
            changed += 1
    info = open(os.path.join(kd, "info")).read()
    check("format:        elf" in info and "Linux version" in info, "kcore: kvmstat info on "
          "/proc/kcore names an ELF and the kernel's version", info[:300])
    print(f"kcore: {len(ours)} caches from /proc/kcore in the guest; {exact} lines identical "
          f"to /proc/slabinfo, {changed} caches changed between its two reads")


def parse_slabinfo_full(path):
    """name -> (line, the numbers of the line in order: active_objs,
    num_objs, objsize, objperslab, pagesperslab, limit, batchcount,
    sharedfactor, active_slabs, num_slabs, sharedavail)."""
    out = {}
    for line in open(path):
        if line.startswith("slabinfo") or line.startswith("#") or not line.strip():
            continue
        f = line.split()
        nums = [int(x) for x in f[1:] if x not in (":", "tunables", "slabdata")]
        out[f[0]] = (line.rstrip("\n"), nums)
    return out


SLABINFO_COLS = ["active_objs", "num_objs", "objsize", "objperslab", "pagesperslab", "limit",
                 "batchcount", "sharedfactor", "active_slabs", "num_slabs", "sharedavail"]


def check_guest(cap, form, ours_path, before, after):
    """kvmstat's /proc/slabinfo lines from one dump form against the guest's
    own two reads, just before the stop and just after the dumps: where the
    two reads print the same line, ours must be that line; where they differ,
    each number must lie within [min, max] of the two reads.  A cache in both
    reads must be in ours; a cache in ours must be in one of them.  Returns
    the names of the caches that changed between the two reads."""
    ours = parse_slabinfo_full(ours_path)
    both, either = set(before) & set(after), set(before) | set(after)
    check(both <= set(ours) <= either, f"{cap}: {form}: cache names against the guest's "
          "/proc/slabinfo before and after the dump",
          f"missing {sorted(both - set(ours))[:5]}, not in the guest's {sorted(set(ours) - either)[:5]}")
    changed = []
    for name in sorted(set(ours) & either):
        o, b, a = ours[name], before.get(name), after.get(name)
        reads = [x for x in (b, a) if x is not None]
        if len(reads) == 2 and b[0] == a[0]:
            check(o[0] == b[0], f"{cap}: {form}: {name} differs from the guest's /proc/slabinfo "
                  "(the same before and after the dump)", f"ours '{o[0]}' guest '{b[0]}'")
            continue
        changed.append(name)
        bad = [f"{c} {o[1][i]} not in [{min(r[1][i] for r in reads)}, {max(r[1][i] for r in reads)}]"
               for i, c in enumerate(SLABINFO_COLS)
               if len(o[1]) != len(SLABINFO_COLS) or
               not min(r[1][i] for r in reads) <= o[1][i] <= max(r[1][i] for r in reads)]
        check(not bad, f"{cap}: {form}: {name} outside the guest's two reads",
              "; ".join(bad) + f" (ours '{o[0]}', before '{b and b[0]}', after '{a and a[0]}')")
    return changed


def parse_readers(path):
    """run_oracles.sh's readers.tsv -> {form: {tool: row}}"""
    out = {}
    lines = open(path).read().splitlines()
    head = lines[0].split("\t")
    for line in lines[1:]:
        r = dict(zip(head, line.split("\t")))
        out.setdefault(r["form"], {})[r["tool"]] = r   # the last attempt wins
    return out


# kvmstat's JSON key for the exactly allocated objects is "count" (the key
# every allocator's rows share); the drgn oracle's is "allocated".
DRGN_FIELDS = ["num_objs", "num_slabs", "active_objs", "allocated", "object_size", "size",
               "objects_per_slab"]


def check_drgn(cap, form, byname, d):
    dnames = {c["name"] for c in d["caches"]}
    check(dnames == set(byname), f"{cap}: {form}: cache names differ from drgn's on {form}",
          f"only ours {sorted(set(byname) - dnames)[:5]}, only drgn's {sorted(dnames - set(byname))[:5]}")
    for c in d["caches"]:
        o = byname.get(c["name"])
        if o is None:
            continue
        got = {f: o.get("count" if f == "allocated" else f) for f in DRGN_FIELDS}
        bad = [f"{f} {got[f]} vs {c[f]}" for f in DRGN_FIELDS if got[f] != c.get(f)]
        bad += [f"pages_per_slab {o.get('pages_per_slab')} vs 1<<order {1 << c['order']}"
                for _ in [0] if o.get("pages_per_slab") != 1 << c["order"]]
        bad += [f"address {o['kaddr']} vs {c['address']}" for _ in [0]
                if o["kaddr"] != "0x%016x" % int(c["address"], 16)]
        check(not bad, f"{cap}: {form}: {c['name']} differs from drgn on {form}", ", ".join(bad))


def check_crash(cap, form, byname, cr, od, cd):
    check(set(cr) == set(byname), f"{cap}: {form}: cache names differ from crash's on {form}",
          f"only ours {sorted(set(byname) - set(cr))[:5]}, only crash's {sorted(set(cr) - set(byname))[:5]}")
    for name, r in cr.items():
        o = byname.get(name)
        if o is None:
            continue
        ssize = r["ssize"]
        kb = int(ssize[:-1]) * (1 if ssize.endswith("k") else 1024)
        got = (o["count"], o["num_objs"], o["num_slabs"], o["object_size"], o["pages_per_slab"] * 4,
               int(o["kaddr"], 16))
        want = (int(r["allocated"]), int(r["total"]), int(r["slabs"]), int(r["objsize"]), kb,
                int(r["cache"], 16))
        check(got == want, f"{cap}: {form}: {name} differs from crash kmem -s on {form}",
              "(allocated, total, slabs, objsize, slab KB, address) "
              f"ours {got[:5]} {o['kaddr']} crash {want[:5]} {r['cache']}")
    # crash's table from its header line on: on a RAM file crash first
    # prints "NOTE: setting phys_base to: ..." (the --machdep option).
    raw = os.path.join(cd, "oracles", f"crash.{form}.raw")
    table = read(raw) if os.path.exists(raw) else b""
    at = table.find(b"CACHE ")
    pre = table[:at] if at > 0 else b""
    check(at >= 0 and pre.count(b"\n") <= 2 and (not pre or pre.startswith(b"NOTE: ")) and
          read(os.path.join(od, f"{form}.slab___format_crash")) == table[at:],
          f"{cap}: {form}: kvmstat slab --format crash is not crash's kmem -s table on {form}",
          f"before crash's table: {pre[:200]!r}" if pre else "")


# Why the peers here cannot read some forms (readers.tsv has the error).
CANNOT_WHY = {
    ("drgn", "vmcore.kdump-zlib.flat"): "QEMU's flattened stream, and drgn 0.0.22 opens ELF cores "
    "and kdump files only",
    ("drgn", "vmcore.kdump-zlib"): "QEMU 7.2 leaves the header's utsname empty and libkdumpfile "
    "0.5.1 then knows no architecture (vmcore.kdump-zlib.uts is the same file with it filled)",
    ("drgn", "vmcore.mdf-split"): "drgn opens one file: given part 1 of 3, the pages in parts 2 "
    "and 3 are excluded",
}


def main():
    capdir, outdir, caps = sys.argv[1], sys.argv[2], sys.argv[3:]
    table = {}            # form -> {capture: [checkers]}
    cannot = {}           # (tool, form) -> why
    not_made = {}         # form -> why
    for cap in caps:
        cd, od = os.path.join(capdir, cap), os.path.join(outdir, cap)
        dumps = open(os.path.join(od, "forms.txt")).read().split()
        before = failed
        runs = sorted(f[:-3] for f in os.listdir(od) if f.endswith(".rc"))
        for r in runs:
            rc = open(os.path.join(od, r + ".rc")).read().strip()
            check(rc == "0", f"{cap}: kvmstat {r} exit {rc}",
                  open(os.path.join(od, r + ".err")).read()[-500:])
        try:
            ours = json.load(open(os.path.join(od, "vmcore.elf.slab___json")))
        except (OSError, ValueError) as e:
            check(False, f"{cap}: kvmstat slab --json output", str(e))
            continue
        nm = os.path.join(cd, "not-made.txt")
        if check(os.path.exists(nm), f"{cap}: not-made.txt (capture.sh names the forms it "
                 "cannot make)"):
            for line in open(nm):
                if line.strip() and not line.startswith("#"):
                    form, why = line.rstrip("\n").split("\t", 1)
                    not_made.setdefault(form, why)
        # One moment, every format: the same bytes out.
        for tag in ["slab___json", "slab", "slab___format_crash", "dmesg"]:
            ref = read(os.path.join(od, "vmcore.elf." + tag))
            for d in dumps[1:]:
                p = os.path.join(od, f"{d}.{tag}")
                check(os.path.exists(p) and read(p) == ref,
                      f"{cap}: {tag.strip('_')} on {d} differs from vmcore.elf")
        # No debug file (kallsyms and BTF from the dump): the same bytes as
        # with vmlinux, on every format.
        for d in dumps:
            for tag in ["slab___json", "slab", "slab___format_crash", "dmesg", "info___json"]:
                a, b = os.path.join(od, f"{d}.{tag}"), os.path.join(od, f"{d}.nodebug.{tag}")
                if tag == "info___json":
                    try:
                        ja, jb = json.load(open(a)), json.load(open(b))
                    except ValueError as e:
                        check(False, f"{cap}: info --json on {d}", str(e))
                        continue
                    for j in (ja, jb):
                        j.pop("kernel", None)
                        j.pop("dwarf_version", None)
                    ok = ja == jb
                else:
                    ok = read(a) == read(b)
                check(ok, f"{cap}: {tag.strip('_')} on {d} without -N differs from -N vmlinux")
        # info --stats: the kdump forms decompress through their page cache.
        for d in dumps:
            try:
                st = json.load(open(os.path.join(od, f"{d}.stats")))
            except ValueError as e:
                check(False, f"{cap}: info --stats --json on {d}", str(e))
                continue
            h, m = st.get("page_cache_hits"), st.get("page_cache_misses")
            want = d.startswith("vmcore.kdump-") or d.startswith("vmcore.mdf-")
            check(h is not None and m is not None and ((h + m > 0 and m > 0) if want
                                                       else h == m == 0),
                  f"{cap}: info --stats page cache on {d}", f"hits {h} misses {m}")
        check(read(os.path.join(od, "stripped.slab___json")) ==
              read(os.path.join(od, "vmcore.elf.slab___json")),
              f"{cap}: slab --json with a vmlinux without DWARF and BTF differs")
        # The dump's BTF and the vmlinux DWARF agree on the walkers' structs.
        tb, td = os.path.join(od, "types.btf-dump"), os.path.join(od, "types.dwarf")
        check(os.path.exists(tb) and read(tb) == read(td) and len(read(tb)) > 1000,
              f"{cap}: kvmstat type from the dump's BTF differs from the vmlinux DWARF")
        if "drgn" in SKIPPED:
            print(f"{cap}: profile buffer not checked: drgn opted out (KVS_SKIP_ORACLES)")
        else:
            check_profile(cap, cd, od)
        # Every form against each oracle that read that same form, and
        # against the guest's own /proc/slabinfo read before and after.
        readers = parse_readers(os.path.join(cd, "oracles", "readers.tsv"))
        gbefore = parse_slabinfo_full(os.path.join(cd, "slabinfo.final"))
        after_path = os.path.join(cd, "slabinfo.after")
        gafter = parse_slabinfo_full(after_path) if check(
            os.path.exists(after_path), f"{cap}: the guest's second /proc/slabinfo read "
            "(slabinfo.after)") else None
        changed = []
        for d in dumps:
            who = table.setdefault(d, {}).setdefault(cap, [])
            try:
                mine = json.load(open(os.path.join(od, f"{d}.slab___json")))
            except (OSError, ValueError) as e:
                check(False, f"{cap}: kvmstat slab --json on {d}", str(e))
                continue
            byname = {c["name"]: c for c in mine["caches"]}
            check(len(byname) == len(mine["caches"]), f"{cap}: {d}: duplicate cache names")
            rd = readers.get(d, {})
            for tool in ["drgn", "crash"]:
                r = rd.get(tool)
                if not check(r is not None, f"{cap}: {d}: {tool} was not run on it "
                             "(oracles/readers.tsv)"):
                    continue
                if r["ok"] == "skip":           # named in the "skipped" line
                    check(tool in SKIPPED, f"{cap}: {d}: {tool} skipped without KVS_SKIP_ORACLES")
                    continue
                if r["ok"] != "+":
                    cannot.setdefault((tool, d), r["note"] or "failed")
                    continue
                if tool == "drgn":
                    check_drgn(cap, d, byname, json.load(open(
                        os.path.join(cd, "oracles", f"drgn.{d}.json"))))
                else:
                    check_crash(cap, d, byname, parse_crash_tsv(
                        os.path.join(cd, "oracles", f"crash.{d}.tsv")), od, cd)
                who.append(r["how"] or tool)
            if gafter is not None:
                changed = check_guest(cap, d, os.path.join(od, f"{d}.slab"), gbefore, gafter)
                who.append("guest")
        if "crash" in SKIPPED:
            print(f"{cap}: dmesg not checked against crash's log: crash opted out (KVS_SKIP_ORACLES)")
        else:
            lg = os.path.join(cd, "oracles", "crash.log.raw")
            check(os.path.exists(lg) and read(os.path.join(od, "vmcore.elf.dmesg")) == read(lg),
                  f"{cap}: kvmstat dmesg is not crash's log")
        info = json.load(open(os.path.join(od, "vmcore.elf.info___json")))
        version = open(os.path.join(cd, "gt", "version")).read().strip()
        check(info.get("version") == version, f"{cap}: info version",
              f"{info.get('version')!r} vs /proc/version {version!r}")
        census_line = check_census(check, cap, cd, od, dumps)
        times = []
        for d in dumps:
            t = open(os.path.join(od, f"{d}.slab___json.time")).read().split()
            times.append(f"{d} {float(t[0]):.2f} s {int(t[1]) // 1024} MB")
        print(f"{cap}: {len(ours['caches'])} caches; {failed - before} failed checks; "
              f"changed between the guest's reads before and after the dump: "
              f"{', '.join(changed) or 'none'}; slab --json: {'; '.join(times)}")
        print(census_line)
    kd = os.path.join(capdir, "kcore", "kcore")
    if os.environ.get("KVS_KCORE", "1") == "1":
        if check(os.path.exists(os.path.join(kd, "rc")), "kcore: the capture's outputs exist"):
            check_kcore(kd)
            table.setdefault("/proc/kcore (in the guest)", {})["kcore"] = ["guest"]
    # The summary: every form with what checked kvmstat on it, what an
    # oracle could not read and why, what cannot be made here, what was
    # opted out.  The last line stays "linux-realcore: N passed, M failed".
    print("linux-realcore forms: kvmstat's slab table on each form checked field by field against")
    print("  drgn (oracle_drgn.py; +alias: the phys-only ELF given the kernel image's virtual alias;")
    print("  +ram: a stub core and the RAM file as memory segments), crash (kmem -s, and its table")
    print("  byte for byte; FILE@0: the RAM file in crash's ramdump form), guest (its /proc/slabinfo")
    print("  before and after the dump); kvmstat-only: checked against kvmstat on another form only")
    w = max(len(f) for f in table) if table else 10
    allcaps = caps + (["kcore"] if any("kcore" in v for v in table.values()) else [])
    for form, bycap in table.items():
        kinds = {" ".join(v) or "kvmstat-only" for v in bycap.values()}
        if len(kinds) == 1:
            print(f"  {form:<{w}}  {kinds.pop()}  ({' '.join(c for c in allcaps if c in bycap)})")
        else:
            print(f"  {form:<{w}}  " + "; ".join(f"{c}: {' '.join(bycap[c]) or 'kvmstat-only'}"
                                                for c in allcaps if c in bycap))
    for (tool, form), why in sorted(cannot.items()):
        tried = CANNOT_WHY.get((tool, form), "")
        print(f"linux-realcore: {tool} cannot read {form}: " + (f"{tried}; " if tried else "") +
              f"tried, error: {why}")
    if not_made:
        print("linux-realcore not made here: " +
              "; ".join(f"{f}: {why}" for f, why in not_made.items()))
    opted = [x for x in os.environ.get("KVS_OPTED_OUT", "").split("\n") if x]
    print("linux-realcore skipped (opted out): " + ("; ".join(opted) if opted else "none"))
    if os.environ.get("KVS_T_START"):
        import time
        print(f"linux-realcore time: {int(time.time()) - int(os.environ['KVS_T_START'])} s")
    print(f"linux-realcore: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
