#!/usr/bin/env bash
# install.sh SRCDIR BUILDDIR - `meson install` into a temporary root and use
# the result as an outside user would:
#   - the files: library, headers under include/kvmstat/, libkvmstat.pc,
#     kvmstat, kvmtop, the man pages (a link for every public function);
#   - a program built outside the tree with `pkg-config --cflags --libs
#     libkvmstat` (FreeBSD's `vmstat -m`, written against <memstat.h>), run
#     on a fixture, its rows compared with the generator's truth.json;
#   - `man -M PREFIX/share/man kvmstat` and `man ... memstat_mtl_alloc`;
#   - the Python module imported from PREFIX/lib/python3/dist-packages, with
#     no KVMSTAT_LIB: it finds the installed library by itself.
# Oracles: cc, pkg-config, man (missing ones fail unless
# KVS_ALLOW_MISSING_ORACLES=1: then "SKIPPED: ..." and exit 77).
set -euo pipefail
src=$(cd "${1:?usage: install.sh SRCDIR BUILDDIR}" && pwd)
build=$(cd "${2:?usage: install.sh SRCDIR BUILDDIR}" && pwd)
fix=$src/fixtures/cores

for tool in cc pkg-config man python3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		if [ "${KVS_ALLOW_MISSING_ORACLES:-0}" = 1 ]; then
			echo "SKIPPED: $tool not installed"
			exit 77
		fi
		echo "FAIL: $tool not installed (scripts/setup.sh installs it)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Install from a copy of the build directory, so the build under test is
# left exactly as it was (install logs included).
cp -a "$build" "$tmp/build"
DESTDIR="$tmp/root" meson install -C "$tmp/build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "meson install"; }
eval "$(meson introspect "$tmp/build" --buildoptions | python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("prefix", "libdir", "includedir", "bindir", "mandir", "b_sanitize"):
    print("%s=%s" % (k, o[k]))')"
# A sanitizer build: the outside program links the same runtime, and the
# (uninstrumented) python3 preloads it.
san_flags=() preload=
if [ "$b_sanitize" != none ] && [ -n "$b_sanitize" ]; then
	san_flags=("-fsanitize=$b_sanitize")
	case $b_sanitize in *address*)
		preload=$(cc -print-file-name=libasan.so)
		export ASAN_OPTIONS=detect_leaks=0 ;;
	esac
