"""The memory census checks of check_kvmstat.py (issue 26): kvmstat's `mem`,
`buddyinfo`, `zoneinfo`, `vmalloc`, `whatis` and `slab --objects` on a real
Linux dump against

  - the guest's own /proc/{meminfo,buddyinfo,zoneinfo,vmstat,vmallocinfo}
    read twice just before the stop and once after the dumps
    (CAPTURE/census/{1,2,A}/): a line on which the reads agree must be
    kvmstat's byte for byte, a number that drifts must lie within the reads;
  - drgn (oracles/census.drgn.json, on vmcore.elf-paging): zone free lists,
    watermarks, sizes and vm_stat, the meminfo counters, the vmalloc areas
    and its answers on the whatis sample (slab_object_info), exactly;
  - crash (oracles/crash.census.raw, crash.whatis/N, on vmcore.elf):
    kmem ADDR on the same sample (cache, object, allocated; vmalloc range;
    symbol) and kmem -S CACHE (every object and its state), exactly.

A missing kvmstat command, output or oracle is a failure, never a skip.
"""
import json
import os
import re

CENSUS_FILES = ("meminfo", "buddyinfo", "zoneinfo", "vmstat", "vmallocinfo")
# kvmstat runs realcore.sh makes per form (tag -> command line)
RUNS = {
    "mem___json": "mem --json",
    "mem": "mem",
    "buddyinfo": "buddyinfo",
    "buddyinfo___json": "buddyinfo --json",
    "zoneinfo___json": "zoneinfo --json",
    "vmalloc": "vmalloc",
    "vmalloc___json": "vmalloc --json",
    "whatis___json__": "whatis --json -",
}
OBJECT_CACHES = ("kmalloc-64", "kmem_cache", "dentry", "task_struct")
NUM = re.compile(r"^-?\d+$")


def guest_reads(cd, name):
    """The guest's reads of /proc/NAME around the dump, as lists of lines."""
    out = []
    for tag in ("1", "2", "A"):
        p = os.path.join(cd, "census", tag, name)
        if os.path.exists(p):
            out.append(open(p).read().splitlines())
    return out


def load_json(check, what, path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, what, f"{path}: {e}")
        return None


def between(v, vals):
    return min(vals) <= v <= max(vals)


def check_text_lines(check, what, ours, reads):
    """ours (text) against the guest reads, line by line: byte-equal where
    the reads agree, every number within the reads where they do not.
    Returns the number of lines that drifted between the reads."""
    mine = ours.splitlines()
    if not check(all(len(r) == len(reads[0]) for r in reads) and len(mine) == len(reads[0]),
                 f"{what}: {len(mine)} lines, the guest printed {[len(r) for r in reads]}"):
        return 0
    drift = bad = 0
    first = None
    for i, line in enumerate(mine):
        gl = [r[i] for r in reads]
        if all(x == gl[0] for x in gl):
            ok = line == gl[0]
        else:
            drift += 1
            toks = [x.split() for x in gl]
            mt = line.split()
            ok = all(len(t) == len(mt) for t in toks)
            if ok:
                for j, t in enumerate(mt):
                    col = [x[j] for x in toks]
                    if all(NUM.match(c) for c in col) and NUM.match(t):
                        ok = ok and between(int(t), [int(c) for c in col])
                    else:
                        ok = ok and all(c == t for c in col)
        if not ok:
            bad += 1
            if first is None:
                first = f"line {i + 1}: {line!r} vs the guest's {gl!r}"
    check(bad == 0, f"{what}: {bad} lines differ from the guest's reads", first or "")
    return drift


def parse_meminfo(lines):
    m = {}
    for line in lines:
        k, v = line.split(":", 1)
        m[k] = int(v.split()[0])
    return m


def parse_zoneinfo(lines):
    """/proc/zoneinfo -> [{node, zone, fields..., stats, node_stats, protection}]"""
    zones, z, section = [], None, None
    for line in lines:
        m = re.match(r"^Node (\d+), zone\s+(\S+)", line)
        if m:
            z = {"node": int(m.group(1)), "zone": m.group(2), "stats": {}, "node_stats": {}}
            zones.append(z)
            section = "zone"
            continue
        if z is None:
            continue
        s = line.strip()
        if s == "per-node stats":
            section = "node"
            continue
        if s == "pagesets":
            section = "pcp"
            continue
        if section == "pcp":
            m = re.match(r"^(node_unreclaimable|start_pfn):\s+(\d+)", s)
            if m:
                z[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"^protection: \((.*)\)", s)
        if m:
            z["protection"] = [int(x) for x in m.group(1).split(",")]
            continue
        m = re.match(r"^pages free\s+(\d+)", s)
        if m:
            z["pages_free"] = int(m.group(1))
            section = "zone"
            continue
        t = s.split()
        if len(t) == 2 and NUM.match(t[1]):
            if section == "node":
                z["node_stats"][t[0]] = int(t[1])
            elif t[0] in ("boost", "min", "low", "high", "spanned", "present", "managed", "cma"):
                z[t[0]] = int(t[1])
            else:
                z["stats"][t[0]] = int(t[1])
    return zones


