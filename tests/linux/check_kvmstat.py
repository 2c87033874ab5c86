#!/usr/bin/env python3
"""Compare kvmstat's answers on real Linux dumps with truth that is not ours.

    check_kvmstat.py CAPTURES_DIR KVMSTAT_OUT_DIR CAPTURE...

For each capture (made by capture.sh, oracles by run_oracles.sh, kvmstat's
outputs by realcore.sh):
  - every kvmstat run succeeded;
  - every dump format of one moment gives the same answers (physical ELF,
    paging ELF, the guest's RAM file when there is one, and the
    kdump-compressed forms: QEMU's flattened stream, it rebuilt, and
    makedumpfile's filtered zlib and lzo outputs);
  - per cache, num_objs, num_slabs, active_objs and the exactly allocated
    objects (and object_size, size, objects_per_slab) equal drgn's;
  - they equal the guest's /proc/slabinfo wherever drgn's do; a cache that
    changed between the guest's print and the dump is reported by name;
  - ALLOCATED / TOTAL / SLABS equal crash's `kmem -s`, and `kvmstat slab
    --format crash` is byte-identical to crash's table;
  - `kvmstat dmesg` is byte-identical to crash's `log`;
  - `kvmstat info` names the kernel the guest's /proc/version names.
Prints one line per failed check, a summary per capture, and finally
"linux-realcore: N passed, M failed".
"""
import json
import os
import sys

passed = 0
failed = 0
# The kdump-compressed files capture.sh makes (those present are compared).
KDUMPS = ["vmcore.kdump-zlib.flat", "vmcore.kdump-zlib", "vmcore.kdump-zlib.uts",
          "vmcore.mdf-d31", "vmcore.mdf-lzo", "vmcore.mdf-zstd"]


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


def main():
    capdir, outdir, caps = sys.argv[1], sys.argv[2], sys.argv[3:]
    # kvmstat's JSON key for the exactly allocated objects is "count" (the
    # key every allocator's rows share); the drgn oracle's is "allocated".
    fields = ["num_objs", "num_slabs", "active_objs", "allocated", "object_size", "size",
              "objects_per_slab"]
    for cap in caps:
        cd, od = os.path.join(capdir, cap), os.path.join(outdir, cap)
        dumps = ["vmcore.elf", "vmcore.elf-paging"]
        if os.path.exists(os.path.join(cd, "mem.ram")):
            dumps.append("mem.ram")
        for d in KDUMPS:
            if os.path.exists(os.path.join(cd, d)):
                dumps.append(d)
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
                    ja, jb = json.load(open(a)), json.load(open(b))
                    for j in (ja, jb):
                        j.pop("kernel", None)
                        j.pop("dwarf_version", None)
                    ok = ja == jb
                else:
                    ok = read(a) == read(b)
                check(ok, f"{cap}: {tag.strip('_')} on {d} without -N differs from -N vmlinux")
        # The dump's BTF and the vmlinux DWARF agree on the walkers' structs.
        tb, td = os.path.join(od, "types.btf-dump"), os.path.join(od, "types.dwarf")
        check(os.path.exists(tb) and read(tb) == read(td) and len(read(tb)) > 1000,
              f"{cap}: kvmstat type from the dump's BTF differs from the vmlinux DWARF")
        byname = {c["name"]: c for c in ours["caches"]}
        # drgn, the exact arithmetic on the same dump.
        drgn = json.load(open(os.path.join(cd, "oracles", "drgn.vmcore.elf-paging.json")))
        dnames = {c["name"] for c in drgn["caches"]}
        check(dnames == set(byname), f"{cap}: cache names differ from drgn's",
              f"only ours {sorted(set(byname) - dnames)[:5]}, only drgn's "
              f"{sorted(dnames - set(byname))[:5]}")
        for c in drgn["caches"]:
            o = byname.get(c["name"])
            if o is None:
                continue
            ok = {f: o.get("count" if f == "allocated" else f) for f in fields}
            bad = [f"{f} {ok[f]} vs {c[f]}" for f in fields if ok[f] != c.get(f)]
            check(not bad, f"{cap}: {c['name']} differs from drgn", ", ".join(bad))
            check(o["kaddr"] == "0x%016x" % int(c["address"], 16),
                  f"{cap}: {c['name']} address", f"{o['kaddr']} vs {c['address']}")
        # The guest's own /proc/slabinfo, printed just before the stop.
        gt = parse_slabinfo(os.path.join(cd, "slabinfo.final"))
        ourtext = parse_slabinfo(os.path.join(od, "vmcore.elf.slab"))
        changed = []
        for name, g in gt.items():
            d = next((c for c in drgn["caches"] if c["name"] == name), None)
            peer_same = d is not None and all(
                d[f] == g[f] for f in ["active_objs", "num_objs", "num_slabs", "size",
                                       "objects_per_slab"])
            if not peer_same:
                changed.append(name)
                continue
            check(name in ourtext and ourtext[name]["line"] == g["line"],
                  f"{cap}: slabinfo line of {name}",
                  f"ours '{ourtext.get(name, {}).get('line')}' guest '{g['line']}'")
        # crash: kmem -s figures and its table byte for byte.
        cr = parse_crash_tsv(os.path.join(cd, "oracles", "crash.vmcore.elf.tsv"))
        for name, r in cr.items():
            o = byname.get(name)
            check(o is not None and (o["count"], o["num_objs"], o["num_slabs"]) ==
                  (int(r["allocated"]), int(r["total"]), int(r["slabs"])),
                  f"{cap}: {name} differs from crash kmem -s")
        check(read(os.path.join(od, "vmcore.elf.slab___format_crash")) ==
              read(os.path.join(cd, "oracles", "crash.kmem.raw")),
              f"{cap}: kvmstat slab --format crash is not crash's kmem -s table")
        check(read(os.path.join(od, "vmcore.elf.dmesg")) ==
              read(os.path.join(cd, "oracles", "crash.log.raw")),
              f"{cap}: kvmstat dmesg is not crash's log")
        info = json.load(open(os.path.join(od, "vmcore.elf.info___json")))
        version = open(os.path.join(cd, "gt", "version")).read().strip()
        check(info.get("version") == version, f"{cap}: info version",
              f"{info.get('version')!r} vs /proc/version {version!r}")
        times = []
        for d in dumps:
            t = open(os.path.join(od, f"{d}.slab___json.time")).read().split()
            times.append(f"{d} {float(t[0]):.2f} s {int(t[1]) // 1024} MB")
        print(f"{cap}: {len(byname)} caches; {failed - before} failed checks; "
              f"changed between the guest's print and the dump: {changed or 'none'}; "
              f"slab --json: {'; '.join(times)}")
    print(f"linux-realcore: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
