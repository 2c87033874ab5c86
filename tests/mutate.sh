#!/usr/bin/env bash
# mutate.sh - does the test suite notice small, plausible bugs?
#
# Copies the source tree to a private directory under /tmp, builds it once,
# checks that the unmodified copy passes, then applies each mutation below on
# its own (a literal text replacement in one file), rebuilds only what its
# suites need in the one scratch build directory, and runs those suites until
# the first failure.  A mutant is KILLED when some test fails, SURVIVED when
# every suite still passes.  The working tree is never touched.
#
#   tests/mutate.sh [-s SRCDIR] [-k] [-l] [NAME...]
#     -s SRCDIR  tree to copy (default: the one holding this script)
#     -k         keep the scratch directory
#     -l         list the mutations and exit
#     NAME...    run only these mutations
#   KVS_MUTATE_SUITES="check_translate check_open"  these suites for every
#                                                   mutation instead of its own
#   KVS_MUTATE_JOBS=2                               meson test processes
#
# Exit status: 0 when every mutant was killed, 1 when one survived, 2 on a
# setup problem (the unmodified copy does not build or pass).
#
# scripts/test.sh runs it (each mutant counts in its summary): one full build,
# then per mutation one recompiled file and the few suites that should kill it.
set -uo pipefail

# name :: file :: occurrence (0 = every) :: text :: replacement :: suites
MUTATIONS=$(cat <<'EOF'
amd64-nx-4k :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_4K 0x000ffffffffff000ULL :: #define ADDR_4K 0x800ffffffffff000ULL :: check_translate check_open
amd64-nx-2m :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_2M 0x000fffffffe00000ULL :: #define ADDR_2M 0x800fffffffe00000ULL :: check_translate check_open
amd64-nx-1g :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_1G 0x000fffffc0000000ULL :: #define ADDR_1G 0x800fffffc0000000ULL :: check_translate check_open
amd64-pat-2m :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_2M 0x000fffffffe00000ULL :: #define ADDR_2M 0x000fffffffe01000ULL :: check_translate check_open
amd64-pat-1g :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_1G 0x000fffffc0000000ULL :: #define ADDR_1G 0x000fffffc0001000ULL :: check_translate check_open
amd64-high-4k :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_4K 0x000ffffffffff000ULL :: #define ADDR_4K 0x0000fffffffff000ULL :: check_translate check_open
amd64-high-2m :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_2M 0x000fffffffe00000ULL :: #define ADDR_2M 0x0000ffffffe00000ULL :: check_translate check_open
amd64-high-1g :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_1G 0x000fffffc0000000ULL :: #define ADDR_1G 0x0000ffffc0000000ULL :: check_translate check_open
amd64-swbits-4k :: libkvmstat/arch/amd64.c :: 1 :: #define ADDR_4K 0x000ffffffffff000ULL :: #define ADDR_4K 0x7ffffffffffff000ULL :: check_translate check_open
amd64-2m-offset-walk :: libkvmstat/arch/amd64.c :: 1 :: (va & (SZ_2M - 1)), SZ_2M, o) :: (va & (SZ_2M / 2 - 1)), SZ_2M, o) :: check_translate check_open
amd64-2m-offset-pmap :: libkvmstat/arch/amd64.c :: 2 :: (va & (SZ_2M - 1)), SZ_2M, o) :: (va & (SZ_2M / 2 - 1)), SZ_2M, o) :: check_translate check_open
amd64-noncanonical-unchecked :: libkvmstat/arch/amd64.c :: 1 :: if (!amd64_canonical(va)) :: if (0 && !amd64_canonical(va)) :: check_translate check_open
amd64-canonical-bit46 :: libkvmstat/arch/amd64.c :: 1 :: (int64_t)(va << 16) >> 16) :: (int64_t)(va << 17) >> 17) :: check_translate check_open
amd64-canonical-bit48 :: libkvmstat/arch/amd64.c :: 1 :: (int64_t)(va << 16) >> 16) :: (int64_t)(va << 15) >> 15) :: check_translate check_open
amd64-dmap-end-inclusive :: libkvmstat/arch/amd64.c :: 1 :: va < x->p.direct_end :: va <= x->p.direct_end :: check_translate check_open
dtrace-sbt-fraction-bit31 :: libkvmstat/os/freebsd/dtrace.c :: 1 :: (sbt & 0xffffffffULL) :: (sbt & 0x7fffffffULL) :: check_translate check_dtrace
malloc-percpu-numfrees :: libkvmstat/os/freebsd/malloc.c :: 1 :: mt->mt_percpu_alloc[c].mtp_numfrees = nf; :: mt->mt_percpu_alloc[c].mtp_numfrees = 0; :: check_malloc check_gdb
malloc-percpu-memalloced :: libkvmstat/os/freebsd/malloc.c :: 1 :: mt->mt_percpu_alloc[c].mtp_memalloced = a; :: mt->mt_percpu_alloc[c].mtp_memalloced = f; :: check_malloc check_gdb
escape-sanitize-off :: common/escape.c :: 1 :: bool ctl = !keep_ctl && (s[i] < 0x20 || s[i] == 0x7f); :: bool ctl = false; :: check_malloc check_cli
escape-c1-allowed :: common/escape.c :: 1 :: (!c1 && cp >= 0x80 && cp <= 0x9f) :: (!c1 && cp >= 0x80 && cp <= 0x7f) :: check_malloc check_cli
symtab-no-underscore :: libkvmstat/types/symtab.c :: 1 :: if (s == NULL && name[0] == '_' && name[1] != '\0') :: if (0) :: check_symtab
symtab-local-beats-global :: libkvmstat/types/symtab.c :: 1 :: return cur->bind == STB_LOCAL && cand->bind != STB_LOCAL; :: return cur->bind == 99 && cand->bind != STB_LOCAL; :: check_symtab
symtab-at-past-end :: libkvmstat/types/symtab.c :: 1 :: addr >= s->value + s->size :: addr > s->value + s->size :: check_symtab
malloc-fieldwise-numfrees :: libkvmstat/os/freebsd/malloc.c :: 1 :: nf = kfield_get(st, L->st_size, &L->numfrees); :: nf = kfield_get(st, L->st_size, &L->numallocs); :: check_malloc
malloc-fieldwise-memalloced :: libkvmstat/os/freebsd/malloc.c :: 1 :: a = kfield_get(st, L->st_size, &L->memalloced); :: a = kfield_get(st, L->st_size, &L->memfreed); :: check_malloc
malloc-empty-list-ok :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (p == 0) { :: if (0) { :: check_badinput
core-shrink-unchecked :: libkvmstat/core/kvs.c :: 1 :: kd->shrunk = (uint64_t)st.st_size < kd->map_len; :: kd->shrunk = false; :: check_badinput
core-fifo-kernel-blocks :: libkvmstat/core/kvs.c :: 1 :: int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); :: int fd = open(path, O_RDONLY | O_CLOEXEC); :: check_badinput
gprof-width-negated :: libkvmstat/os/freebsd/gprof.c :: 1 :: case -64: case -32: case -16: case -8: :: case -64: case -32: case -8: :: check_gprof
raw-any-size :: libkvmstat/source/raw.c :: 1 :: if (a->map_len % 4096 != 0) :: if (0) :: check_badinput
core-dump-opened-rdwr :: libkvmstat/core/kvs.c :: 1 :: kd->core_fd = open(core, O_RDONLY | O_CLOEXEC | O_NONBLOCK); :: kd->core_fd = open(core, O_RDWR | O_CLOEXEC | O_NONBLOCK); :: check_evidence:handles
core-dump-mapped-writable :: libkvmstat/core/kvs.c :: 1 :: PROT_READ, MAP_SHARED, kd->core_fd :: PROT_READ | PROT_WRITE, MAP_SHARED, kd->core_fd :: check_evidence:handles
malloc-wrap-unflagged :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (wrapped || mt->mt_numfrees > mt->mt_numallocs :: if (mt->mt_numfrees > mt->mt_numallocs :: check_evidence:bounded
malloc-list-unbounded-by-dump :: libkvmstat/os/freebsd/malloc.c :: 1 :: kwalk_init(&w, kvs_dump_bound(kd, L.mt_size, MT_MAX_TYPES)); :: kwalk_init(&w, MT_MAX_TYPES); :: check_evidence:bounded
store-vanished-left-viewing :: libkvmstat/memstat/memstat.c :: 1 :: store_leave(mt); :: if (0) store_leave(mt); :: check_malloc
malloc-absent-cpu-not-zeroed :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (mv > 0)             /* absent CPUs read 0 */ :: if (0) :: check_malloc
elf-map-past-filesz :: libkvmstat/source/elfdump.c :: 1 :: if (in >= s->filesz || len > s->filesz - in || :: if (in >= s->filesz || ::  check_source
malloc-fast-sum-unchecked :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (any & bigbits) :: if (any & bigbits & 0) :: check_evidence:bounded
upsert-guess-kaddr-unchecked :: libkvmstat/memstat/memstat.c :: 1 :: if (mt == NULL || mt->mt_kaddr != kaddr || mt->mt_allocator != allocator) :: if (mt == NULL || mt->mt_allocator != allocator) :: check_memstat_list
upsert-guess-allocator-unchecked :: libkvmstat/memstat/memstat.c :: 1 :: if (mt == NULL || mt->mt_kaddr != kaddr || mt->mt_allocator != allocator) :: if (mt == NULL || mt->mt_kaddr != kaddr) :: check_memstat_list
flow-never-clears :: libkvmstat/memstat/memstat.c :: 1 :: if (!mt->mt_flow_only) { :: if (0) { :: check_memstat_list
flow-kept-after-walker-counters :: libkvmstat/memstat/memstat.c :: 1 :: mt->mt_flow_only = false; :: ; :: check_memstat_list
krec-memo-count-only :: libkvmstat/core/kread.c :: 1 :: if (memo[0].addr == n && memcmp(memo + 1, r, n * sizeof(*r)) == 0) { :: if (memo[0].addr == n) { :: check_kread
handle-memo-any-tag :: libkvmstat/core/kvs.c :: 1 :: if (kd->memo[i].tag == tag) :: if (kd->memo[i].tag != NULL) :: check_open
krec-reverse-ties :: libkvmstat/core/kread.c :: 1 :: down += r[i - 1].addr > r[i].addr; :: down += r[i - 1].addr >= r[i].addr; :: check_kread
uma-counter-last-cpu :: libkvmstat/os/freebsd/uma.c :: 2 :: for (c = 0; c <= cpus->maxid; c++) { :: for (c = 0; c < cpus->maxid; c++) { :: check_uma
uma-counter9-absent-cpu :: libkvmstat/os/freebsd/uma.c :: 1 :: if (!kcpu_present(cpus, c)) :: if (0 && !kcpu_present(cpus, c)) :: check_uma
uma-cache-absent-cpu :: libkvmstat/os/freebsd/uma.c :: 1 :: if (internal || !kcpu_present(cpus, c)) { :: if (internal) { :: check_uma
uma-kegfree-secondary :: libkvmstat/os/freebsd/uma.c :: 1 :: !secondary || first, &next, &pend) :: true, &next, &pend) :: check_uma
uma-keg-domain-swapped :: libkvmstat/os/freebsd/uma.c :: 1 :: mt->mt_dom_kegfree[d] = fi; :: mt->mt_dom_kegfree[L->ndomains - 1 - d] = fi; :: check_uma
uma-clamp-missing :: libkvmstat/os/freebsd/uma.c :: 1 :: if (a < f) :: if (0 && a < f) :: check_uma
uma-xdomain-from-fails :: libkvmstat/os/freebsd/uma.c :: 1 :: it->mt->mt_xdomain = it->sum[3]; :: it->mt->mt_xdomain = it->sum[2]; :: check_uma
uma-percpu-free-running :: libkvmstat/os/freebsd/uma.c :: 1 :: pc[c].mtp_free = cached; :: pc[c].mtp_free = free_sum + cached; :: check_uma
uma-counter-error-unnamed :: libkvmstat/os/freebsd/uma.c :: 1 :: return kerr_push(&kd->err, "zone %s", it->mt->mt_name); :: return kerr_push(&kd->err, "a zone"); :: check_uma
malloc-6-absent-cpu :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (!kcpu_present(cpus, c)) :: if (0 && !kcpu_present(cpus, c)) :: check_malloc
malloc-recheck-absent-cpu :: libkvmstat/os/freebsd/malloc.c :: 2 :: if (!kcpu_present(cpus, c)) :: if (0 && !kcpu_present(cpus, c)) :: check_malloc
malloc-recheck-not-reset :: libkvmstat/os/freebsd/malloc.c :: 1 :: it->alloced = it->freed = it->nallocs = it->nfrees = it->mask = 0; :: it->mask = 0; :: check_malloc
malloc-6-last-cpu :: libkvmstat/os/freebsd/malloc.c :: 1 :: n = cpus->maxid + 1 - c0; :: n = cpus->maxid - c0; :: check_malloc
malloc-5-numfrees-unclamped :: libkvmstat/os/freebsd/malloc.c :: 1 :: mt->mt_numfrees = calls >= inuse ? calls - inuse : 0; :: mt->mt_numfrees = calls - inuse; :: check_malloc
malloc-recheck-error-cpu-unnamed :: libkvmstat/os/freebsd/malloc.c :: 2 :: kerr_push(&kd->err, "CPU %d statistics", c); :: (void)c; :: check_malloc
abort-vanished-not-restored :: libkvmstat/memstat/memstat.c :: 1 :: mt->mt_vanished = mt->mt_saved_vanished; :: ; :: check_memstat_list
abort-maxcpus-not-restored :: libkvmstat/memstat/memstat.c :: 1 :: mt->mt_maxcpus = mt->mt_saved_maxcpus; :: ; :: check_memstat_list
snapshot-name-saved-kept :: libkvmstat/memstat/memstat.c :: 1 :: mt->mt_name_saved = false; :: ; :: check_memstat_list
abort-percpu-valid-not-restored :: libkvmstat/memstat/memstat.c :: 1 :: mt->mt_percpu_valid = mt->mt_saved_percpu_valid; :: ; :: check_memstat_list
malloc-tsum-unchecked :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (anys & bigbits) :: if (anys & bigbits & 0) :: check_evidence:bounded
malloc-tsum-absent-cpu-not-zeroed :: libkvmstat/os/freebsd/malloc.c :: 1 :: if (!kcpu_present(cpus, c) && mv > 0) :: if (0) :: check_malloc
malloc-tsum-percpu-mask :: libkvmstat/os/freebsd/malloc.c :: 1 :: memcpy(pa + row[k] + 32, &m, sizeof(m)); :: (void)m; :: check_malloc check_gdb
malloc-tsum-percpu-counts :: libkvmstat/os/freebsd/malloc.c :: 1 :: memcpy(pa + row[k], &v, sizeof(v)); :: (void)v; :: check_malloc check_gdb
malloc-tsum-sum-mask :: libkvmstat/os/freebsd/malloc.c :: 1 :: it->mask |= mask; :: (void)mask; :: check_malloc
peek-page-len-unchecked :: libkvmstat/core/kvs.c :: 1 :: kva >> 12 == kd->peek_vpn && len <= 4096 - (kva & 4095) :: kva >> 12 == kd->peek_vpn :: check_translate check_malloc check_uma
uma-cache3-sign-unchecked :: libkvmstat/os/freebsd/uma.c :: 1 :: if ((c0 | c1 | c2) >= 0 && c0 :: if (c0 :: check_uma
uma-cache3-room-unchecked :: libkvmstat/os/freebsd/uma.c :: 1 :: c1 <= (int16_t)le16toh(y[1]) && :: c1 != 12345 && :: check_uma
uma-cache3-sum :: libkvmstat/os/freebsd/uma.c :: 1 :: cached = (uint64_t)c0 + (uint64_t)c1 + (uint64_t)c2; :: cached = (uint64_t)c0 + (uint64_t)c1; :: check_uma
peek-page-len-wraps :: libkvmstat/core/kvs.c :: 1 :: len <= 4096 - (kva & 4095)) :: (kva & 4095) + len <= 4096) :: check_translate
peek-miss-len-wraps :: libkvmstat/core/kvs.c :: 1 :: if (len <= 4096 - off) :: if (off + len <= 4096) :: check_translate
notify-handler-ignored :: libkvmstat/types/cache.c :: 1 :: if (c->note == NULL || !c->note->custom) { :: if (c->note == NULL || c->note->custom) { :: check_layout_cache
notify-null-to-stderr :: libkvmstat/core/kvs.c :: 1 :: kd->note.custom = true; :: kd->note.custom = fn != NULL; :: check_layout_cache
EOF
)

here=$(cd "$(dirname "$0")/.." && pwd)
src=$here
keep=0
list=0
while getopts "s:kl" o; do
  case $o in
    s) src=$(cd "$OPTARG" && pwd) ;;
    k) keep=1 ;;
    l) list=1 ;;
    *) sed -n '2,22p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
only=("$@")

field() { # field N of a mutation line (fields separated by " :: ")
  awk -v n="$2" 'BEGIN { FS = " :: " } { print $n }' <<<"$1"
}

if [ $list -eq 1 ]; then
  while IFS= read -r m; do
    echo "$(field "$m" 1): $(field "$m" 2)"
  done <<<"$MUTATIONS"
  exit 0
fi

work=$(mktemp -d /tmp/kvs-mutate.XXXXXX)
cleanup() { [ $keep -eq 1 ] && echo "kept $work" || rm -rf "$work"; }
trap cleanup EXIT
tree=$work/src
build=$work/build
mkdir -p "$tree"

# The tree as a developer has it: tracked and new files, no build output.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -a {} "$tree"/ 2>/dev/null)
else
  (cd "$src" && tar -c --exclude='./build*' --exclude='./.git' . | tar -x -C "$tree")
fi

jobs=${KVS_MUTATE_JOBS:-2}
# run_tests SUITE...: those suites (KVS_MUTATE_SUITES instead, if set), built
# first: their programs and the command-line tools they run, nothing else.
# SUITE:CASE runs only that Check test case of the suite (CK_RUN_CASE).
run_tests() {
  local s=() t=(analyzers/kvmstat) x ck=
  for x in ${KVS_MUTATE_SUITES:-$*}; do
    [[ $x == *:* ]] && ck=${x#*:}
    s+=("${x%%:*}")
    t+=("tests/${x%%:*}")
  done
  [[ " ${s[*]} " == *" check_tui "* ]] && t+=(tui/kvmtop)
  ninja -C "$build" "${t[@]}" >"$work/build.log" 2>&1 || return 3
  env ${ck:+CK_RUN_CASE=$ck} meson test -C "$build" --no-rebuild --maxfail 1 \
    --num-processes "$jobs" "${s[@]}" >"$work/test.log" 2>&1
}
# Every suite some mutation names, for the checks of the unmodified tree.
all_suites=$(awk 'BEGIN { FS = " :: " } { print $6 }' <<<"$MUTATIONS" | tr ' ' '\n' | sort -u | paste -sd' ' -)

echo "mutate: building $tree"
if ! meson setup "$build" "$tree" >"$work/setup.log" 2>&1 || ! ninja -C "$build" >"$work/build.log" 2>&1; then
  echo "mutate: the unmodified tree does not build (see $work/build.log)"; keep=1; exit 2
fi
if ! run_tests $all_suites; then
  echo "mutate: the unmodified tree fails its tests (see $work/test.log)"; keep=1; exit 2
fi

# Replace occurrence N (0: every one) of literal text FROM by TO in FILE.
apply() {
  FROM=$3 TO=$4 N=$2 perl -0pi -e 'my $n = 0; s/\Q$ENV{FROM}\E/(++$n == $ENV{N} || $ENV{N} == 0) ? $ENV{TO} : $&/ge' "$1"
}

killed=0
survived=0
while IFS= read -r m; do
  name=$(field "$m" 1)
  file=$(field "$m" 2)
  occ=$(field "$m" 3)
  from=$(field "$m" 4)
  to=$(field "$m" 5)
  msuites=$(field "$m" 6)
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $name "* ]]; then
    continue
  fi
  verdict=
  cp "$tree/$file" "$work/orig"
  apply "$tree/$file" "$occ" "$from" "$to"
  if cmp -s "$tree/$file" "$work/orig"; then
    verdict="NOT APPLIED (text not found)"
    survived=$((survived + 1))
  else
    run_tests $msuites
    rc=$?
  fi
  if [ -n "${verdict:-}" ]; then
    :
  elif [ $rc -eq 3 ]; then
    verdict="DOES NOT BUILD (fix the mutation)"
    survived=$((survived + 1))
  elif [ $rc -eq 0 ] && ! grep -qE '^ *[0-9]+/[0-9]+ .* OK ' "$work/test.log"; then
    verdict="NO TEST RAN (fix the suites)"
    survived=$((survived + 1))
  elif [ $rc -eq 0 ]; then
    verdict="SURVIVED"
    survived=$((survived + 1))
  else
    by=$(grep -E '^ *[0-9]+/[0-9]+ +[a-z_]+ +(FAIL|TIMEOUT)' "$work/test.log" | awk '{print $2}' | sort -u | paste -sd, -)
    verdict="killed by ${by:-?}"
    killed=$((killed + 1))
  fi
  # A plain copy: the restored file must look newer than the mutant's
  # objects, or ninja would keep them.
  cp "$work/orig" "$tree/$file"
  touch "$tree/$file"
  printf '%-30s %s\n' "$name" "$verdict"
done <<<"$MUTATIONS"

# Every file is back: the copy must pass again, or the verdicts are suspect.
if ! run_tests $all_suites; then
  echo "mutate: the restored tree no longer passes (see $work/test.log): verdicts unreliable"
  keep=1
  exit 2
fi
echo "mutate: $killed killed, $survived survived"
[ $survived -eq 0 ]
