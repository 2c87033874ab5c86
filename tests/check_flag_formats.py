#!/usr/bin/env python3
"""check_flag_formats.py - every flag works in every format it is accepted in.

--percpu, against the fixture generator's truth files (never read back
through kvmstat):
  - `slab --percpu` in both tables (slabinfo, crash): under each cache, a
    line per CPU holding free objects of it, with truth's percpu_free; and
    with --csv a row per cache and CPU (Linux KASLR and nokaslr fixtures);
  - `zone --percpu --csv`: a row per zone and CPU, truth's percpu_free;
  - `malloc --percpu --csv`: a row per type and CPU, truth's per-CPU
    requests, frees, memalloced, memfreed and sizemask (FreeBSD 11 to 14);
  - with --percpu the usual CSV is not printed unchanged.
A dump whose kernel is not known (no -N, none installed): `info` and
`rd -p` open it for its bytes alone, saying so; `--no-kernel` asks for that
(refused with -N); rd -p's words are the raw image's bytes (read here).
gmon: `-o` is optional, as kgmon -p's: without it `gmon` writes ./gmon.out,
and the usage says [-o FILE]; an existing ./gmon.out is kept without -f.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.abspath(os.path.join(os.environ.get("KVS_BUILDDIR", "build"),
                                       "analyzers", "kvmstat"))
failures = 0
checked = 0


def check(cond, what):
    global failures, checked
    checked += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(*args, cwd=None):
    p = subprocess.run([KVMSTAT] + list(args), capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def linux():
    for fx in ("linux-kaslr", "linux-nokaslr"):
        d = os.path.join(FIX, fx)
        t = json.load(open(os.path.join(d, "truth.json")))
        base = ["-N", os.path.join(FIX, "linux-kaslr", "vmlinux"), "-M", os.path.join(d, "vmcore")]
        want = {}
        for c in t["caches"]:
            want[int(c["address"], 16) if isinstance(c["address"], str) else c["address"]] = (
                c["name"], {i: v for i, v in enumerate(c["percpu_free"]) if v})
        check(sum(len(w[1]) for w in want.values()) > 5,
              "%s: truth has CPUs holding free objects" % fx)
        # CSV: a row per cache and CPU
        rc, out, err = run(*base, "slab", "--percpu", "--csv")
        check(rc == 0, "%s slab --percpu --csv: rc %d %s" % (fx, rc, err))
        rows = csv_rows(out)
        check(rows and list(rows[0].keys()) == ["name", "kaddr", "cpu", "free"],
              "%s slab --percpu --csv header: %s" % (fx, out[:80]))
        got = {}
        for r in rows:
            got.setdefault(int(r["kaddr"], 16), {})[int(r["cpu"])] = int(r["free"])
        check(set(got) == set(want), "%s slab --percpu --csv: caches %d, truth %d" %
              (fx, len(got), len(want)))
        for a, (name, pc) in want.items():
            g = {c: v for c, v in got.get(a, {}).items() if v}
            check(g == pc, "%s slab --percpu --csv %s: %s, truth %s" % (fx, name, g, pc))
            check(all(c in got.get(a, {}) for c in range(len(t["caches"][0]["percpu_free"]))),
                  "%s slab --percpu --csv %s: a row for every CPU" % (fx, name))
        # the tables: lines under each cache
        for fmt in ("slabinfo", "crash"):
            rc, out, err = run(*base, "slab", "--format", fmt, "--percpu")
            check(rc == 0, "%s slab --format %s --percpu: rc %d" % (fx, fmt, rc))
            rc2, plain, _ = run(*base, "slab", "--format", fmt)
            check(out != plain, "%s slab --format %s: --percpu changes nothing" % (fx, fmt))
            cur, seen = None, {}
            for line in out.splitlines():
                w = line.split()
                if line.startswith(" ") and len(w) == 3 and w[0].startswith("cpu") and w[1] == "free":
                    check(cur is not None, "%s %s: a CPU line before any cache" % (fx, fmt))
                    seen.setdefault(cur, {})[int(w[0][3:])] = int(w[2])
                elif w and not line.startswith(("#", "slabinfo", "CACHE")):
                    cur = w[0] if fmt == "slabinfo" else int(w[0], 16)
                    seen.setdefault(cur, {})
            for a, (name, pc) in want.items():
                key = name if fmt == "slabinfo" else a
                check(seen.get(key) == pc, "%s slab --format %s --percpu %s: %s, truth %s" %
                      (fx, fmt, name, seen.get(key), pc))
            check(plain.count("\n") == out.count("\n") - sum(len(w[1]) for w in want.values()),
                  "%s slab --format %s: --percpu adds exactly the CPU lines" % (fx, fmt))


def freebsd():
    for fx in ("fbsd11", "fbsd12", "fbsd14"):
        d = os.path.join(FIX, fx)
        t = json.load(open(os.path.join(d, "truth.json")))
        core = sorted(f for f in os.listdir(d) if f.startswith("vmcore."))[0]
        base = ["-N", os.path.join(d, "kernel"), "-M", os.path.join(d, core)]
        # malloc
        rc, out, err = run(*base, "malloc", "--percpu", "--csv")
        check(rc == 0, "%s malloc --percpu --csv: rc %d %s" % (fx, rc, err))
        rows = csv_rows(out)
        check(rows and list(rows[0].keys()) == ["name", "kaddr", "cpu", "requests", "frees",
                                                "memalloced", "memfreed", "sizemask"],
              "%s malloc --percpu --csv header: %s" % (fx, out[:100]))
        got = {(int(r["kaddr"], 16), int(r["cpu"])): r for r in rows}
        n = 0
        for m in t["malloc"]["types"]:
            a = int(m["addr"], 16)
            for p in m["percpu"]:
                r = got.get((a, p["cpu"]))
                ok = r is not None and all(int(r[k]) == p[v] for k, v in (
                    ("requests", "numallocs"), ("frees", "numfrees"),
                    ("memalloced", "memalloced"), ("memfreed", "memfreed"),
                    ("sizemask", "sizemask")))
                check(ok, "%s malloc --percpu --csv %s cpu %d: %s, truth %s" %
                      (fx, m["name"], p["cpu"], r, p))
                n += 1
        check(n > 20, "%s: truth has per-CPU malloc records (%d)" % (fx, n))
        # zone
        if "uma" not in t or not t["uma"].get("zones"):
            continue
        rc, out, err = run(*base, "zone", "--percpu", "--csv")
        check(rc == 0, "%s zone --percpu --csv: rc %d %s" % (fx, rc, err))
        rows = csv_rows(out)
        check(rows and list(rows[0].keys()) == ["name", "kaddr", "cpu", "free"],
              "%s zone --percpu --csv header: %s" % (fx, out[:80]))
        got = {}
        for r in rows:
            got.setdefault(int(r["kaddr"], 16), {})[int(r["cpu"])] = int(r["free"])
        nz = 0
        for z in t["uma"]["zones"]:
            if "percpu_free" not in z:
                continue
            a = int(z["addr"], 16) if isinstance(z["addr"], str) else z["addr"]
            pc = z["percpu_free"]
            pc = {i: v for i, v in (enumerate(pc) if isinstance(pc, list) else
                                   ((int(k), v) for k, v in pc.items())) if v}
            g = {c: v for c, v in got.get(a, {}).items() if v}
            check(g == pc, "%s zone --percpu --csv %s: %s, truth %s" % (fx, z["name"], g, pc))
            nz += len(pc)
        check(nz > 5, "%s: truth has zones cached per CPU (%d)" % (fx, nz))


def gmon():
    rc, out, err = run("gmon", "--help")
    check("[-o FILE]" in out + err, "gmon --help: -o is optional: %s" % (out + err)[:200])
    with tempfile.TemporaryDirectory() as tmp:
        rc, out, err = run("--demo", "gmon", cwd=tmp)
        path = os.path.join(tmp, "gmon.out")
        check(rc == 0 and os.path.isfile(path) and os.path.getsize(path) > 20,
              "gmon without -o writes ./gmon.out: rc %d %s" % (rc, err))
        size = os.path.getsize(path) if os.path.exists(path) else 0
        with open(path, "ab") as f:
            f.write(b"mine")
        rc, out, err = run("--demo", "gmon", cwd=tmp)
        check(rc != 0 and os.path.getsize(path) == size + 4,
              "gmon without -o keeps an existing ./gmon.out without -f: rc %d" % rc)
        rc, out, err = run("--demo", "gmon", "-f", cwd=tmp)
        check(rc == 0 and os.path.getsize(path) == size, "gmon -f replaces ./gmon.out")


def no_kernel():
    mini = os.path.join(FIX, "fbsd14", "vmcore.minidump3")
    raw = os.path.join(FIX, "fbsd14", "mem.raw")
    t = json.load(open(os.path.join(FIX, "fbsd14", "truth.json")))
    env_root = {"KVS_DEBUG_ROOT": "/nonexistent"}
    for args in ((["-M", mini, "info"]), (["-M", mini, "--no-kernel", "info"])):
        p = subprocess.run([KVMSTAT] + args, capture_output=True, text=True,
                           env=dict(os.environ, **env_root))
        check(p.returncode == 0 and "minidump v3" in p.stdout and
              "dumped pages:  %d" % t["dumped_pages"]["minidump3"] in p.stdout,
              "%s: rc %d, %s %s" % (" ".join(args[2:]), p.returncode, p.stdout, p.stderr))
        if "--no-kernel" not in args:
            check("its bytes alone" in p.stderr, "info falls back saying so: %s" % p.stderr)
    p = subprocess.run([KVMSTAT, "-M", mini, "--json", "info"], capture_output=True, text=True,
                       env=dict(os.environ, **env_root))
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    check(doc.get("format") == "minidump" and doc.get("dumped_pages") ==
          t["dumped_pages"]["minidump3"], "info --json without a kernel: %s" % p.stdout[:200])
    data = open(raw, "rb").read()
    for pa in (0x60000, 0x1000 * 100 + 8):
        p = subprocess.run([KVMSTAT, "-M", raw, "--raw", "rd", "-p", hex(pa), "4"],
                           capture_output=True, text=True, env=dict(os.environ, **env_root))
        words = []
        for line in p.stdout.splitlines():
            words += [int(w, 16) for w in line.split()[1:3]]
        want = [int.from_bytes(data[pa + 8 * i:pa + 8 * i + 8], "little") for i in range(4)]
        check(p.returncode == 0 and words == want, "rd -p %s without a kernel: %s, file %s (%s)"
              % (hex(pa), words, want, p.stderr))
    rc, out, err = run("-N", os.path.join(FIX, "fbsd14", "kernel"), "-M", mini, "--no-kernel",
                       "info")
    check(rc == 2 and "--no-kernel" in err, "--no-kernel with -N is a usage error: %d %s" % (rc, err))
    rc, out, err = run("-M", mini, "--no-kernel", "malloc")
    check(rc == 1 and "no kernel is known" in err, "malloc --no-kernel: %d %s" % (rc, err))


if not os.access(KVMSTAT, os.X_OK):
    print("FAIL: no kvmstat at", KVMSTAT)
    sys.exit(1)
linux()
freebsd()
gmon()
no_kernel()
print("check_flag_formats: %d checks, %d failed" % (checked, failures))
sys.exit(1 if failures else 0)