def parse_vmallocinfo(lines):
    out = []
    for line in lines:
        t = line.split()
        s, e = t[0].split("-")
        a = {"start": int(s, 16), "end": int(e, 16), "size": int(t[1]), "caller": None,
             "pages": 0, "phys": None, "flags": []}
        for x in t[2:]:
            if x.startswith("pages="):
                a["pages"] = int(x[6:])
            elif x.startswith("phys="):
                a["phys"] = int(x[5:], 16)
            elif re.match(r"^N\d+=", x):
                pass
            elif "+0x" in x and "/0x" in x:
                a["caller"] = x
            else:
                a["flags"].append(x)
        out.append(a)
    return out


def hexint(v):
    if v is None:
        return None
    if isinstance(v, int):
        return v
    return int(str(v), 16)


def run_ok(check, cap, od, d, tag, mdf_ok=False):
    """kvmstat's exit status for a census run; filtered (makedumpfile) forms
    may say 'incomplete' (1)."""
    p = os.path.join(od, f"{d}.{tag}.census-rc")
    nd = tag.startswith("nodebug.")
    cmd = ("" if nd else "-N vmlinux ") + RUNS.get(tag.replace("nodebug.", ""), tag)
    if not check(os.path.exists(p), f"{cap}: kvmstat {cmd} on {d} was not run"):
        return False
    rc = open(p).read().strip()
    err = ""
    ep = os.path.join(od, f"{d}.{tag}.err")
    if os.path.exists(ep):
        err = open(ep).read()[-300:]
    ok = rc == "0" or (mdf_ok and rc == "1")
    return check(ok, f"{cap}: kvmstat {cmd} on {d} exit {rc}", err)


def check_mem(check, cap, d, mine, reads, drgn):
    mi = mine.get("meminfo")
    if not check(isinstance(mi, dict) and mine.get("schema") == "kvmstat/1",
                 f"{cap}: mem --json on {d}: no meminfo object / schema"):
        return
    flags = mine.get("flags") or {}
    greads = [parse_meminfo(r) for r in reads]
    bad, live = [], []
    for name in greads[0]:
        vals = [g[name] for g in greads if name in g]
        v = mi.get(name)
        if "live" in flags.get(name, []):
            live.append(name)
            if v is None:
                bad.append(f"{name} missing")
            continue
        if not isinstance(v, int) or not between(v, vals):
            bad.append(f"{name} {v} vs guest {sorted(set(vals))}")
    check(not bad, f"{cap}: mem --json on {d}: {len(bad)} meminfo lines differ from the guest's",
          "; ".join(bad[:8]))
    if drgn is not None:
        dm = drgn.get("meminfo", {})
        diff = [f"{k} {mi.get(k)} vs drgn {v}" for k, v in dm.items() if mi.get(k) != v]
        check(not diff, f"{cap}: mem --json on {d}: {len(diff)} lines differ from drgn's counters",
              "; ".join(diff[:8]))
    return live


def check_buddy_json(check, cap, d, mine, drgn):
    zs = mine.get("zones")
    if not check(isinstance(zs, list) and zs, f"{cap}: buddyinfo --json on {d}: no zones"):
        return
    want = [(z["node"], z["zone"], z["free"]) for z in drgn["zones"] if z["populated"]]
    got = [(z.get("node"), z.get("zone"), z.get("free")) for z in zs]
    check(got == want, f"{cap}: buddyinfo --json on {d} differs from drgn's free_area",
          f"{got} vs {want}")


ZFIELDS = ("pages_free", "min", "low", "high", "spanned", "present", "managed", "cma", "start_pfn")


