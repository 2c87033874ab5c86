/*
 * check_gdb.c - the independent check: gdb, given the fixture kernel and the
 * generator's ELF core addressed by virtual address, must read the same
 * values libkvmstat reads from the minidumps, the ELF full dump and the raw
 * image (different files, different translation paths, a different DWARF
 * reader).
 *
 * One gdb run serves the whole suite: main() writes a gdb command file that
 * prints a dozen scalars, then walks kmemstatistics and every UMA keg and
 * cache zone, printing each malloc type's per-CPU statistics and each zone's
 * counters (summed the way uma.c documents: counter(9) over present CPUs,
 * per-CPU cache counts, full buckets per domain, keg free items on the
 * primary zone).  The tests compare every line with the library's results.
 *
 * gdb is a required oracle (see testutil.c): without it the suite fails.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvmstat.h"
#include "memstat.h"
#include "testutil.h"

#define M_VERSION 2020110501ULL  /* struct malloc_type ks_version on 13+ */
#define CPUS_MAX 1024            /* bound of the per-CPU bookkeeping here */

static const char *const cores[] = {
	"fbsd14/vmcore.minidump3", "fbsd14/vmcore.minidump1", "fbsd14/vmcore.elf", "fbsd14/mem.raw",
};

/*
 * The gdb program.  Lines it prints:
 *   S <name> <decimal>            a scalar
 *   SV <name> [<string>]          a string
 *   MTC <type> <cpu> <memalloced> <memfreed> <numallocs> <numfrees> <size>
 *   MT <type> ver=<ks_version> name=<ks_shortdesc>
 *   UZC <zone> <cpu> <cached items>
 *   UZD <zone> <domain> <full-bucket items> <keg free items>
 *   UZ <zone> a=.. f=.. fail=.. xd=.. sleeps=.. max=.. size=.. rsize=..
 *      cached=.. zonefree=.. kegfree=.. name=<uz_name>
 *   KVS-END                        the script ran to its end
 * Only CPUs set in all_cpus (0..mp_maxid) are visited.  The counter(9)
 * stride is UMA_PCPU_ALLOC_SIZE (a page); malloc statistics are at
 * __pcpu + mti_stats + cpu * sizeof(struct pcpu).
 */
