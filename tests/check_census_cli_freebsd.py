#!/usr/bin/env python3
"""check_census_cli_freebsd.py - the census commands on the FreeBSD
fixtures, against the generator's truth.json["vm"] (its own model):
`mem --json` (vm_cnt by field, top's queues, the allocators) and its text
(vmstat -s lines in order, top's Mem: line), `buddyinfo --json` (each
domain's free lists: blocks per pool and order) and `vmalloc --json` (the
vmem arenas).  A missing fixture or truth fails."""
import json
import os
import subprocess
import sys

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
checks = failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def kv(fixture, core, *args):
    k = os.path.join(FIX, "fbsd14" if fixture == "fbsd14-s2" else fixture, "kernel")
    p = subprocess.run([KVMSTAT, "-N", k, "-M", os.path.join(FIX, fixture, core)] + list(args),
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    for fixture, core in (("fbsd14", "vmcore.minidump3"), ("fbsd14", "vmcore.elf"),
                          ("fbsd14-s2", "vmcore.minidump3"), ("fbsd12", "vmcore.minidump2"),
                          ("fbsd11", "vmcore.minidump2"), ("fbsd14-arm64", "vmcore.minidump1"),
                          ("fbsd14-arm64", "vmcore.elf"), ("fbsd14-arm64", "mem.raw")):
        tp = os.path.join(FIX, fixture, "truth.json")
        if not check(os.path.exists(tp), "%s: no truth" % fixture):
            continue
        vm = json.load(open(tp)).get("vm")
        if not check(vm is not None, "%s: truth.json has no vm" % fixture):
            continue
        label = "%s %s" % (fixture, core)
        rc, out, err = kv(fixture, core, "--json", "mem")
        if check(rc == 0, "%s: mem --json: %s" % (label, err.strip())):
            doc = json.loads(out)
            check(doc["vm"] == {r["key"]: r["value"] for r in vm["vmstat_s"]},
                  "%s: mem vm differs from the truth" % label)
            check(doc["queues"] == {q["name"]: q["value"] for q in vm["queues"]},
                  "%s: mem queues %r, truth %r" % (label, doc["queues"], vm["queues"]))
        rc, out, err = kv(fixture, core, "mem")
        if check(rc == 0, "%s: mem: %s" % (label, err.strip())):
            lines = out.splitlines()
            want = ["%9d %s" % (r["value"], r["name"]) for r in vm["vmstat_s"]]
            check(lines[:len(want)] == want, "%s: vmstat -s lines differ" % label)
            mem = [l for l in lines if l.startswith("Mem: ")]
            check(len(mem) == 1 and all(q["name"] in mem[0] for q in vm["queues"]),
                  "%s: top's Mem: line %r" % (label, mem))
        rc, out, err = kv(fixture, core, "--json", "buddyinfo")
        if check(rc == 0, "%s: buddyinfo --json: %s" % (label, err.strip())):
            zones = json.loads(out)["zones"]
            got = sorted((z["node"], list(z["pools"].values())) for z in zones
                         if z.get("pools"))
            want = sorted((f["domain"], f["pools"]) for f in vm["phys_free"])
            check([g[1] for g in got] == [w[1] for w in want] and
                  [g[0] for g in got] == [w[0] for w in want],
                  "%s: buddyinfo pools differ from the truth's phys_free" % label)
        rc, out, err = kv(fixture, core, "--json", "vmalloc")
        if check(rc == 0, "%s: vmalloc --json: %s" % (label, err.strip())):
            got = sorted((a["name"], a["address"], a["size"], a["inuse"], a["free"], a["quantum"])
                         for a in json.loads(out)["arenas"])
            want = sorted((a["name"], a["address"], a["size"], a["inuse"], a["free"], a["quantum"])
                          for a in vm["arenas"])
            check(got == want, "%s: arenas %r, truth %r" % (label, got, want))
    print("%d checks, %d failed" % (checks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