def check_zoneinfo(check, cap, d, mine, reads, drgn):
    zs = mine.get("zones")
    if not check(isinstance(zs, list) and zs, f"{cap}: zoneinfo --json on {d}: no zones"):
        return
    gz = [parse_zoneinfo(r) for r in reads]
    byk = {(z.get("node"), z.get("zone")): z for z in zs}
    bad = []
    for i, g in enumerate(gz[0]):
        k = (g["node"], g["zone"])
        m = byk.get(k)
        if m is None:
            bad.append(f"zone {k} missing")
            continue
        for f in ZFIELDS:
            if f in g:
                vals = [x[i][f] for x in gz if f in x[i]]
                if not isinstance(m.get(f), int) or not between(m[f], vals):
                    bad.append(f"{k} {f} {m.get(f)} vs guest {sorted(set(vals))}")
        if "protection" in g and m.get("protection") != g["protection"]:
            bad.append(f"{k} protection {m.get('protection')} vs {g['protection']}")
        for sect in ("stats", "node_stats"):
            for name in g[sect]:
                vals = [x[i][sect][name] for x in gz if name in x[i][sect]]
                v = (m.get(sect) or {}).get(name)
                if not isinstance(v, int) or not between(v, vals):
                    bad.append(f"{k} {sect}.{name} {v} vs guest {sorted(set(vals))}")
    check(not bad, f"{cap}: zoneinfo --json on {d}: {len(bad)} fields differ from the guest's "
          "/proc/zoneinfo reads", "; ".join(bad[:8]))
    if drgn is not None:
        bad = []
        for z in drgn["zones"]:
            k = (z["node"], z["zone"])
            m = byk.get(k)
            if m is None:
                if z["populated"]:
                    bad.append(f"zone {k} missing")
                continue
            for f in ZFIELDS:
                if m.get(f) != z[f]:
                    bad.append(f"{k} {f} {m.get(f)} vs drgn {z[f]}")
            if z["populated"]:
                # drgn names the counters by their enum (nr_free_cma_pages),
                # the kernel's zoneinfo by vmstat_text (nr_free_cma): the
                # zone's counters in order, value against value
                ours = list((m.get("stats") or {}).items())[:len(z["stats"])]
                for (name, v), (oname, ov) in zip(z["stats"].items(), ours):
                    if ov != v:
                        bad.append(f"{k} stats.{oname} {ov} vs drgn {name} {v}")
                if len(ours) < len(z["stats"]):
                    bad.append(f"{k}: {len(ours)} zone counters, drgn {len(z['stats'])}")
        check(not bad, f"{cap}: zoneinfo --json on {d}: {len(bad)} fields differ from drgn's",
              "; ".join(bad[:8]))


def check_vmalloc_json(check, cap, d, mine, reads, drgn):
    areas = mine.get("areas")
    if not check(isinstance(areas, list) and areas, f"{cap}: vmalloc --json on {d}: no areas"):
        return
    g = parse_vmallocinfo(reads[-1])
    got = [(hexint(a.get("start")), hexint(a.get("end")), a.get("size"), a.get("caller"),
            a.get("pages") or 0) for a in areas]
    want = [(a["start"], a["end"], a["size"], a["caller"], a["pages"]) for a in g]
    same = all(r == reads[0] for r in reads)
    if same:
        miss = [w for w in want if w not in got]
        extra = [x for x in got if x not in want]
        check(not miss and not extra, f"{cap}: vmalloc --json on {d} differs from the guest's "
              f"/proc/vmallocinfo ({len(miss)} missing, {len(extra)} extra)",
              f"missing {[(hex(m[0]), m[3]) for m in miss[:4]]} extra {[(hex(x[0]), x[3]) for x in extra[:4]]}")
    if drgn is not None:
        dv = {(hexint(a["start"]), hexint(a["end"]), a["size"], a["pages"]) for a in drgn["vmalloc"]
              if a.get("size") is not None}
        mv = {(x[0], x[1], x[2], x[4]) for x in got}
        check(dv <= mv, f"{cap}: vmalloc --json on {d}: {len(dv - mv)} of drgn's "
              f"{len(dv)} vmap areas missing", str(sorted(dv - mv)[:4]))


def parse_crash_kmem(text):
    """crash's `kmem ADDR` answer -> {kind, cache, object, allocated, range, symbol}"""
    lines = text.splitlines()
    a = {"kind": "unknown"}
    for i, line in enumerate(lines):
        if line.startswith("CACHE ") and i + 1 < len(lines):
            a["kind"] = "slab"
            a["cache"] = lines[i + 1].split()[-1]
        if line.strip() == "FREE / [ALLOCATED]" and i + 1 < len(lines):
            o = lines[i + 1].strip()
            if o.startswith("["):
                a["object"] = int(o[1:o.index("]")], 16)
                a["allocated"] = True
            elif o:
                a["object"] = int(o.split()[0], 16)
                a["allocated"] = False
        m = re.match(r"^\s*([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+) - ([0-9a-f]+)\s+(\d+)$", line)
        if m and a["kind"] == "unknown":
            a["kind"] = "vmalloc"
            a["range"] = (int(m.group(3), 16), int(m.group(4), 16))
        m = re.match(r"^([0-9a-f]+) \((\w)\) (\S+)", line)
        if m and a["kind"] == "unknown":
            a["kind"] = "symbol"
            a["symbol"] = m.group(3).split("+")[0]
        if line.strip().startswith("PAGE ") and a["kind"] == "unknown":
            a["kind"] = "page"
    return a


def norm_sym(s):
    if s is None:
        return None
    s = s.split("/")[0]
    return s if "+0x" in s else s + "+0x0"