fi
root=$tmp/root$prefix
case $libdir in /*) libdir=$tmp/root$libdir ;; *) libdir=$root/$libdir ;; esac
echo "installed under $root"

# ---- files
for f in "$libdir/libkvmstat.so" "$libdir/libkvmstat.so.0" "$libdir/pkgconfig/libkvmstat.pc" \
    "$root/$includedir/kvmstat/kvmstat.h" "$root/$includedir/kvmstat/memstat.h" \
    "$root/$includedir/kvmstat/kvmprof.h" "$root/$bindir/kvmstat" \
    "$root/$mandir/man1/kvmstat.1" \
    "$root/$mandir/man3/kvmstat.3" "$root/$mandir/man3/libmemstat.3" \
    "$root/$mandir/man3/kvmprof.3" "$root/lib/python3/dist-packages/kvmstat/__init__.py"; do
	[ -e "$f" ] || fail "not installed: ${f#"$tmp/root"}"
done
# kvmtop and its page when the build has it (-Dtui=true, the default).
if [ -x "$build/tui/kvmtop" ]; then
	for f in "$root/$bindir/kvmtop" "$root/$mandir/man1/kvmtop.1"; do
		[ -e "$f" ] || fail "not installed: ${f#"$tmp/root"}"
	done
	"$root/$bindir/kvmtop" --help | grep -c '^usage: kvmtop' >/dev/null || fail "kvmtop --help"
	MANPAGER=cat man -M "$root/$mandir" kvmtop 2>/dev/null | grep -c 'kvmtop' >/dev/null ||
		fail "man -M $root/$mandir kvmtop"
fi
# No header outside include/kvmstat/ (memstat.h must not shadow a system one).
[ -z "$(find "$root/$includedir" -maxdepth 1 -type f)" ] || fail "headers outside include/kvmstat/"
python3 "$src/tests/man/manpages.py" installed "$src" "$root/$mandir"

# ---- the commands, as installed
"$root/$bindir/kvmstat" --version | grep -c '^kvmstat ' >/dev/null || fail "kvmstat --version"
"$root/$bindir/kvmstat" -N "$fix/fbsd14/kernel" -M "$fix/fbsd14/vmcore.minidump3" info >"$tmp/info"
python3 - "$fix/fbsd14/truth.json" "$tmp/info" <<'EOF' || fail "installed kvmstat info disagrees with truth.json"
import json, sys
t = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read()
assert t['version'].split('\n')[0] in out, out
assert t['panicstr'] in out, out
EOF

# ---- an outside program, built with pkg-config
export PKG_CONFIG_PATH=$libdir/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$tmp/root    # the .pc names the final prefix
mkdir "$tmp/outside"
cp "$src/tests/vmstat_m_clone.c" "$tmp/outside/vmstat_m.c"
flags=$(pkg-config --cflags --libs libkvmstat) || fail "pkg-config libkvmstat"
echo "pkg-config --cflags --libs libkvmstat: $flags"
case $flags in *"$src"*) fail "pkg-config points into the source tree: $flags" ;; esac
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "${san_flags[@]}" -o "$tmp/outside/vmstat_m" "$tmp/outside/vmstat_m.c" $flags ||
	fail "building an outside program with pkg-config"
LD_LIBRARY_PATH=$libdir "$tmp/outside/vmstat_m" "$fix/fbsd14/kernel" "$fix/fbsd14/vmcore.minidump3" \
	>"$tmp/vmstat_m.out" || fail "the outside program failed"
# (ldd's output is kept first: grep -q closing the pipe early would make
# ldd die of SIGPIPE, a failure under pipefail)
deps=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/outside/vmstat_m")
case $deps in *"$libdir/libkvmstat.so.0"*) ;;
*) fail "the outside program does not use the installed library: $deps" ;; esac
python3 - "$fix/fbsd14/truth.json" "$tmp/vmstat_m.out" <<'EOF' || fail "outside vmstat -m disagrees with truth.json"
import json, sys
t = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read()
rows = [l for l in t['vmstat_m'] if '\x1b' not in l]
missing = [l for l in rows if l not in out]
assert len(rows) > 20 and not missing, 'missing rows: %r' % missing
print('outside vmstat -m: %d rows as truth.json' % len(rows))
EOF

# ---- manual pages through man(1)
MANPAGER=cat man -M "$root/$mandir" kvmstat 2>/dev/null | grep -c 'kvmstat.*crash dumps' >/dev/null ||
	fail "man -M $root/$mandir kvmstat"
MANPAGER=cat man -M "$root/$mandir" memstat_mtl_alloc 2>/dev/null | grep -c 'memstat_mtl_alloc' >/dev/null ||
	fail "man -M $root/$mandir memstat_mtl_alloc"

# ---- the Python module from the prefix, finding the library by itself
(
	unset KVMSTAT_LIB
	cd "$tmp"
	[ -z "$preload" ] || export LD_PRELOAD=$preload
	PYTHONPATH=$root/lib/python3/dist-packages python3 - "$fix" "$root" <<'EOF'
import json, os, sys
import kvmstat
fix, root = sys.argv[1], sys.argv[2]
assert kvmstat.__file__.startswith(root), kvmstat.__file__
lib = kvmstat.load_library()
assert lib._name.startswith(root), 'library not from the prefix: %s' % lib._name
t = json.load(open(os.path.join(fix, 'fbsd14', 'truth.json')))
with kvmstat.open(core=os.path.join(fix, 'fbsd14', 'vmcore.minidump3'),
                  kernel=os.path.join(fix, 'fbsd14', 'kernel')) as k:
    got = {m.kaddr: (m.name, m.bytes, m.count) for m in k.malloc_types()}
want = {int(x['addr'], 16): (x['name'], x['memuse_bytes'], x['inuse'])
        for x in t['malloc']['types']}
assert got == want, 'installed module: malloc types differ from truth.json'
print('python module from the prefix: %s, %d malloc types as truth.json' % (lib._name, len(got)))
EOF
) || fail "the installed Python module"
echo "install: ok"
