#!/usr/bin/env python3
"""check_partial_freebsd.py - a partial FreeBSD dump gives a partial answer.
Every --json document (malloc, zone, their --libxo forms) is checked against
docs/kvmstat-1.schema.json too.

Copies of the fixtures' dumps (fbsd14 minidump v3, fbsd12 and fbsd11
minidump v2, fbsd5 ELF) with chosen physical pages taken out (their bit
cleared and their data dropped; in the ELF a hole cut in its PT_LOAD), the
pages found from the generator's own model (truth.json "v2p" and
malloc "places", never read back with kvmstat):

  malloc name      a page holding a type's name but no malloc_type
  malloc counters  a page holding a type's statistics but no malloc_type
  malloc cut       the page of a malloc_type in the middle of kmemstatistics
  zone counts      a page holding one of a zone's full buckets or its per-CPU
                   caches, or one CPU's counter(9) page (14, 12; on 11 the
                   model has no such page apart from a later keg or zone)
  zone cut         the page of a zone (14, 12, 11)

For malloc(9) the rows expected are computed from the places: the list is
cut at the first malloc_type whose struct lies on a removed page, and a row
has its name / counts null when its name / counters do; every other row
equals the truth exactly.  For UMA the zones expected are computed from
the model's lists (uma "lists": a keg or zone on a removed page cuts its
list), the hit zone is flagged, every row not flagged equals the truth, and
a flagged one shows null for its counts.  Each case: exit status 1, the "answer is incomplete"
line and a warning naming the cause (address and physical page); text shows
"?", CSV empty fields.  A missing fixture or truth fails.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
# kvmtop, when the build has it (meson -Dtui): its rows show ? too.
KVMTOP = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "tui", "kvmtop")
PAGE = 4096
checks = failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def num(x):
    return int(x, 16) if isinstance(x, str) else x


# ---------------------------------------------------------------- dumps
def minidump_drop(src, dst, pas):
    """Copy minidump src to dst without the physical pages pas."""
    b = bytearray(open(src, "rb").read())
    ver, msgsz, bmsz, pmsz = struct.unpack_from("<IIII", b, 24)
    rnd = lambda x: (x + PAGE - 1) & ~(PAGE - 1)
    off = PAGE + rnd(msgsz)
    bit_of = None
    if ver == 3:
        availsz = struct.unpack_from("<I", b, 64)[0]
        ranges = []
        for i in range(0, availsz, 16):
            s, e = struct.unpack_from("<QQ", b, off + i)
            if s == 0 and e == 0:
                break
            ranges.append((s, e))
        off += rnd(availsz)

        def bit_of(pfn):
            base = 0
            for s, e in ranges:
                if s // PAGE <= pfn < (e + PAGE - 1) // PAGE:
                    return base + pfn - s // PAGE
                base += (e + PAGE - 1) // PAGE - s // PAGE
            raise ValueError("pfn 0x%x outside the dump's ranges" % pfn)
    else:
        bit_of = lambda pfn: pfn
    bm = off
    data = bm + rnd(bmsz) + rnd(pmsz)
    bits = sorted({bit_of(pa // PAGE) for pa in pas}, reverse=True)
    for bit in bits:
        assert b[bm + bit // 8] >> (bit % 8) & 1, "page not in the dump to begin with"
        idx = sum(bin(x).count("1") for x in b[bm:bm + bit // 8]) + \
            bin(b[bm + bit // 8] & ((1 << (bit % 8)) - 1)).count("1")
        del b[data + idx * PAGE:data + (idx + 1) * PAGE]
        b[bm + bit // 8] &= ~(1 << (bit % 8)) & 0xff
    open(dst, "wb").write(b)


def elf_drop(src, dst, pas):
    """Copy ELF core src to dst with a hole at each physical page of pas
    (its PT_LOAD split around it; the data stays where it is)."""
    b = bytearray(open(src, "rb").read())
    phoff, = struct.unpack_from("<Q", b, 32)
    phnum, = struct.unpack_from("<H", b, 56)
    phs = [list(struct.unpack_from("<IIQQQQQQ", b, phoff + 56 * i)) for i in range(phnum)]
    for pa in sorted(pas):
        out = []
        for ph in phs:
            typ, fl, o, va, p, fs, ms, al = ph
            if typ == 1 and p <= pa < p + fs:
                if pa > p:
                    out.append([typ, fl, o, va, p, pa - p, pa - p, al])
                if pa + PAGE < p + fs:
                    d = pa + PAGE - p
                    out.append([typ, fl, o + d, va + d if va else 0, pa + PAGE, fs - d, fs - d, al])
            else:
                out.append(ph)
        phs = out
    first_data = min(ph[2] for ph in phs if ph[0] == 1)
    assert phoff + 56 * len(phs) <= first_data, "no room for the split program headers"
    for i, ph in enumerate(phs):
        struct.pack_into("<IIQQQQQQ", b, phoff + 56 * i, *ph)
    struct.pack_into("<H", b, 56, len(phs))
    open(dst, "wb").write(b)


def v2p_of(truth):
    v = truth["v2p"]
    lo, hi, base = (num(x) for x in v["image"])
    heap = {int(k, 16): num(pa) for k, pa in v["heap_pages"].items()}

    def v2p(va):
        if lo <= va < hi:
            return va - base
        pg = va & ~(PAGE - 1)
        return heap[pg] + (va & (PAGE - 1))
    return v2p


def names_page(err, gone):
    """Whether a warning names a physical address on a removed page (the
    minidump reader says "physical page 0x...", the ELF one "physical 0x...")."""
    return any((int(a, 16) & ~(PAGE - 1)) in gone
               for a in re.findall(r"physical (?:page )?0x([0-9a-f]+)", err))


def kvmtop_rows(kernel, core, view):
    """kvmtop's batch frame of a view, addresses shown: {address: line}."""
    p = subprocess.run([KVMTOP, "-b", "-n", "1", "--width", "200", "-a", "--view", view, "-N",
                        kernel, "-M", core], capture_output=True, text=True, timeout=120)
    out = {}
    for line in p.stdout.splitlines():
        m = re.search(r" 0x([0-9a-f]{16}) ", line)
        if m:
            out[int(m.group(1), 16)] = line
    return out