def check_whatis(check, cap, d, mine, drgn, crash_dir):
    addrs = mine.get("addresses")
    if not check(isinstance(addrs, list) and addrs, f"{cap}: whatis --json on {d}: no addresses"):
        return
    byaddr = {hexint(a.get("address")): a for a in addrs}
    sample = drgn["sample"]
    check(len(sample) >= 1000 and len(addrs) == len(sample),
          f"{cap}: whatis --json on {d}: {len(addrs)} answers for {len(sample)} addresses "
          "(at least 1000)")
    bad_d, bad_c, n_d, n_c = [], [], 0, 0
    for i, e in enumerate(sample):
        addr = int(e["address"], 16)
        k = byaddr.get(addr)
        if k is None:
            bad_d.append(f"{e['address']} no answer")
            continue
        x = e["expect"]
        kind = k.get("kind")
        why = None
        if x == "slab":
            if e.get("cache") is not None:
                n_d += 1
                off = k.get("offset")
                # an address in the slack after a slab's last object: drgn
                # 0.0.22's slab_object_info does not bound the index and calls
                # it an object; kvmstat says it is past the last one (state
                # unknown): the same cache and slot, no state
                slack = "past the slab's last object" in (k.get("note") or "")
                if (kind != "slab" or k.get("cache") != e["cache"] or
                        hexint(k.get("object")) != int(e["object"], 16) or
                        (k.get("allocated") is not e["allocated"] and not slack) or
                        off != addr - int(e["object"], 16)):
                    why = (f"{kind} {k.get('cache')} {k.get('object')} +{off} alloc={k.get('allocated')} "
                           f"vs drgn slab {e['cache']} {e['object']} alloc={e['allocated']}")
        elif x == "page":
            n_d += 1
            if kind not in ("page", "slab") or k.get("pfn") != e["pfn"] or (
                    e.get("cache") is None and kind != "page"):
                why = f"{kind} pfn {k.get('pfn')} vs drgn page pfn {e['pfn']} ({e['what']})"
        elif x == "vmalloc":
            n_d += 1
            if kind != "vmalloc" or hexint(k.get("area_start")) != int(e["area_start"], 16) or \
                    hexint(k.get("area_end")) != int(e["area_end"], 16):
                why = f"{kind} {k.get('area_start')}-{k.get('area_end')} vs drgn vmalloc {e['area_start']}-{e['area_end']}"
        elif x == "stack":
            n_d += 1
            if kind != "stack" or k.get("pid") != e["pid"]:
                why = f"{kind} pid {k.get('pid')} vs drgn stack of pid {e['pid']}"
        elif x == "symbol":
            n_d += 1
            if kind != "symbol" or norm_sym(k.get("symbol")) != e["symbol"]:
                why = f"{kind} {k.get('symbol')} vs drgn symbol {e['symbol']}"
        elif x == "unknown":
            n_d += 1
            if kind != "unknown":
                why = f"{kind} vs unknown"
        if why:
            bad_d.append(f"{e['address']} ({e['what']}): {why}")
        # crash's kmem ADDR on the same address (line i+1 of whatis.addrs)
        p = os.path.join(crash_dir, str(i + 1))
        if not os.path.exists(p):
            bad_c.append(f"{e['address']}: no crash answer")
            continue
        c = parse_crash_kmem(open(p).read())
        why = None
        if c["kind"] == "slab" and "object" in c:
            n_c += 1
            slack = "past the slab's last object" in (k.get("note") or "")
            if kind != "slab" or k.get("cache") != c["cache"] or hexint(k.get("object")) != c["object"] \
                    or (k.get("allocated") is not c["allocated"] and not slack):
                why = (f"{kind} {k.get('cache')} {k.get('object')} alloc={k.get('allocated')} vs crash "
                       f"{c['cache']} {hex(c['object'])} alloc={c['allocated']}")
        elif c["kind"] == "vmalloc" and x == "vmalloc":
            n_c += 1
            if (hexint(k.get("area_start")), hexint(k.get("area_end"))) != c["range"]:
                why = f"{k.get('area_start')}-{k.get('area_end')} vs crash {c['range']}"
        elif c["kind"] == "symbol" and x == "symbol":
            n_c += 1
            if (k.get("symbol") or "").split("+")[0] != c["symbol"]:
                why = f"{k.get('symbol')} vs crash {c['symbol']}"
        if why:
            bad_c.append(f"{e['address']} ({e['what']}): {why}")
    check(not bad_d, f"{cap}: whatis on {d}: {len(bad_d)} of {n_d} answers differ from drgn's",
          "; ".join(bad_d[:6]))
    check(n_c >= 500 and not bad_c, f"{cap}: whatis on {d}: {len(bad_c)} of {n_c} answers differ "
          "from crash's kmem ADDR (at least 500 compared)", "; ".join(bad_c[:6]))


