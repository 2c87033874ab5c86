#!/usr/bin/env bash
# vmlinux_types.sh VMLINUX [BUILDDIR] - check libkvmstat's DWARF layouts on a
# real Linux kernel against gdb's.
#
# Not part of the default suite: it needs a debug vmlinux (Debian 12's is
# /usr/lib/debug/boot/vmlinux-6.1.0-*-amd64 from linux-image-*-dbg, 633 MB,
# DWARF 5, linked with --emit-relocs) and gdb, neither of which CI has.
# For each of struct kmem_cache, kmem_cache_node, kmem_cache_cpu, slab,
# page and list_head it reads `ptype /o` from gdb (every member, nested ones
# by dotted path, bitfields to the bit) and asks libkvmstat's DWARF layer
# (types/dwarf.c, built in BUILDDIR, default $KVS_BUILDDIR or build/) for
# the same type size, member offsets, sizes and bit positions.
#
# Exit 0 only if every member matches.  A missing vmlinux, gdb, compiler or
# build, or output it cannot parse, is a failure (exit 1 with a message),
# never a silent pass.
set -euo pipefail

fail() { echo "vmlinux_types: FAIL: $*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || fail "usage: $0 VMLINUX [BUILDDIR]"
VMLINUX=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-${KVS_BUILDDIR:-$SRC/build}}
LIB=$BUILD/libkvmstat/libkvmstat_core.a
TYPES=(kmem_cache kmem_cache_node kmem_cache_cpu slab page list_head)
# Other struct tags (for trying the script on a small binary): VMLINUX_TYPES="a b".
[ -n "${VMLINUX_TYPES:-}" ] && read -r -a TYPES <<<"$VMLINUX_TYPES"

[ -f "$VMLINUX" ] && [ -r "$VMLINUX" ] || fail "vmlinux $VMLINUX not found or not readable"
for tool in gdb python3 cc; do
	command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (needed for this check)"
done
[ -f "$LIB" ] || fail "$LIB not found: build libkvmstat first (meson setup $BUILD && ninja -C $BUILD)"

TMP=$(mktemp -d /tmp/vmlinux_types.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# kvmstat's answers: one query per input line, "type<TAB>path" (empty path:
# the type itself); one output line per query, "type<TAB>path<TAB>ok<TAB>
# offset<TAB>size<TAB>bit_offset<TAB>bit_size", or "...<TAB>error<TAB>msg".
cat >"$TMP/lookup.c" <<'EOF'
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvs_private.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct kvs_dwarf *d;
	struct kvs_error e;
	char line[1024], hwm[128] = "";
	double t0 = now(), tfirst = -1;
	Elf *elf;
	FILE *st;
	int fd;

	if (argc != 2 || elf_version(EV_CURRENT) == EV_NONE)
		return 2;
	kerr_clear(&e);
	if ((fd = open(argv[1], O_RDONLY)) < 0 ||
	    (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL) {
		fprintf(stderr, "cannot open %s as ELF\n", argv[1]);
		return 2;
	}
	if (kvs_dwarf_open(&d, elf, &e) != 0) {
		fprintf(stderr, "kvs_dwarf_open: %s\n", e.msg);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin) != NULL) {
		struct kvs_typeinfo ti;
		char *path;
		int rc;

		line[strcspn(line, "\n")] = '\0';
		if ((path = strchr(line, '\t')) == NULL)
			return 2;
		*path++ = '\0';
		kerr_clear(&e);
		rc = *path == '\0' ? kvs_dwarf_type(d, line, &ti, &e) :
		    kvs_dwarf_member(d, line, path, &ti, &e);
		if (tfirst < 0)
			tfirst = now() - t0;
		if (rc != 0)
			printf("%s\t%s\terror\t%s\n", line, path, e.msg);
		else
			printf("%s\t%s\tok\t%llu\t%llu\t%u\t%u\n", line, path,
			    (unsigned long long)ti.offset,
			    (unsigned long long)ti.size, ti.bit_offset, ti.bit_size);
	}
	if ((st = fopen("/proc/self/status", "r")) != NULL) {
		while (fgets(line, sizeof(line), st) != NULL)
			if (strncmp(line, "VmHWM:", 6) == 0)
				snprintf(hwm, sizeof(hwm), "%s", line + 6 +
				    strspn(line + 6, " \t"));
		fclose(st);
	}
	hwm[strcspn(hwm, "\n")] = '\0';
	fprintf(stderr, "kvmstat: DWARF version %d, first lookup %.2f s, all "
	    "%.2f s, peak RSS %s\n", kvs_dwarf_version(d), tfirst, now() - t0,
	    hwm);
	kvs_dwarf_close(d);
	elf_end(elf);
	close(fd);
	return 0;
}
EOF
INCS=()
while IFS= read -r dir; do INCS+=("-I$dir"); done < <(find "$SRC/libkvmstat" -name '*.h' -printf '%h\n' | sort -u)
cc -std=c11 -D_GNU_SOURCE -O2 "${INCS[@]}" -o "$TMP/lookup" "$TMP/lookup.c" "$LIB" \
    -lelf -ldwarf -lz -lm 2>"$TMP/cc.err" ||
	{ cat "$TMP/cc.err" >&2; fail "cannot build the lookup helper against $LIB"; }

