#!/usr/bin/env bash
# vmlinux_types_drgn.sh VMLINUX [BUILDDIR] - `kvmstat type --json` on a real
# Linux vmlinux against drgn's view of the same types.
#
# Not part of the default suite: it needs a debug vmlinux (Debian 12's
# /usr/lib/debug/boot/vmlinux-6.1.0-*-amd64, with .BTF and DWARF 5) and
# python3-drgn (0.0.22), which CI has not.  For the structs the Linux
# walkers use, kvmstat (from BTF, then again with KVS_TYPES=dwarf) must give
# the size drgn gives, and every member drgn lists, anonymous ones nested,
# with the same name, offset (bit_offset // 8 counted from the named type),
# bit offset and width of bit-fields, size and type (integer names in one
# spelling, array dimensions as their product: BTF keeps pahole's flattened
# ones, btf.c).
#
# Exit 0 only if everything matches.  A missing vmlinux, drgn, kvmstat
# build, or output it cannot read is a failure (exit 1), never a pass.
set -euo pipefail
# BTF and DWARF themselves answer, not the layout cache of an earlier run
export KVS_NO_CACHE=1

fail() { echo "vmlinux_types_drgn: FAIL: $*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || fail "usage: $0 VMLINUX [BUILDDIR]"
VMLINUX=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-${KVS_BUILDDIR:-$SRC/build}}
KVMSTAT=$BUILD/analyzers/kvmstat
PY=${PYTHON:-/usr/bin/python3}
TYPES=(kmem_cache kmem_cache_node kmem_cache_cpu slab page list_head
	printk_ringbuffer prb_desc_ring prb_data_ring prb_desc printk_info
	kmem_cache_order_objects)

[ -f "$VMLINUX" ] && [ -r "$VMLINUX" ] || fail "vmlinux $VMLINUX not found or not readable"
[ -x "$KVMSTAT" ] || fail "$KVMSTAT not found: build first (meson setup $BUILD && ninja -C $BUILD)"
[ -x "$PY" ] || fail "$PY not found"
"$PY" -c 'import drgn' 2>/dev/null || fail "python3-drgn is not installed ($PY cannot import drgn)"

