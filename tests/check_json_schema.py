#!/usr/bin/env python3
"""check_json_schema.py - every kvmstat --json document, of every command on
every fixture dump, validated against docs/kvmstat-1.schema.json (the
schema docs/json.md describes) with python3-jsonschema.

A command that fails on a dump (slab on FreeBSD, malloc on Linux) must
still print a valid document: the error document, with a non-zero exit.
Also checked: names with control bytes are JSON escapes (the parsed string
holds the byte, the text holds no literal "\\x1b"); --libxo documents use
FreeBSD vmstat's keys and agree with the kvmstat/1 rows; --csv is RFC 4180
with the same rows as --json.

Counters in use (malloc and zone count and bytes, --libxo in-use,
memory-use and used, diff's _a and _b figures) are signed: a copy of the
FreeBSD 14 image whose "pci" type has more frees than allocations shows the
same negative figure in text, CSV, --libxo, JSON and diff.  A command of the
other kernel family (slab on FreeBSD; zone, malloc, probes, profil on Linux)
is refused in plain words, exit 1, error code "family".

Without python3-jsonschema the test fails, unless
KVS_ALLOW_MISSING_ORACLES=1 (exit 77).
"""
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SRC = os.environ.get("KVS_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
FIX = os.environ.get("KVS_FIXTURES", os.path.join(SRC, "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
failures = 0
checked = 0

FBSD = [("fbsd5", "fbsd5", "vmcore.elf"), ("fbsd11", "fbsd11", "mem.raw"),
        ("fbsd11", "fbsd11", "vmcore.minidump2"), ("fbsd12", "fbsd12", "vmcore.minidump2"),
        ("fbsd12", "fbsd12", "vmcore.minidump2.t2")] + \
    [("fbsd14", "fbsd14", c) for c in ("vmcore.minidump1", "vmcore.minidump2",
                                       "vmcore.minidump3", "vmcore.minidump3.t2",
                                       "vmcore.elf", "vmcore.kva.elf", "mem.raw")] + \
    [("fbsd14-s2", "fbsd14", "vmcore.minidump3"), ("fbsd14-s2", "fbsd14", "vmcore.elf")] + \
    [("fbsd14-arm64", "fbsd14-arm64", c) for c in ("vmcore.minidump1", "vmcore.minidump2",
                                                   "vmcore.minidump3", "vmcore.elf", "mem.raw")]
LINUX = [("linux-kaslr", "vmcore"), ("linux-kaslr", "mem.raw"), ("linux-nokaslr", "vmcore"),
         ("linux-hostile", "vmcore.loop")]
COMMANDS = [("info", "info"), ("dmesg", "dmesg"), ("malloc", "malloc"),
            ("malloc", "malloc --percpu"), ("malloc_libxo", "malloc --libxo"),
            ("zone", "zone"), ("zone", "zone --percpu"), ("zone_libxo", "zone --libxo"),
            ("profile", "profile"), ("probes", "probes"), ("probes", "probes --all"),
            ("profil", "profil"), ("slab", "slab"), ("slab", "slab --percpu")]


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


# Outputs that may still print plain text under --json (none: --version,
# help, gmon -o and rd -o print documents).
PENDING = set()


def run(args, env=None):
    p = subprocess.run([KVMSTAT] + args, capture_output=True, env=env)
    return p.returncode, p.stdout.decode("utf-8", "strict"), p.stderr.decode("utf-8", "replace")


def validator_for(schema, name, mod):
    sub = dict(schema)
    del sub["anyOf"]
    sub["$ref"] = "#/$defs/" + name
    return mod.Draft202012Validator(sub)


def validate(vals, name, args, allow_fail=True, env=None, pending=None):
    """Run kvmstat --json args; validate against name (or the error
    document when the command failed).  Returns (rc, document)."""
    global checked
    rc, out, err = run(["--json"] + args, env)
    try:
        doc = json.loads(out)
    except ValueError as e:
        if pending in PENDING:
            print("PENDING: %s prints no JSON yet: %r" % (" ".join(args), out[:80]))
            return rc, None
        check(False, "%s: not JSON (%s): %r %s" % (" ".join(args), e, out[:200], err[-200:]))
        return rc, None
    # A failure is the error document, except for the commands whose own
    # document lists what failed (rd's unreadable words, type's unknown
    # names) and exit 1.
    want = "error" if "error" in doc else name
    check(rc == 0 or want == "error" or doc.get("errors"),
          "%s exited %d with no error in its document" % (" ".join(args), rc))
    if rc != 0 and not allow_fail:
        check(False, "%s exited %d: %s" % (" ".join(args), rc, err[-300:]))
    errs = sorted(vals[want].iter_errors(doc), key=lambda e: list(e.path))
    check(not errs, "%s (%s): %s" % (" ".join(args), want, "; ".join(
        "%s: %s" % ("/".join(map(str, e.path)), e.message[:200]) for e in errs[:3])))
    check(rc != 0 or "error" not in doc, "%s: exit 0 with an error document" % " ".join(args))
    checked += 1
    return rc, doc


def check_negative(vals, ok, tmp):
    """A malloc type freed more than it allocated: one signed figure in
    every format (truth -65216 bytes, -3 in use)."""
    t = json.load(open(os.path.join(FIX, "fbsd14", "truth.json")))
    ty = [r for r in t["malloc"]["types"] if r["name"] == "pci"]
    check(len(ty) == 1, "fbsd14 truth has one malloc type pci")
    if len(ty) != 1:
        return
    ty = ty[0]
    with open(os.path.join(FIX, "fbsd14", "mem.raw"), "rb") as f:
        img = bytearray(f.read())
    # The first CPU's malloc_type_stats of pci (memalloced, memfreed,
    # numallocs, numfrees), found by its values: 65216 bytes and 3 frees more
    # than allocated in all.
    p = [c for c in ty["percpu"] if c["numallocs"]][0]
    old = struct.pack("<QQQQ", p["memalloced"], p["memfreed"], p["numallocs"], p["numfrees"])
    at = img.find(old)
    check(at >= 0 and img.find(old, at + 1) < 0, "pci's CPU %d statistics not found once in "
          "fbsd14/mem.raw" % p["cpu"])
    if at < 0:
        return
    img[at:at + 32] = struct.pack("<QQQQ", p["memalloced"],
                                  p["memfreed"] + ty["memuse_bytes"] + 65216, p["numallocs"],
                                  p["numfrees"] + ty["inuse"] + 3)
    neg = os.path.join(tmp, "neg.raw")
    with open(neg, "wb") as f:
        f.write(img)
    base = ["-N", os.path.join(FIX, "fbsd14", "kernel"), "-M", neg, "--raw"]
    rc, doc = validate(vals, "malloc", base + ["malloc"], allow_fail=False)
    row = [r for r in (doc or {}).get("types", []) if r["name"] == "pci"]
    check(row and row[0]["bytes"] == -65216 and row[0]["count"] == -3,
          "malloc --json: pci %s, wanted bytes -65216, count -3" % row)
    rc, doc = validate(vals, "malloc_libxo", base + ["malloc", "--libxo"], allow_fail=False)
    row = [r for r in (doc or {}).get("malloc-statistics", {}).get("memory", [])
           if r["type"] == "pci"]
    check(row and row[0]["memory-use"] == -64 and row[0]["in-use"] == -3,
          "malloc --libxo: pci %s, wanted memory-use -64 (K), in-use -3" % row)
    rc, out, _ = run(base + ["--csv", "malloc"])
    row = [r for r in csv.DictReader(io.StringIO(out, newline="")) if r["name"] == "pci"]
    check(rc == 0 and row and row[0]["bytes"] == "-65216" and row[0]["count"] == "-3",
          "malloc --csv: pci %s" % row)
    for fmt in ("5", "6", "14"):
        rc, out, _ = run(base + ["malloc", "--format", fmt])
        line = [ln.split() for ln in out.splitlines() if ln.split()[:1] == ["pci"]]
        check(rc == 0 and line and line[0][1:3] == ["-3", "-64K"],
              "malloc --format %s: pci %s, wanted InUse -3, MemUse -64K" % (fmt, line))
    rc, out, _ = run(base + ["malloc", "--sort", "memuse"])
    check(rc == 0 and out.splitlines()[-1].split()[0] == "pci",
          "malloc --sort memuse: a negative MemUse is not last")
    # diff: the type's bytes and count in B, signed, in text and JSON.
    d = ["-N", os.path.join(FIX, "fbsd14", "kernel"), "diff", os.path.join(FIX, "fbsd14",
                                                                         "mem.raw"), neg]
    rc, doc = validate(vals, "diff", d, allow_fail=False)
    row = [r for r in (doc or {}).get("rows", []) if r["name"] == "pci"]
    check(row and row[0]["bytes_b"] == -65216 and row[0]["count_b"] == -3 and
          row[0]["delta_bytes"] == -65216 - ty["memuse_bytes"],
          "diff --json: pci %s" % row)
    rc, out, _ = run(d)
    line = [ln.split() for ln in out.splitlines() if ln.split()[1:2] == ["pci"]]
    check(rc == 0 and line and line[0][3] == "-65216" and line[0][6] == "-3",
          "diff text: pci %s" % line)
    ok["malloc"] += 1


def check_cache(vals, ok, tmp):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    base = ["-N", os.path.join(FIX, "fbsd14", "kernel"), "-M",
            os.path.join(FIX, "fbsd14", "vmcore.minidump3")]
    rc, doc = validate(vals, "cache", ["cache"], allow_fail=False, env=env)
    check(doc is not None and doc["files"] == [], "cache of an empty directory: %s" % doc)
    run(base + ["malloc"], env)
    rc, doc = validate(vals, "cache", ["cache"], allow_fail=False, env=env)
    check(doc is not None and len(doc["files"]) == 1 and doc["files"][0]["valid"],
          "cache after one run: %s" % doc)
    rc, doc = validate(vals, "cache", ["cache", "--clear"], allow_fail=False, env=env)
    check(doc is not None and doc.get("removed") == 1, "cache --clear: %s" % doc)
    ok["cache"] += 1


def check_written(vals, ok, tmp):
    """--version, help, gmon -o and rd -o under --json."""
    base = ["-N", os.path.join(FIX, "fbsd14", "kernel"), "-M",
            os.path.join(FIX, "fbsd14", "vmcore.minidump3")]
    rc, doc = validate(vals, "version", ["--version"], pending="version")
    check(doc is None or (rc == 0 and doc.get("program") == "kvmstat"), "--version: %s" % doc)
    for args, n in ((["help"], None), (["--help"], None), (["help", "malloc"], 1)):
        rc, doc = validate(vals, "help", args, pending="help")
        check(doc is None or (rc == 0 and (n is None or len(doc["commands"]) == n)),
              "%s --json: %s" % (" ".join(args), doc))
    out = os.path.join(tmp, "gmon.out")
    rc, doc = validate(vals, "wrote", base + ["gmon", "-o", out], pending="gmon -o")
    check(doc is not None and doc["path"] == out and doc["bytes"] == os.path.getsize(out),
          "gmon -o --json: %s" % doc)
    out = os.path.join(tmp, "rd.bin")
    rc, doc = validate(vals, "wrote", base + ["rd", "kmemstatistics", "4", "-o", out],
                       pending="rd -o")
    check(doc is not None and rc == 0 and doc["path"] == out and doc["bytes"] == 32 and
          os.path.getsize(out) == 32 and doc["space"] == "virtual",
          "rd -o --json: %s" % doc)


def check_family(vals, ok):
    """A command of the other kernel family, refused in plain words."""
    fb = ["-N", os.path.join(FIX, "fbsd14", "kernel"), "-M",
          os.path.join(FIX, "fbsd14", "vmcore.minidump3")]
    lx = ["-N", os.path.join(FIX, "linux-kaslr", "vmlinux"), "-M",
          os.path.join(FIX, "linux-kaslr", "vmcore")]
    cases = [(fb, "slab", "`slab` reads Linux SLUB caches; this is a FreeBSD 14.1 kernel "
                          "(try `zone` or `malloc`)")]
    for c, what in (("zone", "FreeBSD UMA zones"), ("malloc", "FreeBSD malloc(9) types")):
        cases.append((lx, c, "`%s` reads %s; this is a Linux 6.1 kernel (try `slab`)" % (c, what)))
    for c in ("probes", "profil"):
        cases.append((lx, c, "`%s` reads FreeBSD " % c))
        cases.append((lx, c, "; this is a Linux 6.1 kernel (try `profile`)"))
    for base, c, want in cases:
        rc, out, err = run(base + [c])
        check(rc == 1 and want in err and "\n" not in err.rstrip("\n"),
              "%s on the other family: exit %d, said %r, wanted %r" % (c, rc, err, want))
        rc, doc = validate(vals, "error", base + [c])
        check(rc == 1 and doc is not None and doc["error"]["code"] == "family" and
              want in doc["error"]["message"], "%s --json on the other family: %s" % (c, doc))
    # The family's own commands still work.
    check(run(lx + ["slab"])[0] == 0 and run(fb + ["zone"])[0] == 0 and
          run(fb + ["malloc"])[0] == 0, "slab on Linux or zone/malloc on FreeBSD failed")


def main():
    try:
        import jsonschema
    except ImportError:
        if os.environ.get("KVS_ALLOW_MISSING_ORACLES") == "1":
            print("SKIPPED: python3-jsonschema is not installed")
            return 77
        print("FAIL: python3-jsonschema (the validator) is not installed")
        return 1
    schema = json.load(open(os.path.join(SRC, "docs", "kvmstat-1.schema.json")))
    jsonschema.Draft202012Validator.check_schema(schema)
    vals = {k: validator_for(schema, k, jsonschema) for k in schema["$defs"]}
    ok = {k: 0 for k in schema["$defs"]}

    for d, k, core in FBSD:
        base = ["-N", os.path.join(FIX, k, "kernel"), "-M", os.path.join(FIX, d, core)]
        if core == "mem.raw":
            base.append("--raw")
        for name, c in COMMANDS:
            rc, doc = validate(vals, name, base + c.split())
            ok[name if rc == 0 else "error"] += 1
        for a in (["kernbase", "4"], ["-p", "1000", "4"], ["btext", "4"]):
            rc, doc = validate(vals, "rd", base + ["rd"] + a)
            ok["rd" if doc is not None and "words" in doc else "error"] += 1
    for d, core in LINUX:
        base = ["-N", os.path.join(FIX, "linux-kaslr", "vmlinux"), "-M", os.path.join(FIX, d, core)]
        if core == "mem.raw":
            base.append("--raw")
        for name, c in COMMANDS:
            rc, doc = validate(vals, name, base + c.split())
            ok[name if rc == 0 else "error"] += 1
        validate(vals, "rd", base + ["rd", "init_top_pgt", "4"], allow_fail=False)
    # type: kernels alone.
    for kernel, names in ((os.path.join(FIX, "fbsd14", "kernel"), ["struct malloc_type",
                                                                    "struct uma_zone"]),
                          (os.path.join(FIX, "linux-kaslr", "vmlinux"), ["struct kmem_cache"])):
        validate(vals, "type", ["-N", kernel, "type"] + names, allow_fail=False)
        rc, doc = validate(vals, "type", ["-N", kernel, "type", "struct nosuch"])
        check(rc == 1 and doc is not None and doc.get("errors"), "type nosuch: %s" % doc)
        ok["type"] += 1
    # diff: two moments of FreeBSD 14, and Linux KASLR against nokaslr.
    for k, a, b in (("fbsd14/kernel", "fbsd14/vmcore.minidump3", "fbsd14/vmcore.minidump3.t2"),
                    ("linux-kaslr/vmlinux", "linux-kaslr/vmcore", "linux-nokaslr/vmcore")):
        validate(vals, "diff", ["-N", os.path.join(FIX, k), "diff", os.path.join(FIX, a),
                                os.path.join(FIX, b)], allow_fail=False)
        ok["diff"] += 1
    # diff of a saved --json document against a dump.
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "a.json")
        with open(saved, "w") as f:
            f.write(run(["--json", "-N", os.path.join(FIX, "fbsd14", "kernel"), "-M",
                         os.path.join(FIX, "fbsd14", "vmcore.minidump3"), "zone"])[1])
        validate(vals, "diff", ["-N", os.path.join(FIX, "fbsd14", "kernel"), "diff", saved,
                                os.path.join(FIX, "fbsd14", "vmcore.minidump3.t2")],
                 allow_fail=False)
        ok["diff"] += 1
        check_negative(vals, ok, tmp)
        check_cache(vals, ok, tmp)
        check_written(vals, ok, tmp)
    check_family(vals, ok)

    # Errors: usage and open.
    rc, doc = validate(vals, "error", ["malloc", "--sort", "foo"])
    check(rc == 2 and doc["error"]["code"] == "usage", "usage error: %s" % doc)
    rc, doc = validate(vals, "error", ["-N", "/nonexistent", "-M", "/nonexistent", "info"])
    check(rc == 1 and doc["error"]["code"] == "open", "open error: %s" % doc)

    # Control bytes: JSON escapes, not "\x1b" text.
    m3 = ["-N", os.path.join(FIX, "fbsd14", "kernel"), "-M",
          os.path.join(FIX, "fbsd14", "vmcore.minidump3")]
    rc, out, _ = run(["--json"] + m3 + ["malloc"])
    t = json.load(open(os.path.join(FIX, "fbsd14", "truth.json")))
    evil = [r["name"] for r in t["malloc"]["types"] if "\x1b" in r["name"]]
    names = [r["name"] for r in json.loads(out)["types"]]
    check(evil and all(e in names for e in evil), "names with ESC not as in truth: %s" % evil)
    check("\\x1b" not in out and "\x1b" not in out and "\\u001b" in out.lower(),
          "ESC is not a JSON escape in malloc --json")

    # --libxo rows equal the kvmstat/1 rows (vmstat -m skips unused types;
    # memory-use is KB rounded up), keys as FreeBSD's vmstat.
    rc, out, _ = run(["--json", "--libxo"] + m3 + ["malloc"])
    xo = json.loads(out)["malloc-statistics"]["memory"]
    rows = [r for r in json.loads(run(["--json"] + m3 + ["malloc"])[1])["types"]
            if r["requests"] or r["count"]]
    check([(x["type"], x["in-use"], x["memory-use"], x["requests"], x["size"]) for x in xo] ==
          [(r["name"], r["count"], (r["bytes"] + 1023) // 1024, r["requests"], r["sizes"])
           for r in rows], "malloc --libxo rows differ from malloc --json")
    rc, out, _ = run(["--json", "--libxo"] + m3 + ["zone"])
    xz = json.loads(out)["memory-zone-statistics"]["zone"]
    zr = json.loads(run(["--json"] + m3 + ["zone"])[1])["zones"]
    check([(x["name"], x["size"], x["limit"], x["used"], x["free"], x["requests"], x["fail"],
            x["sleep"], x["xdomain"]) for x in xz] ==
          [(r["name"], r["size"], r["limit"], r["count"], r["free"], r["requests"],
            r["failures"], r["sleeps"], r["xdomain"]) for r in zr],
          "zone --libxo rows differ from zone --json")

    # --csv: RFC 4180 (CRLF rows, quoted fields), same rows as --json.
    for cmd, key, cols in (("malloc", "types", ["name", "kaddr", "count", "bytes", "requests"]),
                           ("zone", "zones", ["name", "kaddr", "count", "free", "requests"])):
        rc, out, _ = run(m3 + ["--csv", cmd])
        check(rc == 0 and out.endswith("\r\n"), "%s --csv: rows not CRLF" % cmd)
        got = list(csv.DictReader(io.StringIO(out, newline="")))
        js = json.loads(run(["--json"] + m3 + [cmd])[1])[key]
        # CSV keeps the terminal escaping of the text output (\xNN).
        for j in js:
            j["name"] = re.sub("[\x00-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group()),
                               j["name"])
        check([[g[c] for c in cols] for g in got] ==
              [[str(j[c]) for c in cols] for j in js], "%s --csv differs from --json" % cmd)
        check(any('"' in line for line in out.split("\r\n")) or cmd != "malloc",
              "malloc --csv quotes no field (sizes lists have commas)")
    lin = ["-N", os.path.join(FIX, "linux-kaslr", "vmlinux"), "-M",
           os.path.join(FIX, "linux-kaslr", "vmcore")]
    rc, out, _ = run(lin + ["--csv", "slab"])
    got = list(csv.DictReader(io.StringIO(out, newline="")))
    js = json.loads(run(["--json"] + lin + ["slab"])[1])["caches"]
    check(rc == 0 and [(g["name"], g["count"], g["num_objs"]) for g in got] ==
          [(j["name"], str(j["count"]), str(j["num_objs"])) for j in js],
          "slab --csv differs from --json")
    rc, out, _ = run(m3 + ["--csv", "profile"])
    got = list(csv.DictReader(io.StringIO(out, newline="")))
    js = json.loads(run(["--json"] + m3 + ["profile"])[1])["functions"]
    check(rc == 0 and [(g["name"], g["ticks"], g["calls"]) for g in got] ==
          [(j["name"], str(j["ticks"]), str(j["calls"])) for j in js],
          "profile --csv differs from --json")

    print("%d documents validated; successes per kind: %s" % (
        checked, ", ".join("%s %d" % kv for kv in sorted(ok.items()) if kv[1])))
    for must in ("info", "dmesg", "malloc", "malloc_libxo", "zone", "zone_libxo", "slab",
                 "profile", "probes", "profil", "rd", "type", "diff", "cache", "error"):
        check(ok[must] > 0, "no fixture produced a %s document" % must)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