static const char gdb_script[] =
    "set pagination off\n"
    "set width 0\n"
    "set print elements 0\n"
    "set confirm off\n"
    "define kvs_present\n"
    "  set $present = (all_cpus.__bits[$arg0 / 64] >> ($arg0 % 64)) & 1\n"
    "end\n"
    "define kvs_counter\n"
    "  set $csum = 0\n"
    "  if $arg0 != 0\n"
    "    set $cc = 0\n"
    "    while $cc <= mp_maxid\n"
    "      kvs_present $cc\n"
    "      if $present\n"
    "        set $csum = $csum + *(unsigned long *)((char *)__pcpu + $arg0 + $cc * 4096)\n"
    "      end\n"
    "      set $cc = $cc + 1\n"
    "    end\n"
    "  end\n"
    "end\n"
    /* A cache bucket counts when 0 <= cnt <= entries. */
    "define kvs_bucket\n"
    "  if $arg0 >= 0 && $arg0 <= $arg1\n"
    "    set $cached = $cached + $arg0\n"
    "  end\n"
    "end\n"
    /* kvs_zone <zone> <keg or 0> <primary> */
    "define kvs_zone\n"
    "  set $z = (struct uma_zone *)$arg0\n"
    "  set $k = (struct uma_keg *)$arg1\n"
    "  kvs_counter $z->uz_allocs\n"
    "  set $a = $csum\n"
    "  kvs_counter $z->uz_frees\n"
    "  set $f = $csum\n"
    "  kvs_counter $z->uz_fails\n"
    "  set $fail = $csum\n"
    "  kvs_counter $z->uz_xdomain\n"
    "  set $xd = $csum\n"
    "  if $a < $f\n"
    "    set $a = $f\n"
    "  end\n"
    "  if $k != 0\n"
    "    set $size = $k->uk_size\n"
    "    set $rsize = $k->uk_rsize\n"
    "    set $internal = ($k->uk_flags & 0x20000000) != 0\n"
    "  else\n"
    "    set $size = $z->uz_size\n"
    "    set $rsize = $z->uz_size\n"
    "    set $internal = 0\n"
    "  end\n"
    "  set $free = 0\n"
    "  set $c = 0\n"
    "  while $c <= mp_maxid && !$internal\n"
    "    kvs_present $c\n"
    "    if $present\n"
    "      set $uc = &$z->uz_cpu[$c]\n"
    "      set $a = $a + $uc->uc_allocs\n"
    "      set $f = $f + $uc->uc_frees\n"
    "      set $cached = 0\n"
    "      kvs_bucket $uc->uc_freebucket.ucb_cnt $uc->uc_freebucket.ucb_entries\n"
    "      kvs_bucket $uc->uc_allocbucket.ucb_cnt $uc->uc_allocbucket.ucb_entries\n"
    "      kvs_bucket $uc->uc_crossbucket.ucb_cnt $uc->uc_crossbucket.ucb_entries\n"
    "      printf \"UZC 0x%lx %d %lu\\n\", $z, $c, $cached\n"
    "      set $free = $free + $cached\n"
    "    end\n"
    "    set $c = $c + 1\n"
    "  end\n"
    "  set $zonefree = 0\n"
    "  set $kegfree = 0\n"
    "  set $d = 0\n"
    "  while $d < vm_ndomains\n"
    "    set $zd = (struct uma_zone_domain *)&$z->uz_cpu[mp_maxid + 1] + $d\n"
    "    set $dz = 0\n"
    "    set $b = $zd->uzd_buckets.stqh_first\n"
    "    while $b != 0\n"
    "      if $b->ub_cnt > 0\n"
    "        set $dz = $dz + $b->ub_cnt\n"
    "      end\n"
    "      set $b = $b->ub_link.stqe_next\n"
    "    end\n"
    "    set $dk = 0\n"
    "    if $k != 0 && $arg2\n"
    "      set $dk = $k->uk_domain[$d].ud_free_items\n"
    "    end\n"
    "    printf \"UZD 0x%lx %d %lu %lu\\n\", $z, $d, $dz, $dk\n"
    "    set $zonefree = $zonefree + $dz\n"
    "    set $kegfree = $kegfree + $dk\n"
    "    set $d = $d + 1\n"
    "  end\n"
    "  printf \"UZ 0x%lx a=%lu f=%lu fail=%lu xd=%lu sleeps=%lu max=%lu size=%lu rsize=%lu "
    "cached=%lu zonefree=%lu kegfree=%lu name=%s\\n\", $z, $a, $f, $fail, $xd, $z->uz_sleeps, "
    "$z->uz_max_items, $size, $rsize, $free, $zonefree, $kegfree, $z->uz_name\n"
    "end\n"
    /* Scalars. */
    "printf \"SV version [%s]\\n\", version\n"
    "printf \"S mp_ncpus %lu\\n\", (unsigned long)mp_ncpus\n"
    "printf \"S mp_maxid %lu\\n\", (unsigned long)mp_maxid\n"
    "printf \"S msgbufp %lu\\n\", (unsigned long)msgbufp\n"
    "printf \"S msg_size %lu\\n\", (unsigned long)msgbufp->msg_size\n"
    "printf \"S msg_wseq %lu\\n\", (unsigned long)msgbufp->msg_wseq\n"
    "printf \"S msg_ptr %lu\\n\", (unsigned long)msgbufp->msg_ptr\n"
    "printf \"S kmemstatistics %lu\\n\", (unsigned long)kmemstatistics\n"
    "printf \"S ks_next %lu\\n\", (unsigned long)kmemstatistics->ks_next\n"
    "printf \"S mti_stats %lu\\n\", (unsigned long)kmemstatistics->ks_mti.mti_stats\n"
    "printf \"S next_version %lu\\n\", (unsigned long)kmemstatistics->ks_next->ks_version\n"
    "printf \"SV next_name [%s]\\n\", kmemstatistics->ks_next->ks_shortdesc\n"
    /* Every UMA zone: kegs' zones, then cache-only zones. */
    "set $kg = uma_kegs.lh_first\n"
    "while $kg != 0\n"
    "  set $first = 1\n"
    "  set $zz = $kg->uk_zones.lh_first\n"
    "  while $zz != 0\n"
    "    set $prim = ($kg->uk_flags & 0x200) == 0 || $first\n"
    "    kvs_zone $zz $kg $prim\n"
    "    set $first = 0\n"
    "    set $zz = ((struct uma_zone *)$zz)->uz_link.le_next\n"
    "  end\n"
    "  set $kg = $kg->uk_link.le_next\n"
    "end\n"
    "set $zz = uma_cachezones.lh_first\n"
    "while $zz != 0\n"
    "  kvs_zone $zz 0 0\n"
    "  set $zz = ((struct uma_zone *)$zz)->uz_link.le_next\n"
    "end\n"
    /* Every malloc type. */
    "set $mt = kmemstatistics\n"
    "while $mt != 0\n"
    "  set $c = 0\n"
    "  while $c <= mp_maxid\n"
    "    kvs_present $c\n"
    "    if $present\n"
    "      set $s = (struct malloc_type_stats *)((char *)__pcpu + "
    "(unsigned long)$mt->ks_mti.mti_stats + $c * sizeof(struct pcpu))\n"
    "      printf \"MTC 0x%lx %d %lu %lu %lu %lu %lu\\n\", $mt, $c, $s->mts_memalloced, "
    "$s->mts_memfreed, $s->mts_numallocs, $s->mts_numfrees, $s->mts_size\n"
    "    end\n"
    "    set $c = $c + 1\n"
    "  end\n"
    "  printf \"MT 0x%lx ver=%lu name=%s\\n\", $mt, $mt->ks_version, $mt->ks_shortdesc\n"
    "  set $mt = $mt->ks_next\n"
    "end\n"
    "printf \"KVS-END\\n\"\n";