GDBARGS=()
for t in "${TYPES[@]}"; do GDBARGS+=(-ex "ptype /o struct $t"); done
echo "vmlinux_types: gdb ptype /o on $VMLINUX (slow: gdb reads all of its DWARF)..."
gdb -batch -nx "${GDBARGS[@]}" "$VMLINUX" >"$TMP/gdb.out" 2>"$TMP/gdb.err" ||
	{ cat "$TMP/gdb.err" >&2; fail "gdb failed"; }

python3 - "$TMP/gdb.out" "$TMP/lookup" "$VMLINUX" "${TYPES[@]}" <<'EOF'
import re, subprocess, sys

gdb_out, lookup, vmlinux, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

def fail(msg):
    print("vmlinux_types: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

# A gdb `ptype /o` line: "/* off[: bit] | size */ decl" or, for a member
# of a union, "/* size */ decl" (its offset is the union's).
FULL = re.compile(r'^/\*\s*(\d+)(?::\s*(\d+))?\s*\|\s*(\d+)\s*\*/\s*(.*)$')
USIZE = re.compile(r'^/\*\s+(\d+)\s*\*/\s*(.*)$')
CLOSE = re.compile(r'^\s*\}\s*([A-Za-z_]\w*)?\s*;?\s*$')
TOTAL = re.compile(r'/\*\s*total size \(bytes\):\s*(\d+)\s*\*/')

def member_name(decl):
    decl = decl.rstrip(';').strip()
    m = re.search(r'\(\s*\*+\s*(?:const\s+)?([A-Za-z_]\w*)', decl)  # (*fn)(...)
    if m:
        return m.group(1), None
    width = None
    m = re.search(r':\s*(\d+)$', decl)
    if m:
        width = int(m.group(1))
        decl = decl[:m.start()].rstrip()
    decl = re.sub(r'(\[[^\]]*\])+$', '', decl).rstrip()
    m = re.search(r'([A-Za-z_]\w*)$', decl)
    if not m:
        return None, None
    return m.group(1), width

def parse(lines):
    """Members of the struct whose ptype /o starts at lines[0]:
    [(path, byte offset, bit, width or None, size)], total size."""
    stack = [{'off': 0, 'members': []}]
    total = None
    for ln in lines[1:]:
        m = TOTAL.search(ln)
        if m:
            if len(stack) == 1:
                total = int(m.group(1))
            continue
        m = CLOSE.match(ln)
        if m:
            if len(stack) == 1:
                break                       # end of the type
            fr = stack.pop()
            name = m.group(1)
            if name:
                stack[-1]['members'].append((name, fr['off'], 0, None, fr['size']))
                for (p, o, b, w, s) in fr['members']:
                    stack[-1]['members'].append((name + '.' + p, o, b, w, s))
            else:                           # anonymous: members reachable directly
                stack[-1]['members'].extend(fr['members'])
            continue
        m = FULL.match(ln)
        if m:
            off, bit, size, decl = int(m.group(1)), int(m.group(2) or 0), int(m.group(3)), m.group(4)
        else:
            m = USIZE.match(ln)
            if not m:
                continue                    # holes, padding, blank lines
            off, bit, size, decl = stack[-1]['off'], 0, int(m.group(1)), m.group(2)
        decl = decl.strip()
        if decl.endswith('{'):
            stack.append({'off': off, 'size': size, 'members': []})
            continue
        name, width = member_name(decl)
        if name is None:
            fail("cannot parse gdb line: " + ln)
        stack[-1]['members'].append((name, off, bit, width, size))
    return stack[0]['members'], total

text = open(gdb_out).read().splitlines()
starts = [i for i, l in enumerate(text) if 'type = struct ' in l]
blocks = {}
for k, i in enumerate(starts):
    m = re.search(r'type = struct (\w+) \{', text[i])
    if m:
        blocks[m.group(1)] = text[i:starts[k + 1] if k + 1 < len(starts) else len(text)]
expect = {}
for t in types:
    if t not in blocks:
        fail("gdb printed no layout for struct %s" % t)
    members, total = parse(blocks[t])
    if total is None or not members:
        fail("could not read gdb's layout of struct %s" % t)
    expect[t] = (members, total)

queries = []
for t in types:
    queries.append(("struct " + t, ""))
    queries += [("struct " + t, m[0]) for m in expect[t][0]]
res = subprocess.run([lookup, vmlinux], input=''.join("%s\t%s\n" % q for q in queries),
                     capture_output=True, text=True)
print(res.stderr, end="")
if res.returncode != 0:
    fail("kvmstat lookup helper exited with %d" % res.returncode)
got = {}
for ln in res.stdout.splitlines():
    f = ln.split('\t')
    got[(f[0], f[1])] = f[2:]
if len(got) != len(queries):
    fail("kvmstat answered %d of %d queries" % (len(got), len(queries)))

bad = 0
def report(nbad, msg):
    if nbad < 20:
        print(msg)
    elif nbad == 20:
        print("... (further mismatches of this type not shown)")

for t in types:
    members, total = expect[t]
    name = "struct " + t
    a = got[(name, "")]
    nbad = 0
    if a[0] != 'ok' or int(a[2]) != total:
        report(nbad, "MISMATCH %s: gdb size %d, kvmstat %s" % (name, total, ' '.join(a)))
        nbad += 1
    for (path, off, bit, width, size) in members:
        a = got[(name, path)]
        if a[0] != 'ok':
            report(nbad, "MISMATCH %s.%s: kvmstat: %s" % (name, path, ' '.join(a[1:])))
            nbad += 1
            continue
        koff, ksize, kbit, kwidth = int(a[1]), int(a[2]), int(a[3]), int(a[4])
        if width is not None:
            ok = koff * 8 + kbit == off * 8 + bit and kwidth == width
            want = "bit %d width %d" % (off * 8 + bit, width)
            have = "bit %d width %d" % (koff * 8 + kbit, kwidth)
        else:
            ok = koff == off and ksize == size and kwidth == 0
            want, have = "+%d size %d" % (off, size), "+%d size %d" % (koff, ksize)
        if not ok:
            report(nbad, "MISMATCH %s.%s: gdb %s, kvmstat %s" % (name, path, want, have))
            nbad += 1
    print("%-24s %5d bytes, %3d members (nested included): %s" %
          (name, total, len(members), "all match gdb" if nbad == 0 else "%d MISMATCHES" % nbad))
    bad += nbad
if bad:
    fail("%d layout differences between kvmstat and gdb" % bad)
print("vmlinux_types: OK: %d queries on %d types match gdb" % (len(queries), len(types)))
EOF