def kvmtop_check(label, kernel, copy, view, addr, name_ok, counts_ok):
    if not os.path.exists(KVMTOP):
        return
    line = kvmtop_rows(kernel, copy, view).get(addr)
    if check(line is not None, "%s: kvmtop shows no row for 0x%x" % (label, addr)):
        cells = line.split()
        check((cells[0] == "?") == (not name_ok), "%s: kvmtop name cell %r" % (label, line))
        check(("?" in cells[2:]) == (not counts_ok), "%s: kvmtop figures %r" % (label, line))


def schema_check(label, kind, text):
    """The document against docs/kvmstat-1.schema.json's $defs[kind]
    (python3-jsonschema, which check_json_schema requires too)."""
    import jsonschema
    src = os.environ.get("KVS_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
    schema = json.load(open(os.path.join(src, "docs", "kvmstat-1.schema.json")))
    sub = dict(schema)
    del sub["anyOf"]
    sub["$ref"] = "#/$defs/" + kind
    errs = list(jsonschema.Draft202012Validator(sub).iter_errors(json.loads(text)))
    check(not errs, "%s: %s --json is not the schema's: %s" % (label, kind,
                                                              errs[0].message if errs else ""))


def run(kernel, core, *args):
    p = subprocess.run([KVMSTAT, "-N", kernel, "-M", core] + list(args), capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# --------------------------------------------------------------- malloc
def malloc_expect(places, gone):
    """Rows (by address) the model says a reader keeps, each with
    (name known, counts known), and whether the list is cut."""
    rows = {}
    for pl in places:
        if set(pl["header"]) & gone:
            return rows, True
        if pl["skipped"]:
            continue
        rows[num(pl["addr"])] = (not set(pl["name"]) & gone, not set(pl["counters"]) & gone)
    return rows, False


def malloc_case(label, kernel, core, dropper, truth, gone, tmp, cause):
    gen = truth["gen"]
    places = truth["malloc"]["places"]
    want, cut = malloc_expect(places, gone)
    copy = os.path.join(tmp, "partial")
    dropper(core, copy, gone)
    label = "%s malloc %s" % (label, cause)
    for args, kind in ((("--json", "--percpu", "malloc"), "malloc"),
                       (("--json", "--libxo", "malloc"), "malloc_libxo")):
        schema_check(label, kind, run(kernel, copy, *args)[1])
    rc, out, err = run(kernel, copy, "--json", "malloc")
    check(rc == 1, "%s: exit status %d, want 1 (%s)" % (label, rc, err.strip()))
    check("the answer is incomplete" in err, "%s: no 'incomplete' line: %r" % (label, err))
    check(names_page(err, gone), "%s: the warning names no removed page: %r" % (label, err))
    if cut:
        check("kmemstatistics is cut at" in err, "%s: no cut warning: %r" % (label, err))
    try:
        doc = json.loads(out)
    except ValueError:
        check(False, "%s: no JSON: %r" % (label, out[:200]))
        return
    got = {int(r["kaddr"], 16): r for r in doc["types"]}
    check(set(got) == set(want), "%s: rows %d, want %d (cut %s)" % (label, len(got), len(want), cut))
    truth_rows = {num(r["addr"]): r for r in truth["malloc"]["types"]}
    hit = 0
    for a, (name_ok, counts_ok) in want.items():
        r, t = got.get(a), truth_rows[a]
        if r is None:
            continue
        hit += not (name_ok and counts_ok)
        check(r["name"] == (t["name"] if name_ok else None),
              "%s: 0x%x name %r, want %r" % (label, a, r["name"], t["name"] if name_ok else None))
        want_counts = {"count": t["inuse"], "bytes": t["memuse_bytes"], "requests": t["numallocs"]}
        if gen >= 6:
            want_counts.update(memalloced=t["memalloced"], memfreed=t["memfreed"],
                               frees=t["numfrees"], sizemask=t["sizemask"], sizes=t["sizes"])
        for k, v in want_counts.items():
            check(r[k] == (v if counts_ok else None),
                  "%s: 0x%x %s %r, want %r" % (label, a, k, r[k], v if counts_ok else None))
        check(r.get("incomplete", False) == (not (name_ok and counts_ok)),
              "%s: 0x%x incomplete %r" % (label, a, r.get("incomplete")))
    check(hit > 0 or cut, "%s: the page chosen hit nothing (the test's own error)" % label)
    for a, (name_ok, counts_ok) in want.items():
        if not (name_ok and counts_ok) and (truth_rows[a]["numallocs"] or not counts_ok):
            kvmtop_check(label, kernel, copy, "malloc", a, name_ok, counts_ok)
            break
    # text: ? where the JSON has null; CSV: empty fields
    rc, out, err = run(kernel, copy, "malloc")
    check(rc == 1, "%s: text exit status %d" % (label, rc))
    if any(not c for _, c in want.values()):
        check(any(l.split()[1:4] == ["?", "?K", "?"] or l.split()[1:3] == ["?", "?K"]
                  for l in out.splitlines() if len(l.split()) > 3),
              "%s: no ? row in the text" % label)
    if any(not n and truth_rows[a]["numallocs"] for a, (n, _) in want.items()):
        check(any(l.split()[0] == "?" for l in out.splitlines() if l.split()),
              "%s: no ? name in the text" % label)
    rc, out, err = run(kernel, copy, "--csv", "malloc")
    check(rc == 1, "%s: csv exit status %d" % (label, rc))
    for line in out.splitlines()[1:]:
        f = line.rstrip("\r").split(",")
        a = int(f[1], 16) if len(f) > 1 and f[1].startswith("0x") else None
        if a in want and not want[a][1]:
            check(f[2:8] == [""] * 6, "%s: csv row 0x%x %r" % (label, a, f))
        if a in want:
            check((f[0] == "") == (not want[a][0]), "%s: csv name of 0x%x %r" % (label, a, f))


def pick_malloc(truth):
    """Pages for the three malloc cases, from the model: a name page and a
    counters page that hold no malloc_type (the fewest rows hit), and the
    page of a malloc_type halfway down the list."""
    places = truth["malloc"]["places"]
    headers = {p for pl in places for p in pl["header"]}
    out = {}
    for kind in ("name", "counters"):
        best = None
        for pl in places:
            for p in pl[kind]:
                if p in headers:
                    continue
                n = sum(p in q[kind] for q in places)
                if best is None or n < best[0]:
                    best = (n, p)
        if best is not None:
            out[kind] = best[1]
    mid = places[len(places) // 2]
    out["cut"] = mid["header"][0]
    return out


# ----------------------------------------------------------------- UMA
def span_pages(v2p, va, n):
    return {v2p(a) & ~(PAGE - 1) for a in range(va, va + n, PAGE)} | \
        {v2p(va + n - 1) & ~(PAGE - 1)}


def zone_expect(truth, v2p, gone):
    """The zones the model says a reader lists with the pages `gone` taken
    out (truth uma "lists": uma_kegs and each keg's zones, uma_cachezones,
    as linked): a keg or zone whose struct lies on a removed page cuts its
    list there.  Returns (addresses, cut)."""
    li = truth["uma"]["lists"]
    out, cut = [], False
    for kg, zs in li["kegs"]:
        if span_pages(v2p, num(kg), li["keg_size"]) & gone:
            cut = True
            break
        for z in zs:
            if span_pages(v2p, num(z), li["zone_size"]) & gone:
                cut = True
                break
            out.append(num(z))
    for z in li["cachezones"]:
        if span_pages(v2p, num(z), li["zone_size"]) & gone:
            cut = True
            break
        out.append(num(z))
    return out, cut


def zone_case(label, kernel, core, dropper, truth, v2p, page, tmp, cause, target):
    """Take `page` out and check the zone table: exactly the zones the model
    reaches (zone_expect), every one not flagged as the truth has it, every
    flagged one with null counts; the target zone (a bucket or its caches
    on the page) flagged."""
    copy = os.path.join(tmp, "partial")
    dropper(core, copy, {page})
    want, cut = zone_expect(truth, v2p, {page})
    label = "%s zone %s (page 0x%x)" % (label, cause, page)
    for args, kind in ((("--json", "--percpu", "zone"), "zone"),
                       (("--json", "--libxo", "zone"), "zone_libxo")):
        schema_check(label, kind, run(kernel, copy, *args)[1])
    rc, out, err = run(kernel, copy, "--json", "zone")
    check(rc == 1, "%s: exit status %d, want 1 (%s)" % (label, rc, err.strip()))
    check("the answer is incomplete" in err, "%s: no 'incomplete' line: %r" % (label, err))
    check(("a kernel list is cut" in err) == cut, "%s: cut %s, stderr %r" % (label, cut, err))
    check(names_page(err, {page}), "%s: the warning names no removed page: %r" % (label, err))
    try:
        doc = json.loads(out)
    except ValueError:
        check(False, "%s: no JSON: %r" % (label, out[:200]))
        return
    truth_rows = {num(z["addr"]): z for z in truth["uma"]["zones"]}
    got = {int(r["kaddr"], 16): r for r in doc["zones"]}
    check(set(got) == set(want), "%s: %d zones, the model reaches %d" % (label, len(got),
                                                                         len(want)))
    for a, r in got.items():
        t = truth_rows.get(a)
        if t is None:
            continue
        if r.get("incomplete"):
            check(r["name"] in (None, t["name"]), "%s: 0x%x name %r" % (label, a, r["name"]))
            for k in ("count", "free", "requests", "frees", "failures", "bytes"):
                check(r[k] is None or r["name"] is None,
                      "%s: 0x%x flagged, %s %r" % (label, a, k, r[k]))
            check(r["size"] == t["size"] and r["sleeps"] == t["sleeps"],
                  "%s: 0x%x size or sleeps" % (label, a))
            continue
        for k, tk in (("name", "name"), ("count", "count"), ("free", "free"),
                      ("requests", "numallocs"), ("frees", "numfrees"), ("size", "size"),
                      ("failures", "failures"), ("sleeps", "sleeps")):
            check(r[k] == t[tk], "%s: 0x%x %s %r, truth %r" % (label, a, k, r[k], t[tk]))
    if cause == "counts":
        r = got.get(target)
        check(r is not None and r.get("incomplete") is True and r["count"] is None,
              "%s: the zone 0x%x is not flagged: %r" % (label, target, r))
        rc, out, err = run(kernel, copy, "zone")
        check(rc == 1 and any(",       ?," in l for l in out.splitlines()),
              "%s: text has no ? row" % label)
        kvmtop_check(label, kernel, copy, "zones", target, r is not None and r["name"] is not None,
                     False)
        rc, out, err = run(kernel, copy, "--csv", "zone")
        rows = [l.rstrip("\r").split(",") for l in out.splitlines()[1:]]
        check(any(int(f[1], 16) == target and f[4:9] == [""] * 5 for f in rows if len(f) > 8),
              "%s: csv has no empty fields for 0x%x" % (label, target))


def zone_counts_pick(truth, v2p):
    """A page holding one of a zone's full buckets, or a later page of its
    allocation (its per-CPU caches), on which the model's walk is not cut
    before that zone: (page, zone)."""
    size = {num(a): n for a, n in truth["v2p"]["allocs"]}
    for z in truth["uma"]["zones"]:
        a = num(z["addr"])
        vas = [num(b) for dom in z["domain_buckets"] for b in dom]
        vas += list(range((a & ~(PAGE - 1)) + PAGE, a + size.get(a, 0), PAGE))
        for va in vas:
            p = v2p(va) & ~(PAGE - 1)
            if a in zone_expect(truth, v2p, {p})[0]:
                return p, a
    if truth["uma"]["layout"] == 13:
        # The bump allocator leaves no bucket apart from the kegs and zones
        # created after it: then one CPU's page of counter(9) slots, the
        # first region of a page per CPU allocated after the first keg
        # (mkcore_uma's counter()); every zone's counts are lost.
        first_keg = min(num(k) for k, _ in truth["uma"]["lists"]["kegs"])
        for a, n in truth["v2p"]["allocs"]:
            if num(a) > first_keg and n == (truth["mp_maxid"] + 1) * PAGE:
                p = v2p(num(a) + truth["cpus"][1] * PAGE) & ~(PAGE - 1)
                return p, num(truth["uma"]["zones"][0]["addr"])
    return None


def main():
    if not check(os.path.exists(KVMSTAT), "no kvmstat at %s" % KVMSTAT):
        return 1
    cases = (("fbsd14", "vmcore.minidump3", minidump_drop, True),
             ("fbsd12", "vmcore.minidump2", minidump_drop, True),
             ("fbsd11", "vmcore.minidump2", minidump_drop, True),
             ("fbsd5", "vmcore.elf", elf_drop, False))
    with tempfile.TemporaryDirectory() as tmp:
        for fixture, core, dropper, uma in cases:
            tp = os.path.join(FIX, fixture, "truth.json")
            cp = os.path.join(FIX, fixture, core)
            if not check(os.path.exists(tp) and os.path.exists(cp), "%s: no %s or truth" %
                         (fixture, core)):
                continue
            truth = json.load(open(tp))
            if not check("v2p" in truth and "places" in truth["malloc"],
                         "%s: truth.json has no v2p / malloc places (regenerate: "
                         "fixtures/gen/regen.sh)" % fixture):
                continue
            kernel = os.path.join(FIX, fixture, "kernel")
            picks = pick_malloc(truth)
            label = "%s %s" % (fixture, core)
            for cause in ("name", "counters", "cut"):
                if cause == "counters" and truth["gen"] == 5:
                    continue            # 5.x keeps its counters in the malloc_type
                if check(cause in picks, "%s: the model has no page for %s" % (label, cause)):
                    malloc_case(label, kernel, cp, dropper, truth, {picks[cause]}, tmp, cause)
            if uma:
                v2p = v2p_of(truth)
                if not check("lists" in truth["uma"], "%s: truth.json has no uma lists" % label):
                    continue
                pick = zone_counts_pick(truth, v2p)
                if truth["uma"]["layout"] != 11 and check(
                        pick is not None, "%s: the model has no page for a zone's counts" %
                        label):
                    zone_case(label, kernel, cp, dropper, truth, v2p, pick[0], tmp, "counts",
                              pick[1])
                zones = truth["uma"]["zones"]
                mid = num(zones[len(zones) // 2]["addr"])
                zone_case(label, kernel, cp, dropper, truth, v2p, v2p(mid) & ~(PAGE - 1), tmp,
                          "cut", mid)
    print("%d checks, %d failures" % (checks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