/* gdb's output, produced once by main() before the tests fork. */
static char *gdb_out;

static char *
run_gdb(void)
{
	char script[] = "/tmp/kvsgdb.XXXXXX", cmd[8192];
	char kernel[4096];
	int fd, st;
	char *out;

	fd = mkstemp(script);
	if (fd < 0)
		return NULL;
	if (write(fd, gdb_script, sizeof(gdb_script) - 1) != (ssize_t)(sizeof(gdb_script) - 1)) {
		close(fd);
		unlink(script);
		return NULL;
	}
	close(fd);
	snprintf(kernel, sizeof(kernel), "%s", fixture_path("fbsd14/kernel"));
	snprintf(cmd, sizeof(cmd), "gdb -batch -nx -x %s %s %s 2>&1", script, kernel,
	    fixture_path("fbsd14/vmcore.kva.elf"));
	out = run_capture(cmd, &st);
	unlink(script);
	return out;
}

/* The whole gdb run must have worked. */
static void
gdb_ok(void)
{
	ck_assert_msg(gdb_out != NULL, "gdb could not be run");
	ck_assert_msg(strstr(gdb_out, "\nKVS-END\n") != NULL, "gdb script did not finish:\n%s", gdb_out);
}

/* The line starting with `prefix` (after a newline), or NULL. */
static const char *
gdb_line(const char *prefix)
{
	const char *p = gdb_out;
	size_t n = strlen(prefix);

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, n) == 0)
			return p;
	return NULL;
}

static uint64_t
gdb_scalar(const char *name)
{
	char prefix[128];
	const char *l;

	snprintf(prefix, sizeof(prefix), "S %s ", name);
	l = gdb_line(prefix);
	ck_assert_msg(l != NULL, "gdb printed no %s:\n%s", name, gdb_out);
	return strtoull(l + strlen(prefix), NULL, 10);
}

/* SV <name> [<text>]: compare with ours. */
static void
gdb_string_eq(const char *name, const char *ours)
{
	char prefix[128];
	const char *l;

	snprintf(prefix, sizeof(prefix), "SV %s [", name);
	l = gdb_line(prefix);
	ck_assert_msg(l != NULL, "gdb printed no %s", name);
	l += strlen(prefix);
	ck_assert_msg(strncmp(l, ours, strlen(ours)) == 0 && l[strlen(ours)] == ']',
	    "%s: gdb [%.60s] ours [%s]", name, l, ours);
}

/* Value of "key=<decimal>" on the line l (before its newline). */
static uint64_t
kv(const char *l, const char *key)
{
	char k[64];
	const char *end = strchr(l, '\n'), *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(l, k);
	ck_assert_msg(p != NULL && (end == NULL || p < end), "no %s in %.80s", key, l);
	return strtoull(p + strlen(k), NULL, 10);
}