def parse_crash_objects(raw):
    """crash.census.raw's kmem -S sections -> {cache: {address: allocated}},
    {cache: {address: cpu}} for the free objects crash says are in a CPU's
    cache (the CPU slab's freelists)"""
    out, cpus, cur, cur_name = {}, {}, None, None
    for line in raw.splitlines():
        m = re.match(r"^=== kmem -S (\S+) ===$", line)
        if m:
            cur_name = m.group(1)
            cur = out.setdefault(cur_name, {})
            continue
        if line.startswith("==="):
            cur = None
            continue
        if cur is None:
            continue
        m = re.match(r"^\s+\[([0-9a-f]+)\]\s*$", line)
        if m:
            cur[int(m.group(1), 16)] = True
            continue
        m = re.match(r"^\s{3}([0-9a-f]{16})(\s+\(cpu (\d+) cache\))?\s*$", line)
        if m:
            cur[int(m.group(1), 16)] = False
            if m.group(3) is not None:
                cpus.setdefault(cur_name, {})[int(m.group(1), 16)] = int(m.group(3))
    return out, cpus


def check_objects(check, cap, od, cd, drgn):
    raw = os.path.join(cd, "oracles", "crash.census.raw")
    if not check(os.path.exists(raw), f"{cap}: crash's kmem -S (oracles/crash.census.raw) missing"):
        return
    cr, crcpu = parse_crash_objects(open(raw).read())
    totals = {}
    tsv = os.path.join(cd, "oracles", "crash.vmcore.elf.tsv")
    if check(os.path.exists(tsv), f"{cap}: crash's kmem -s on vmcore.elf (oracles/crash.vmcore.elf.tsv) missing"):
        for line in open(tsv).read().splitlines()[1:]:
            t = line.split("\t")
            totals[t[0]] = (int(t[4]), int(t[3]))
    for c in OBJECT_CACHES:
        for nd in ("", "nodebug."):
            tag = f"{nd}slab_objects_{c}"
            p = os.path.join(od, f"vmcore.elf.{tag}")
            rcp = p + ".census-rc"
            rc = open(rcp).read().strip() if os.path.exists(rcp) else "not run"
            if not check(rc == "0", f"{cap}: kvmstat {'' if nd else '-N vmlinux '}slab --objects {c} "
                         f"--json exit {rc}", open(p + ".err").read()[-300:] if os.path.exists(p + ".err") else ""):
                continue
            j = load_json(check, f"{cap}: slab --objects {c} --json", p)
            if j is None:
                continue
            objs = j.get("objects") or []
            mine = {hexint(o.get("address")): o.get("allocated") for o in objs}
            want = cr.get(c, {})
            # crash's kmem -S lists the CPU and partial slabs (SLUB keeps no
            # list of full ones): each of its objects must be kvmstat's in the
            # same state; kvmstat's totals must be crash's kmem -s row.
            diff = [a for a, v in want.items() if mine.get(a) is not v]
            check(len(want) > 0 and not diff and j.get("cache") == c,
                  f"{cap}: slab --objects {c} ({'no vmlinux' if nd else 'vmlinux'}): {len(diff)} of "
                  f"crash's {len(want)} kmem -S objects differ", str([hex(a) for a in diff[:4]]))
            if drgn is not None:
                dw = {int(a, 16): v for a, v in (drgn.get("objects") or {}).get(c, [])}
                dd = set(mine.items()) ^ set(dw.items())
                check(dw and not dd, f"{cap}: slab --objects {c} ({'no vmlinux' if nd else 'vmlinux'}): "
                      f"{len(mine)} objects vs drgn's {len(dw)} (every PG_slab page), {len(dd)} differ",
                      str(sorted(hex(a) for a, _ in dd)[:4]))
            row = totals.get(c)
            got = (len(mine), sum(1 for v in mine.values() if v))
            check(row is not None and got == row,
                  f"{cap}: slab --objects {c} ({'no vmlinux' if nd else 'vmlinux'}): objects, allocated "
                  f"{got} vs crash kmem -s TOTAL, ALLOCATED {row}")
            mcpu = {hexint(o.get("address")): o.get("cpu") for o in objs}
            wc = crcpu.get(c, {})
            bad = [f"{hex(a)} cpu {mcpu.get(a)} vs crash {n}" for a, n in wc.items() if mcpu.get(a) != n]
            check(not bad, f"{cap}: slab --objects {c} ({'no vmlinux' if nd else 'vmlinux'}): "
                  f"{len(bad)} of the {len(wc)} objects crash puts in a CPU's cache differ", "; ".join(bad[:4]))


