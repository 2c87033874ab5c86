#!/usr/bin/env python3
"""A steady-state refresh allocates nothing: the malloc and UMA refresh
benches (bench/bench_refresh, bench/bench_uma) count the list's own
allocations and every malloc/calloc/realloc of the process (the bench
binaries interpose them) during a refresh after the first.  Both must be 0
on every grid point run here.  The counts are a fact, not a timing."""
import json, os, subprocess, sys, tempfile

build, fixtures = sys.argv[1], sys.argv[2]
# a directory of this run's own: the benches write their image there, and
# another run's image of the same name must not be cut short under them
tmpd = tempfile.TemporaryDirectory(prefix="kvs-steady-")
tmp = tmpd.name
runs = [
    [os.path.join(build, "bench", "bench_refresh"), "--json", "--types", "200,2000",
     "--cpus", "8,64", fixtures + "/fbsd14", tmp],
    [os.path.join(build, "bench", "bench_uma"), "--json", "--zones", "100,1000",
     "--cpus", "8,64", fixtures + "/fbsd14", tmp],
]
bad = rows = 0
for cmd in runs:
    if not os.access(cmd[0], os.X_OK):
        print(f"FAIL: {cmd[0]} missing (build with -Dbench=true)")
        sys.exit(1)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"FAIL: {' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
        sys.exit(1)
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        rows += 1
        if r.get("steady_list_allocs") != 0 or r.get("steady_mallocs") != 0:
            bad += 1
            print(f"FAIL: {os.path.basename(cmd[0])} {r}")
print(f"steady-state allocations: {rows} refreshes checked, {bad} allocated")
sys.exit(1 if bad or rows == 0 else 0)