/* The text after " name=" up to the newline, into buf. */
static void
line_name(const char *l, char *buf, size_t len)
{
	const char *p = strstr(l, " name="), *end;

	ck_assert_ptr_nonnull(p);
	p += 6;
	end = strchr(p, '\n');
	ck_assert_ptr_nonnull(end);
	snprintf(buf, len, "%.*s", (int)(end - p), p);
}

static kvs_t *
open_core(int i)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path(cores[i]), 0, err);

	ck_assert_msg(kd != NULL, "%s", err);
	return kd;
}

static uint64_t
our_member_u(kvs_t *kd, uint64_t base, const char *type, const char *m)
{
	struct kvs_typeinfo ti;
	uint64_t v = 0;

	ck_assert_int_eq(kvs_member(kd, type, m, &ti), 0);
	ck_assert_int_le(ti.size, 8);
	ck_assert_int_eq(kvs_read(kd, base + ti.offset, &v, ti.size), 0);
	return v;
}

static uint64_t
our_sym_u(kvs_t *kd, const char *name, size_t size)
{
	uint64_t a, v = 0;

	ck_assert_int_eq(kvs_symbol(kd, name, &a, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, a, &v, size), 0);
	return v;
}

static struct memory_type *
find_kaddr(struct memory_type_list *l, int allocator, uint64_t addr)
{
	struct memory_type *mt;

	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		if (memstat_get_allocator(mt) == allocator && memstat_get_kaddr(mt) == addr)
			return mt;
	return NULL;
}

START_TEST(scalars_equal_gdb)
{
	kvs_t *kd;
	uint64_t a, mbp, head, second, desc;
	char ours[512];

	gdb_ok();
	kd = open_core(_i);
	/* version string */
	ck_assert_int_eq(kvs_symbol(kd, "version", &a, NULL), 0);
	ck_assert_int_ge(kvs_read_string(kd, a, ours, sizeof(ours), NULL), 0);
	gdb_string_eq("version", ours);
	/* integers and struct members through DWARF on our side */
	ck_assert_uint_eq(our_sym_u(kd, "mp_ncpus", 4), gdb_scalar("mp_ncpus"));
	ck_assert_uint_eq(our_sym_u(kd, "mp_maxid", 4), gdb_scalar("mp_maxid"));
	mbp = our_sym_u(kd, "msgbufp", 8);
	ck_assert_uint_eq(mbp, gdb_scalar("msgbufp"));
	ck_assert_uint_eq(our_member_u(kd, mbp, "struct msgbuf", "msg_size"), gdb_scalar("msg_size"));
	ck_assert_uint_eq(our_member_u(kd, mbp, "struct msgbuf", "msg_wseq"), gdb_scalar("msg_wseq"));
	ck_assert_uint_eq(our_member_u(kd, mbp, "struct msgbuf", "msg_ptr"), gdb_scalar("msg_ptr"));
	head = our_sym_u(kd, "kmemstatistics", 8);
	ck_assert_uint_eq(head, gdb_scalar("kmemstatistics"));
	second = our_member_u(kd, head, "struct malloc_type", "ks_next");
	ck_assert_uint_eq(second, gdb_scalar("ks_next"));
	ck_assert_uint_eq(our_member_u(kd, head, "struct malloc_type", "ks_mti.mti_stats"),
	    gdb_scalar("mti_stats"));
	ck_assert_uint_eq(our_member_u(kd, second, "struct malloc_type", "ks_version"),
	    gdb_scalar("next_version"));
	/* a name that straddles pages, read through the list */
	desc = our_member_u(kd, second, "struct malloc_type", "ks_shortdesc");
	ck_assert_int_ge(kvs_read_string(kd, desc, ours, sizeof(ours), NULL), 0);
	gdb_string_eq("next_name", ours);
	kvs_close(kd);
}
END_TEST

