"""nokernel_common.py - what check_nodebug.py and check_nodata.py share: a
Linux fixture dump read without a kernel file (-M vmcore alone), checked
against the generator's truth.json.  The check counter, kvmstat runs with
an empty layout cache of their own, and the slab row comparison."""
import json
import os
import subprocess
import sys
import tempfile

FIX = os.environ.get("KVS_FIXTURES", os.path.join(os.path.dirname(__file__), "..",
                                                  "fixtures", "cores"))
KVMSTAT = os.path.join(os.environ.get("KVS_BUILDDIR", "build"), "analyzers", "kvmstat")
ENV = dict(os.environ)
ENV.pop("KVS_TYPES", None)
ENV.pop("KVS_NO_CACHE", None)


class Checks:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def __call__(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print("FAIL:", what)
        return cond


check = Checks()


def num(v):
    """truth.json writes values above 2^63 as hex strings."""
    return int(v, 16) if isinstance(v, str) else v


def run(*args, env=None, binary=False):
    p = subprocess.run([KVMSTAT] + list(args), capture_output=True, text=not binary,
                       env=env or ENV)
    return p.returncode, p.stdout, p.stderr if not binary else p.stderr.decode(errors="replace")


def load_json(label, rc, out, err, want_rc=0):
    if not check(rc == want_rc, "%s: exit %d (want %d): %s" % (label, rc, want_rc,
                                                             err.strip()[-400:])):
        return None
    try:
        return json.loads(out)
    except ValueError as e:
        check(False, "%s: not JSON (%s): %s" % (label, e, out[:200]))
        return None


def text_fields(out):
    """`kvmstat info`'s "key: value" lines as a dict."""
    f = {}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        f[k.strip()] = v.strip()
    return f


def slab_rows(label, doc, truth, percpu, percpu_known=True):
    """Every cache's figures against the truth, in list order.  Without the
    CPUs' slabs (percpu_known False) the exact count, free and bytes are
    null and the row says it is incomplete; the rest is exact."""
    rows = doc.get("caches", [])
    caches = truth["caches"]
    if not check(len(rows) == len(caches), "%s: %d caches, truth %d" % (label, len(rows),
                                                                      len(caches))):
        return
    exact = ("object_size", "size", "objects_per_slab", "pages_per_slab", "num_slabs",
             "num_objs", "active_objs", "cache_bytes")
    for o, t in zip(rows, caches):
        name = t["name"]
        check(o.get("name") == name, "%s: cache %s where the truth has %s (list order)" %
              (label, o.get("name"), name))
        check(int(o.get("kaddr", "0"), 16) == num(t["address"]),
              "%s %s: kaddr %s, truth 0x%x" % (label, name, o.get("kaddr"), num(t["address"])))
        for k in exact:
            check(o.get(k) == t[k], "%s %s: %s %s, truth %s" % (label, name, k, o.get(k), t[k]))
        check(o.get("corrupt") is False and t["corrupt"] is False,
              "%s %s: corrupt %s, truth %s" % (label, name, o.get("corrupt"), t["corrupt"]))
        if not percpu_known:
            for k in ("count", "free", "bytes"):
                check(k in o and o[k] is None, "%s %s: %s %r where the CPUs' slabs are "
                      "unread (want null)" % (label, name, k, o.get(k)))
            check(o.get("incomplete") is True, "%s %s: not marked incomplete" % (label, name))
            if percpu:
                check("percpu" in o and o["percpu"] is None, "%s %s: percpu %r, want null" %
                      (label, name, o.get("percpu")))
            continue
        check(o.get("count") == t["allocated"], "%s %s: count %s, truth allocated %s" %
              (label, name, o.get("count"), t["allocated"]))
        check(o.get("free") == t["free"], "%s %s: free %s, truth %s" %
              (label, name, o.get("free"), t["free"]))
        check(o.get("bytes") == t["bytes"], "%s %s: bytes %s, truth %s" %
              (label, name, o.get("bytes"), t["bytes"]))
        if percpu:
            got = [(p.get("cpu"), p.get("free")) for p in o.get("percpu", [])]
            want = list(enumerate(t["percpu_free"]))
            check(got == want, "%s %s: percpu %s, truth %s" % (label, name, got, want))
        else:
            check("percpu" not in o, "%s %s: per-CPU figures without --percpu" % (label, name))


def main_with_cache(main):
    """Run main with an empty layout cache of its own; report and exit."""
    with tempfile.TemporaryDirectory() as cache:
        ENV["XDG_CACHE_HOME"] = cache
        main()
    print("%d checks, %d failed" % (check.checks, check.failures))
    sys.exit(1 if check.failures else 0)
