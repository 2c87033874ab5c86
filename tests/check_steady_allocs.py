#!/usr/bin/env python3
"""A steady-state refresh allocates nothing.

The malloc and UMA refresh benches (bench/bench_refresh, bench/bench_uma)
count the list's own allocations and every malloc/calloc/realloc of the
process (the bench binaries interpose them) during a refresh after the
first.  kvmtop's memory screen (`--view memory`, batch mode, on a raw image
so that every frame is a refresh) and kvs_meminfo_into (tests/steady_meminfo)
are counted by a preloaded counter (tests/support/alloccount.c) that logs
the allocations between two flushes of stdout: kvmtop flushes once per
frame, the driver once per call.  Every count after the first must be 0, on
every fixture run here.  The counts are a fact, not a timing."""
import json, os, struct, subprocess, sys, tempfile

build, fixtures = sys.argv[1], sys.argv[2]
# a directory of this run's own: the benches write their image there, and
# another run's image of the same name must not be cut short under them
tmpd = tempfile.TemporaryDirectory(prefix="kvs-steady-")
tmp = tmpd.name
REFRESHES = 6
bad = rows = 0


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


runs = [
    [os.path.join(build, "bench", "bench_refresh"), "--json", "--types", "200,2000",
     "--cpus", "8,64", fixtures + "/fbsd14", tmp],
    [os.path.join(build, "bench", "bench_uma"), "--json", "--zones", "100,1000",
     "--cpus", "8,64", fixtures + "/fbsd14", tmp],
]
for cmd in runs:
    if not os.access(cmd[0], os.X_OK):
        fail(f"{cmd[0]} missing (build with -Dbench=true)")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        rows += 1
        if r.get("steady_list_allocs") != 0 or r.get("steady_mallocs") != 0:
            bad += 1
            print(f"FAIL: {os.path.basename(cmd[0])} {r}")


def elf_to_raw(elf, raw):
    """A raw physical image of an ELF vmcore: each PT_LOAD at its physical
    address (a raw image is what kvmtop refreshes, as it would live memory)."""
    d = open(elf, "rb").read()
    if d[:4] != b"\x7fELF" or d[4] != 2:
        fail(f"{elf}: not an ELF64 core")
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
    with open(raw, "wb") as out:
        for i in range(phnum):
            t, _, off, _, pa, fs, _, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize)
            if t == 1 and fs:
                out.seek(pa)
                out.write(d[off:off + fs])


def counted(name, what, cmd):
    """Run cmd under the counter; every count after the first must be 0."""
    global bad, rows
    log = os.path.join(tmp, "allocs.log")
    if os.path.exists(log):
        os.unlink(log)
    env = dict(os.environ, LD_PRELOAD=preload, KVS_ALLOC_LOG=log)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    if out.returncode != 0:
        fail(f"{name} {what}: exit {out.returncode}: {out.stderr.strip()}")
    counts = [int(x) for x in open(log).read().split()] if os.path.exists(log) else []
    if len(counts) < REFRESHES:
        fail(f"{name} {what}: {len(counts)} refreshes counted, wanted {REFRESHES} "
             f"(is the counter preloaded?)")
    steady = counts[1:]
    rows += len(steady)
    if any(steady):
        bad += sum(1 for c in steady if c)
        print(f"FAIL: {name} {what}: allocations per refresh {counts}")
    else:
        print(f"ok: {name} {what}: {counts[0]} allocations on the first refresh, "
              f"0 on each of the {len(steady)} after")


preload = os.path.join(build, "tests", "liballoccount.so")
driver = os.path.join(build, "tests", "steady_meminfo")
kvmtop = os.path.join(build, "tui", "kvmtop")
for f in (preload, driver):
    if not os.path.exists(f):
        fail(f"{f} missing (build with -Dbench=true)")
# The fixtures: a dump and its kernel (none: the library takes the dump's
# own symbols), and a raw image for kvmtop (made from the dump if absent).
fx = []
for name in ("linux-kaslr", "linux-nodebug", "fbsd14", "fbsd14-arm64"):
    d = os.path.join(fixtures, name)
    if not os.path.isdir(d):
        fail(f"{d} missing")
    kernel = next((os.path.join(d, k) for k in ("vmlinux", "kernel")
                   if os.path.exists(os.path.join(d, k))), None)
    dump = next((os.path.join(d, k) for k in ("vmcore", "vmcore.elf")
                 if os.path.exists(os.path.join(d, k))), None)
    if dump is None:
        fail(f"{d}: no vmcore")
    raw = os.path.join(d, "mem.raw")
    if not os.path.exists(raw):
        raw = os.path.join(tmp, name + ".raw")
        elf_to_raw(dump, raw)
    fx.append((name, kernel, dump, raw))

for name, kernel, dump, raw in fx:
    k = ["-N", kernel] if kernel else []
    counted(name, "kvs_meminfo_into", [driver] + k + ["-M", dump, "-n", str(REFRESHES)])
    if os.access(kvmtop, os.X_OK):
        counted(name, "kvmtop --view memory", [kvmtop, "-b", "-n", str(REFRESHES), "-w", "0",
                "--view", "memory"] + k + ["-M", raw, "--raw"])
        counted(name, "kvmtop list", [kvmtop, "-b", "-n", str(REFRESHES), "-w", "0"] + k +
                ["-M", raw, "--raw"])

print(f"steady-state allocations: {rows} refreshes checked, {bad} allocated")
sys.exit(1 if bad or rows == 0 else 0)