def crash_sections(raw):
    out, cur = {}, None
    for line in raw.splitlines():
        m = re.match(r"^=== (.*) ===$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None:
            cur.append(line)
    return out


def parse_crash_census(raw):
    """kmem -i (pages), -z (per zone), -f (free blocks per zone and order),
    -v (vmap areas) from crash.census.raw."""
    sec = crash_sections(raw)
    c = {"i": {}, "z": [], "f": {}, "v": set()}
    for line in sec.get("kmem -i", []):
        m = re.match(r"^\s*([A-Z][A-Z ]+?)\s+(\d+)\s", line)
        if m:
            c["i"][m.group(1)] = int(m.group(2))
    z = None
    for line in sec.get("kmem -z", []):
        m = re.match(r'^NODE: (\d+)\s+ZONE: (\d+)\s+ADDR: \S+\s+NAME: "(\S+)"', line)
        if m:
            z = {"node": int(m.group(1)), "zone": m.group(3)}
            c["z"].append(z)
            continue
        if z is None:
            continue
        for k, f in (("SIZE", "spanned"), ("PRESENT", "present")):
            m = re.search(k + r": (\d+)", line)
            if m:
                z[f] = int(m.group(1))
        m = re.search(r"MIN/LOW/HIGH: (\d+)/(\d+)/(\d+)", line)
        if m:
            z["min"], z["low"], z["high"] = (int(x) for x in m.groups())
        m = re.match(r"^\s*NR_FREE_PAGES: (\d+)", line)
        if m:
            z["pages_free"] = int(m.group(1))
    zone = None
    for line in sec.get("kmem -f", []):
        m = re.match(r"^\s+\d+\s+(\S+)\s+\d+\s+\d+\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+", line)
        if m:
            zone = m.group(1)
            c["f"][zone] = {}
            continue
        m = re.match(r"^\s+(\d+)\s+\d+k\s+[0-9a-f]+\s+(\d+)\s+(\d+)\s*$", line)
        if m and zone is not None:
            o = int(m.group(1))
            c["f"][zone][o] = c["f"][zone].get(o, 0) + int(m.group(2))
    for line in sec.get("kmem -v", []):
        m = re.match(r"^[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+) - ([0-9a-f]+)\s+(\d+)$", line)
        if m:
            c["v"].add((int(m.group(1), 16), int(m.group(2), 16)))
    return c


def check_crash_census(check, cap, od, cd):
    """kvmstat on vmcore.elf against crash's kmem -i, -z, -f, -v on it."""
    raw = os.path.join(cd, "oracles", "crash.census.raw")
    if not check(os.path.exists(raw), f"{cap}: crash's census (oracles/crash.census.raw) missing"):
        return
    c = parse_crash_census(open(raw).read())
    check(c["i"].get("TOTAL MEM") and c["z"] and c["f"] and c["v"],
          f"{cap}: crash.census.raw: kmem -i/-z/-f/-v tables not all parsed")

    def j(tag):
        p = os.path.join(od, f"vmcore.elf.{tag}")
        try:
            return json.load(open(p))
        except (OSError, ValueError):
            return None     # run_ok/load_json already failed it
    mem = j("mem___json")
    if mem is not None:
        mi = mem.get("meminfo", {})
        got = (mi.get("MemTotal"), mi.get("MemFree"))
        want = (c["i"].get("TOTAL MEM", -1) * 4, c["i"].get("FREE", -1) * 4)
        check(got == want, f"{cap}: mem --json MemTotal, MemFree vs crash kmem -i", f"{got} vs {want}")
    zi = j("zoneinfo___json")
    if zi is not None:
        byk = {(z.get("node"), z.get("zone")): z for z in zi.get("zones", [])}
        bad = []
        for z in c["z"]:
            m = byk.get((z["node"], z["zone"]), {})
            for f in ("spanned", "present", "min", "low", "high", "pages_free"):
                if f in z and m.get(f) != z[f]:
                    bad.append(f"{z['zone']} {f} {m.get(f)} vs crash {z[f]}")
        check(not bad, f"{cap}: zoneinfo --json vs crash kmem -z: {len(bad)} differ", "; ".join(bad[:6]))
    bi = j("buddyinfo___json")
    if bi is not None:
        bad = []
        for z in bi.get("zones", []):
            want = c["f"].get(z.get("zone"), {})
            got = {o: n for o, n in enumerate(z.get("free") or [])}
            if {o: n for o, n in got.items() if n} != {o: n for o, n in want.items() if n}:
                bad.append(f"{z.get('zone')} {z.get('free')} vs crash {want}")
        check(not bad and bi.get("zones"), f"{cap}: buddyinfo --json vs crash kmem -f", "; ".join(bad[:3]))
    vm = j("vmalloc___json")
    if vm is not None:
        mine = {(hexint(a.get("start")), hexint(a.get("end"))) for a in vm.get("areas", [])}
        miss = c["v"] - mine
        check(not miss, f"{cap}: vmalloc --json: {len(miss)} of crash's {len(c['v'])} kmem -v areas missing",
              str([(hex(a), hex(b)) for a, b in sorted(miss)[:4]]))


def check_census(check, cap, cd, od, dumps):
    """All census checks of one capture. Returns a summary line."""
    reads = {n: guest_reads(cd, n) for n in CENSUS_FILES}
    for n, r in reads.items():
        check(len(r) >= 2, f"{cap}: the guest's census reads of /proc/{n} (census/1,2,A) missing "
              "(capture.sh version 6 makes them)")
    if len(reads["meminfo"]) < 2:
        return f"{cap}: census not checked (no guest reads)"
    drift = {n: sum(1 for i in range(len(r[0])) if len({len(x) for x in r}) == 1 and
                    len({x[i] for x in r}) > 1) for n, r in reads.items() if r}
    drgn = load_json(check, f"{cap}: drgn's census (oracles/census.drgn.json)",
                     os.path.join(cd, "oracles", "census.drgn.json"))
    crash_dir = os.path.join(cd, "oracles", "crash.whatis")
    check(os.path.isdir(crash_dir), f"{cap}: crash's kmem ADDR answers (oracles/crash.whatis/) missing")
    live_lines = set()
    for d in dumps:
        mdf = d.startswith("vmcore.mdf")
        for nd in ("", "nodebug."):
            def path(tag):
                return os.path.join(od, f"{d}.{nd}{tag}")
            dd = d + (" without -N" if nd else "")
            if run_ok(check, cap, od, d, nd + "mem___json", mdf):
                j = load_json(check, f"{cap}: mem --json on {dd}", path("mem___json"))
                if j is not None:
                    live_lines |= set(check_mem(check, cap, dd, j, reads["meminfo"], drgn) or [])
            if run_ok(check, cap, od, d, nd + "mem", mdf):
                check_text_lines(check, f"{cap}: mem on {dd} vs /proc/meminfo",
                                 open(path("mem")).read(), reads["meminfo"])
            if run_ok(check, cap, od, d, nd + "buddyinfo", mdf):
                check_text_lines(check, f"{cap}: buddyinfo on {dd} vs /proc/buddyinfo",
                                 open(path("buddyinfo")).read(), reads["buddyinfo"])
            if run_ok(check, cap, od, d, nd + "buddyinfo___json", mdf) and drgn is not None:
                j = load_json(check, f"{cap}: buddyinfo --json on {dd}", path("buddyinfo___json"))
                if j is not None:
                    check_buddy_json(check, cap, dd, j, drgn)
            if run_ok(check, cap, od, d, nd + "zoneinfo___json", mdf):
                j = load_json(check, f"{cap}: zoneinfo --json on {dd}", path("zoneinfo___json"))
                if j is not None:
                    check_zoneinfo(check, cap, dd, j, reads["zoneinfo"], drgn)
            if run_ok(check, cap, od, d, nd + "vmalloc", mdf):
                check_text_lines(check, f"{cap}: vmalloc on {dd} vs /proc/vmallocinfo",
                                 open(path("vmalloc")).read(), reads["vmallocinfo"])
            if run_ok(check, cap, od, d, nd + "vmalloc___json", mdf):
                j = load_json(check, f"{cap}: vmalloc --json on {dd}", path("vmalloc___json"))
                if j is not None:
                    check_vmalloc_json(check, cap, dd, j, reads["vmallocinfo"], drgn)
            if run_ok(check, cap, od, d, nd + "whatis___json__", mdf) and drgn is not None:
                j = load_json(check, f"{cap}: whatis --json on {dd}", path("whatis___json__"))
                if j is not None:
                    check_whatis(check, cap, dd, j, drgn, crash_dir)
    check_objects(check, cap, od, cd, drgn)
    check_crash_census(check, cap, od, cd)
    t = os.path.join(od, "vmcore.elf-paging.whatis___json__.time")
    wt = "?"
    if os.path.exists(t):       # GNU time: "[Command exited ...]\nSECONDS KB"
        last = open(t).read().strip().splitlines()[-1:]
        wt = last[0].split()[0] if last and "exited" not in "".join(open(t).read().splitlines()[:1]) else \
            f"{last[0].split()[0]} (failed)" if last else "?"
    dt = (drgn or {}).get("seconds", {})
    return (f"{cap}: census drift between the guest's reads: "
            + ", ".join(f"{n} {v} lines" for n, v in drift.items())
            + f"; meminfo lines kvmstat calls live: {', '.join(sorted(live_lines)) or 'none'}"
            + f"; whatis x{len((drgn or {}).get('sample', []))} {wt} s (drgn load+sample "
            f"{dt.get('load', '?')}+{dt.get('sample', '?')} s)")


def selftest(cd):
    """The comparators on answers made from the oracles themselves (a
    stand-in kvmstat that answers exactly what the guest, drgn and crash
    say): every check must pass; then a few wrong answers must each fail."""
    import tempfile
    res = {"passed": 0, "failed": 0, "msgs": []}

    def check(ok, what, detail=""):
        res["passed" if ok else "failed"] += 1
        if not ok:
            res["msgs"].append(f"{what}: {detail}"[:300])
        return ok
    drgn = json.load(open(os.path.join(cd, "oracles", "census.drgn.json")))
    reads = {n: guest_reads(cd, n) for n in CENSUS_FILES}
    od = tempfile.mkdtemp(prefix="kvs-census-selftest.")
    d = "vmcore.elf"
    g2 = reads["meminfo"][1]
    mem = {"schema": "kvmstat/1", "meminfo": parse_meminfo(g2)}
    mem["meminfo"].update(drgn["meminfo"])
    # zones: the guest's second read, drgn's exact counters over it
    gzi = {(g["node"], g["zone"]): g for g in parse_zoneinfo(reads["zoneinfo"][1])}
    zones = []
    for dz in drgn["zones"]:
        g = gzi.get((dz["node"], dz["zone"]), {})
        z = dict(dz)
        z["stats"] = {**g.get("stats", {}), **dz["stats"]}
        z["node_stats"] = g.get("node_stats", {})
        z["protection"] = g.get("protection")
        zones.append(z)
    buddy = {"schema": "kvmstat/1", "zones": [{"node": z["node"], "zone": z["zone"], "free": z["free"]}
                                              for z in drgn["zones"] if z["populated"]]}
    areas = [{"start": hex(a["start"]), "end": hex(a["end"]), "size": a["size"], "caller": a["caller"],
              "pages": a["pages"]} for a in parse_vmallocinfo(reads["vmallocinfo"][-1])]
    whatis = []
    for i, e in enumerate(drgn["sample"]):
        a = {"address": e["address"], "kind": e["expect"]}
        if e["expect"] == "slab" and e.get("cache"):
            a.update(cache=e["cache"], object=e["object"], allocated=e["allocated"],
                     offset=int(e["address"], 16) - int(e["object"], 16))
        elif e["expect"] == "slab":
            c = parse_crash_kmem(open(os.path.join(cd, "oracles", "crash.whatis", str(i + 1))).read())
            if "object" in c:
                a.update(cache=c["cache"], object=hex(c["object"]), allocated=c["allocated"])
        for k in ("pfn", "area_start", "area_end", "pid", "symbol"):
            if k in e:
                a[k] = e[k]
        whatis.append(a)
    cr, crcpu = parse_crash_objects(open(os.path.join(cd, "oracles", "crash.census.raw")).read())
    files = {"mem___json": json.dumps(mem), "mem": "\n".join(reads["meminfo"][1]) + "\n",
             "buddyinfo": "\n".join(reads["buddyinfo"][1]) + "\n",
             "buddyinfo___json": json.dumps(buddy),
             "zoneinfo___json": json.dumps({"schema": "kvmstat/1", "zones": zones}),
             "vmalloc": "\n".join(reads["vmallocinfo"][1]) + "\n",
             "vmalloc___json": json.dumps({"schema": "kvmstat/1", "areas": areas}),
             "whatis___json__": json.dumps({"schema": "kvmstat/1", "addresses": whatis})}
    for nd in ("", "nodebug."):
        for tag, text in files.items():
            open(os.path.join(od, f"{d}.{nd}{tag}"), "w").write(text)
            open(os.path.join(od, f"{d}.{nd}{tag}.census-rc"), "w").write("0\n")
        for c in OBJECT_CACHES:
            p = os.path.join(od, f"{d}.{nd}slab_objects_{c}")
            open(p, "w").write(json.dumps({"schema": "kvmstat/1", "cache": c, "objects": [
                {"address": a, "allocated": v, "cpu": crcpu.get(c, {}).get(int(a, 16))}
                for a, v in drgn["objects"].get(c, [])]}))
            open(p + ".census-rc", "w").write("0\n")
    line = check_census(check, "selftest", cd, od, [d])
    good = dict(res)
    print(line)
    print(f"selftest, oracle answers: {good['passed']} passed, {good['failed']} failed")
    for m in good["msgs"]:
        print("  FAIL", m)
    # Wrong answers: each must make a check fail.
    wrong = 0
    for tag, bad in (("mem", files["mem"].replace("MemTotal:", "MemTotaL:")),
                     ("buddyinfo", files["buddyinfo"].replace(" 1 ", " 2 ", 1)),
                     ("whatis___json__", files["whatis___json__"].replace('"allocated": true', '"allocated": false', 1)),
                     ("mem___json", files["mem___json"].replace('"MemFree": ', '"MemFree": 1', 1))):
        open(os.path.join(od, f"{d}.{tag}"), "w").write(bad)
        res.update(passed=0, failed=0, msgs=[])
        check_census(check, "selftest", cd, od, [d])
        caught = res["failed"] > 0
        wrong += not caught
        print(f"selftest, wrong {tag}: {'caught' if caught else 'NOT CAUGHT'} ({res['failed']} failed)")
        open(os.path.join(od, f"{d}.{tag}"), "w").write(files[tag])
    import shutil
    shutil.rmtree(od)
    return 1 if good["failed"] or wrong else 0


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--selftest":
        sys.exit(selftest(sys.argv[2]))
    sys.exit("usage: check_census.py --selftest CAPDIR (the checks run from check_kvmstat.py)")