TMP=$(mktemp -d /tmp/vmlinux_types_drgn.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ARGS=()
for t in "${TYPES[@]}"; do ARGS+=("struct $t"); done
"$KVMSTAT" -N "$VMLINUX" --json type "${ARGS[@]}" >"$TMP/btf.json" ||
	fail "kvmstat type (BTF) failed"
KVS_TYPES=dwarf "$KVMSTAT" -N "$VMLINUX" --json type "${ARGS[@]}" >"$TMP/dwarf.json" ||
	fail "kvmstat type (KVS_TYPES=dwarf) failed"

"$PY" - "$VMLINUX" "$TMP/btf.json" "$TMP/dwarf.json" "${TYPES[@]}" <<'PY'
import json, re, sys
import drgn

vmlinux, files, types = sys.argv[1], sys.argv[2:4], sys.argv[4:]
prog = drgn.Program()
prog.load_debug_info([vmlinux])

INT_WORDS = {"unsigned", "signed", "short", "long", "int", "char"}

def canon(s):
    """One spelling of a C type name."""
    toks = re.findall(r"[A-Za-z_][A-Za-z_0-9]*|\S", s)
    out, run = [], []
    def flush():
        if not run:
            return
        u = "unsigned" in run
        if "char" in run:
            base = ("signed " if "signed" in run and not u else "") + "char"
        elif "short" in run:
            base = "short"
        elif run.count("long") == 2:
            base = "long long"
        elif "long" in run:
            base = "long"
        else:
            base = "int"
        out.append(("unsigned " if u else "") + base)
        run.clear()
    for t in toks:
        if t in INT_WORDS:
            run.append(t)
            continue
        flush()
        out.append(t)
    flush()
    s = " ".join(out)
    s = re.sub(r"\s*\*\s*", "*", s)
    s = re.sub(r"\s*([()\[\],])\s*", r"\1", s)
    # array dimensions as their product; [0] and [] alike
    def dims(m):
        ns = [int(x) if x else 0 for x in re.findall(r"\[(\d*)\]", m.group(0))]
        p = 1
        for n in ns:
            p *= n
        return "[]" if p == 0 else "[%d]" % p
    s = re.sub(r"(\[\d*\])+", dims, s)
    return s.replace("<anonymous>", "").replace("struct ", "struct").replace("union ", "union")

def tsize(t):
    try:
        return drgn.sizeof(t)
    except Exception:
        return 0

def tname(t):
    n = t.type_name()
    return n

def want(t, base):
    res = []
    for m in t.members:
        bo = base + m.bit_offset
        mt = m.type
        d = {"name": m.name, "offset": bo // 8, "size": tsize(mt), "type": canon(tname(mt))}
        if m.bit_field_size:
            d["bit_offset"] = bo
            d["bit_size"] = m.bit_field_size
        ut = mt
        while ut.kind == drgn.TypeKind.TYPEDEF or ut.qualifiers:
            if ut.kind != drgn.TypeKind.TYPEDEF:
                ut = ut.unqualified()
                continue
            ut = ut.type
        if m.name is None and ut.kind in (drgn.TypeKind.STRUCT, drgn.TypeKind.UNION):
            d["members"] = want(ut, bo)
        res.append(d)
    return res

def got(members):
    res = []
    for m in members:
        d = {"name": m["name"], "offset": m["offset"], "size": m["size"], "type": canon(m["type"])}
        if "bit_size" in m:
            d["bit_offset"] = m["bit_offset"]
            d["bit_size"] = m["bit_size"]
        if "members" in m:
            d["members"] = got(m["members"])
        res.append(d)
    return res

def diff(path, a, b, errs):
    if len(a) != len(b):
        errs.append("%s: drgn %d members, kvmstat %d" % (path, len(a), len(b)))
        return
    for x, y in zip(a, b):
        p = "%s.%s" % (path, x["name"])
        for k in ("name", "offset", "size", "type", "bit_offset", "bit_size"):
            if x.get(k) != y.get(k):
                errs.append("%s: %s drgn %r kvmstat %r" % (p, k, x.get(k), y.get(k)))
        if ("members" in x) != ("members" in y):
            errs.append("%s: nested members drgn %s kvmstat %s" % (p, "members" in x, "members" in y))
        elif "members" in x:
            diff(p, x["members"], y["members"], errs)

def count(ms):
    return sum(1 + count(m.get("members", [])) for m in ms)

errs = []
total = 0
for f, label in zip(files, ("BTF", "DWARF")):
    doc = json.load(open(f))
    if set(doc) != {"schema", "types"} or doc["schema"] != "kvmstat/1":
        errs.append("%s: bad document keys %s" % (label, sorted(doc)))
        continue
    byname = {t["name"]: t for t in doc["types"]}
    for ty in types:
        name = "struct " + ty
        t = prog.type(name)
        k = byname.get(name)
        if k is None:
            errs.append("%s %s: missing from kvmstat" % (label, name))
            continue
        if k["size"] != t.size or k["kind"] != "struct":
            errs.append("%s %s: size/kind drgn %d struct, kvmstat %d %s" %
                        (label, name, t.size, k["size"], k["kind"]))
        w = want(t, 0)
        diff("%s %s" % (label, name), w, got(k["members"]), errs)
        total += count(w)
for e in errs[:50]:
    print("vmlinux_types_drgn: MISMATCH:", e)
if errs:
    print("vmlinux_types_drgn: FAIL: %d mismatches" % len(errs))
    sys.exit(1)
print("vmlinux_types_drgn: OK: %d types, %d members (BTF and DWARF each) agree with drgn"
      % (len(types), total // 2))
PY