/* Every malloc type: totals and per-CPU records. */
START_TEST(malloc_types_equal_gdb)
{
	kvs_t *kd;
	struct memory_type_list *l = memstat_mtl_alloc();
	const char *p, *warn;
	size_t ntypes = 0, nbad = 0;

	gdb_ok();
	kd = open_core(_i);
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
	for (p = gdb_line("MT "); p != NULL; p = strstr(p, "\nMT "), p = p ? p + 1 : NULL) {
		uint64_t addr = strtoull(p + 3, NULL, 16), ver = kv(p, "ver");
		uint64_t ma = 0, mf = 0, na = 0, nf = 0, mask = 0;
		struct memory_type *mt = find_kaddr(l, ALLOCATOR_MALLOC, addr);
		char name[512], pfx[64];
		const char *c;
		int seen[CPUS_MAX] = { 0 };
		uint64_t ncpu = 0;

		if (ver != M_VERSION) {
			/* A bad version is skipped with a warning, never listed. */
			ck_assert_msg(mt == NULL, "type 0x%" PRIx64 " (version %" PRIu64 ") listed", addr, ver);
			nbad++;
			continue;
		}
		ck_assert_msg(mt != NULL, "type 0x%" PRIx64 " missing", addr);
		ntypes++;
		line_name(p, name, sizeof(name));
		ck_assert_msg(strncmp(memstat_get_name(mt), name, MEMTYPE_MAXNAME - 1) == 0 &&
		    strlen(memstat_get_name(mt)) == (strlen(name) < MEMTYPE_MAXNAME - 1 ?
		    strlen(name) : MEMTYPE_MAXNAME - 1), "name [%s] gdb [%s]", memstat_get_name(mt), name);
		/* The MTC lines of this type precede its MT line. */
		snprintf(pfx, sizeof(pfx), "MTC 0x%" PRIx64 " ", addr);
		for (c = gdb_line(pfx); c != NULL && c < p; c = strstr(c + 1, pfx)) {
			unsigned long long v[5];
			int cpu;
			ck_assert_int_eq(sscanf(c + strlen(pfx), "%d %llu %llu %llu %llu %llu", &cpu,
			    &v[0], &v[1], &v[2], &v[3], &v[4]), 6);
			ck_assert(cpu >= 0 && cpu < CPUS_MAX);
			seen[cpu] = 1;
			ncpu++;
			ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, cpu), v[0]);
			ck_assert_uint_eq(memstat_get_percpu_memfreed(mt, cpu), v[1]);
			ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, cpu), v[2]);
			ck_assert_uint_eq(memstat_get_percpu_numfrees(mt, cpu), v[3]);
			ck_assert_uint_eq(memstat_get_percpu_sizemask(mt, cpu), v[4]);
			ma += v[0];
			mf += v[1];
			na += v[2];
			nf += v[3];
			mask |= v[4];
		}
		ck_assert_uint_eq(ncpu, gdb_scalar("mp_ncpus"));
		/* CPUs outside all_cpus contribute nothing. */
		for (unsigned cpu = 0; cpu < memstat_get_maxcpus(mt) && cpu < CPUS_MAX; cpu++)
			if (!seen[cpu]) {
				ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, (int)cpu), 0);
				ck_assert_uint_eq(memstat_get_percpu_numfrees(mt, (int)cpu), 0);
				ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, (int)cpu), 0);
			}
		ck_assert_uint_eq(memstat_get_memalloced(mt), ma);
		ck_assert_uint_eq(memstat_get_memfreed(mt), mf);
		ck_assert_uint_eq(memstat_get_numallocs(mt), na);
		ck_assert_uint_eq(memstat_get_numfrees(mt), nf);
		ck_assert_uint_eq(memstat_get_sizemask(mt), mask);
		ck_assert_uint_eq(memstat_get_bytes(mt), ma - mf);
		ck_assert_uint_eq(memstat_get_count(mt), na - nf);
	}
	ck_assert_uint_gt(ntypes, 40);
	ck_assert_uint_eq(memstat_mtl_count(l), ntypes);
	ck_assert_uint_eq(kvs_warnings(kd, &warn), nbad);
	memstat_mtl_free(l);
	kvs_close(kd);
}
END_TEST

