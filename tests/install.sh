#!/usr/bin/env bash
# install.sh SRCDIR BUILDDIR - `meson install` into a temporary root and use
# the result as an outside user would:
#   - the files: library, headers under include/kvmstat/, kvmstat.pc and
#     libkvmstat.pc, kvmstat, kvmtop, the man pages (a link for every
#     public function);
#   - a program built outside the tree with `pkg-config --cflags --libs
#     kvmstat` (FreeBSD's `vmstat -m`, written against <memstat.h>), run
#     on a fixture, its rows compared with the generator's truth.json; one
#     that says #include <kvmstat/kvmstat.h>; outside /usr both carry the
#     library's directory as their run path (no LD_LIBRARY_PATH needed);
#   - `man -M PREFIX/share/man kvmstat` and `man ... memstat_mtl_alloc`;
#   - the Python module installed in the directory of python3's own path
#     under the prefix (python/install_dir.py), imported from there with no
#     KVMSTAT_LIB: it finds the installed library by itself.
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
    "$libdir/pkgconfig/kvmstat.pc" \
    "$root/$includedir/kvmstat/kvmstat.h" "$root/$includedir/kvmstat/memstat.h" \
    "$root/$includedir/kvmstat/kvmprof.h" "$root/$bindir/kvmstat" \
    "$root/$mandir/man1/kvmstat.1" \
    "$root/$mandir/man3/kvmstat.3" "$root/$mandir/man3/libmemstat.3" \
    "$root/$mandir/man3/kvmprof.3"; do
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
flags=$(pkg-config --cflags --libs kvmstat) || fail "pkg-config kvmstat"
echo "pkg-config --cflags --libs kvmstat: $flags"
[ "$(pkg-config --cflags --libs libkvmstat)" = "$flags" ] ||
	fail "pkg-config libkvmstat differs: $(pkg-config --cflags --libs libkvmstat)"
case $flags in *"$src"*) fail "pkg-config points into the source tree: $flags" ;; esac
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "${san_flags[@]}" -o "$tmp/outside/vmstat_m" "$tmp/outside/vmstat_m.c" $flags ||
	fail "building an outside program with pkg-config"
# The project's own spelling of the headers.
cat >"$tmp/outside/named.c" <<'EOF'
#include <stdio.h>
#include <kvmstat/kvmstat.h>
#include <kvmstat/memstat.h>
#include <kvmstat/kvmprof.h>
int
main(int argc, char **argv)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd;
	struct memory_type_list *l;
	int rc;

	if (argc != 3 || (kd = kvs_open(argv[1], argv[2], 0, err)) == NULL ||
	    (l = memstat_mtl_alloc()) == NULL)
		return 2;
	rc = memstat_kvm_all(l, kd);
	printf("%d %s\n", rc, memstat_get_name(memstat_mtl_first(l)));
	memstat_mtl_free(l);
	kvs_close(kd);
	return rc != 0;
}
EOF
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "${san_flags[@]}" -o "$tmp/outside/named" "$tmp/outside/named.c" $flags ||
	fail "building a program that includes <kvmstat/kvmstat.h> with pkg-config kvmstat"
LD_LIBRARY_PATH=$libdir "$tmp/outside/named" "$fix/fbsd14/kernel" "$fix/fbsd14/vmcore.minidump3" >/dev/null ||
	fail "the <kvmstat/kvmstat.h> program failed"
# Outside /usr, the installed library's directory is each program's run
# path (pkg-config puts the staging root, its sysroot here, in front).
if [ "$prefix" != /usr ]; then
	final_libdir=${libdir#"$tmp/root"}
	for p in vmstat_m named; do
		rp=$(readelf -d "$tmp/outside/$p" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p;s/.*(RPATH).*\[\(.*\)\]/\1/p')
		case ":$rp:" in *":$final_libdir:"* | *":$libdir:"*) ;;
		*) fail "$p: run path '$rp' lacks $final_libdir (installed programs would need LD_LIBRARY_PATH)" ;; esac
	done
	echo "outside programs' run path: $final_libdir"
fi
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
# Where it went, and whether python3 looks there: the directory of its own
# path under the prefix, when it has one.
init=$(find "$tmp/root" -path '*/kvmstat/__init__.py' | head -1)
[ -n "$init" ] || fail "the Python module was not installed"
pydir=$(dirname "$(dirname "$init")")
final_pydir=${pydir#"$tmp/root"}
python3 - "$prefix" "$final_pydir" <<'EOF' || fail "the Python module is not where python3 looks"
import os, sys
prefix, got = sys.argv[1], sys.argv[2]
lib = os.path.join(prefix, 'lib') + os.sep
mine = [os.path.normpath(d) for d in sys.path if d and os.path.normpath(d).startswith(lib)
        and os.path.basename(d) in ('dist-packages', 'site-packages')]
if mine:
    assert got == mine[0], 'installed in %s, python3 looks in %s' % (got, mine[0])
    print("python module in %s: on python3's path" % got)
else:
    assert got.startswith(lib) and got.endswith('-packages'), got
    print('python module in %s (python3 looks nowhere under %s: PYTHONPATH names it)'
          % (got, prefix))
EOF
(
	unset KVMSTAT_LIB
	cd "$tmp"
	[ -z "$preload" ] || export LD_PRELOAD=$preload
	PYTHONPATH=$pydir python3 - "$fix" "$root" <<'EOF'
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
# ---- pip install . from the tree (the in-tree backend: nothing from the
# network), into a target directory; the module, with the object layer and
# its helpers, finds the build's library through KVMSTAT_LIB.
(
	cd "$tmp"
	python3 -m pip install --quiet --no-deps --no-index --target "$tmp/pip" "$src" \
	    >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log" >&2; exit 1; }
	[ -f "$tmp/pip/kvmstat/py.typed" ] || { echo "no py.typed in the wheel" >&2; exit 1; }
	[ -z "$preload" ] || export LD_PRELOAD=$preload
	KVMSTAT_LIB=$(ls "$build"/libkvmstat/libkvmstat.so) PYTHONPATH=$tmp/pip python3 - "$fix" "$tmp/pip" <<'EOF'
import json, os, sys
import kvmstat
from kvmstat.helpers.freebsd import for_each_proc
fix, where = sys.argv[1], sys.argv[2]
assert kvmstat.__file__.startswith(where), kvmstat.__file__
t = json.load(open(os.path.join(fix, 'fbsd14', 'truth.json')))
with kvmstat.open(core=os.path.join(fix, 'fbsd14', 'vmcore.minidump3'),
                  kernel=os.path.join(fix, 'fbsd14', 'kernel')) as prog:
    got = [(p.p_pid.value_(), p.p_comm.string_().decode()) for p in for_each_proc(prog)]
assert got == [(p['pid'], p['comm']) for p in t['procs']], got
print('pip install .: %s, %d processes as truth.json' % (kvmstat.__file__, len(got)))
EOF
) || fail "pip install . of the Python module"
echo "install: ok"