/* Every UMA zone: counters, cache and bucket counts, per CPU and domain. */
START_TEST(uma_zones_equal_gdb)
{
	kvs_t *kd;
	struct memory_type_list *l = memstat_mtl_alloc();
	const char *p;
	size_t nzones = 0, ncaches = 0;

	gdb_ok();
	kd = open_core(_i);
	ck_assert_msg(memstat_kvm_uma(l, kd) == 0, "%s", kvs_geterr(kd));
	for (p = gdb_line("UZ "); p != NULL; p = strstr(p, "\nUZ "), p = p ? p + 1 : NULL) {
		uint64_t addr = strtoull(p + 3, NULL, 16);
		uint64_t a = kv(p, "a"), f = kv(p, "f"), size = kv(p, "size");
		uint64_t zonefree = kv(p, "zonefree"), kegfree = kv(p, "kegfree");
		struct memory_type *mt = find_kaddr(l, ALLOCATOR_UMA, addr);
		char name[512], pfx[64];
		const char *c;
		unsigned ndom = 0;
		uint64_t ncpu = 0;

		ck_assert_msg(mt != NULL, "zone 0x%" PRIx64 " missing", addr);
		nzones++;
		line_name(p, name, sizeof(name));
		ck_assert_str_eq(memstat_get_name(mt), name);
		ck_assert_uint_eq(memstat_get_numallocs(mt), a);
		ck_assert_uint_eq(memstat_get_numfrees(mt), f);
		ck_assert_uint_eq(memstat_get_failures(mt), kv(p, "fail"));
		ck_assert_uint_eq(memstat_get_xdomain(mt), kv(p, "xd"));
		ck_assert_uint_eq(memstat_get_sleeps(mt), kv(p, "sleeps"));
		ck_assert_uint_eq(memstat_get_countlimit(mt), kv(p, "max"));
		ck_assert_uint_eq(memstat_get_byteslimit(mt), kv(p, "max") * size);
		ck_assert_uint_eq(memstat_get_size(mt), size);
		ck_assert_uint_eq(memstat_get_rsize(mt), kv(p, "rsize"));
		ck_assert_uint_eq(memstat_get_zonefree(mt), zonefree);
		ck_assert_uint_eq(memstat_get_kegfree(mt), kegfree);
		ck_assert_uint_eq(memstat_get_free(mt), kv(p, "cached") + zonefree + kegfree);
		ck_assert_uint_eq(memstat_get_count(mt), a - f);
		ck_assert_uint_eq(memstat_get_memalloced(mt), a * size);
		ck_assert_uint_eq(memstat_get_memfreed(mt), f * size);
		ck_assert_uint_eq(memstat_get_bytes(mt), a * size - f * size);
		/* Per CPU (the UZC/UZD lines of a zone precede its UZ line). */
		snprintf(pfx, sizeof(pfx), "UZC 0x%" PRIx64 " ", addr);
		for (c = gdb_line(pfx); c != NULL && c < p; c = strstr(c + 1, pfx)) {
			int cpu;
			unsigned long long cached;
			ck_assert_int_eq(sscanf(c + strlen(pfx), "%d %llu", &cpu, &cached), 2);
			ck_assert_uint_eq(memstat_get_percpu_free(mt, cpu), cached);
			ncpu++;
		}
		/* Every present CPU's cache, or none (an internal keg's zone). */
		ck_assert(ncpu == 0 || ncpu == gdb_scalar("mp_ncpus"));
		ncaches += ncpu != 0;
		snprintf(pfx, sizeof(pfx), "UZD 0x%" PRIx64 " ", addr);
		for (c = gdb_line(pfx); c != NULL && c < p; c = strstr(c + 1, pfx)) {
			unsigned d;
			unsigned long long dz, dk;
			ck_assert_int_eq(sscanf(c + strlen(pfx), "%u %llu %llu", &d, &dz, &dk), 3);
			ck_assert_uint_eq(memstat_get_domain_zonefree(mt, d), dz);
			ck_assert_uint_eq(memstat_get_domain_kegfree(mt, d), dk);
			ndom++;
		}
		ck_assert_uint_eq(memstat_get_ndomains(mt), ndom);
	}
	ck_assert_uint_gt(nzones, 10);
	ck_assert_uint_gt(ncaches, nzones / 2);
	ck_assert_uint_eq(memstat_mtl_count(l), nzones);
	memstat_mtl_free(l);
	kvs_close(kd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gdb");
	TCase *tc = tcase_create("independent");
	int rc, n = (int)(sizeof(cores) / sizeof(cores[0]));

	gdb_out = run_gdb();
	tcase_set_timeout(tc, 200);
	tcase_add_loop_test(tc, scalars_equal_gdb, 0, n);
	tcase_add_loop_test(tc, malloc_types_equal_gdb, 0, n);
	tcase_add_loop_test(tc, uma_zones_equal_gdb, 0, n);
	suite_add_tcase(s, tc);
	rc = run_suite(s);
	free(gdb_out);
	return rc;
}
