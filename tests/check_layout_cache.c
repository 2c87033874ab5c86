/*
 * check_layout_cache.c - the layout cache (libkvmstat/types/cache.c).
 *
 * The oracle is the library itself with the cache off (KVS_O_NO_CACHE),
 * whose answers check_dwarf and check_type hold against the compiler and
 * gdb: every answer through the cache must be the same, byte for byte,
 * whatever the cache file holds.  Each test has its own XDG_CACHE_HOME.
 *   - hit: a second handle answers everything without opening DWARF;
 *   - miss: a question the cache lacks is answered and added;
 *   - stale: a kernel rebuilt in place with another layout (same path,
 *     same size, same mtime) is not answered from the old one's cache;
 *   - corrupt: random damage to the file, with and without a recomputed
 *     checksum: never a wrong answer, at most one warning per handle;
 *   - read-only directory: right answers, one warning;
 *   - kvs_set_notify: that warning goes to the handler, whole, and not to
 *     stderr; a NULL handler drops it;
 *   - two processes writing at once: the file holds the union.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvs_private.h"
#include "testutil.h"

static const char *
srcdir(void)
{
	const char *s = getenv("KVS_SRCDIR");
	return s != NULL ? s : ".";
}

/* A copy of fixtures/dwarf-test/t.dwarf5 in a fresh directory, and a fresh
 * cache directory beside it (XDG_CACHE_HOME). */
static char kpath[2048], cdir[2048];

static void
setup_dirs(void)
{
	char src[4096], *buf;
	size_t len;
	const char *t = test_tmpdir();

	snprintf(src, sizeof(src), "%s/fixtures/dwarf-test/t.dwarf5", srcdir());
	snprintf(kpath, sizeof(kpath), "%s/kernel-%d", t, (int)getpid());
	snprintf(cdir, sizeof(cdir), "%s/cache-%d", t, (int)getpid());
	buf = read_file(src, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(write_file(kpath, buf, len), 0);
	free(buf);
	ck_assert_int_eq(setenv("XDG_CACHE_HOME", cdir, 1), 0);
	unsetenv("KVS_NO_CACHE");
}

static const char *const types[] = {
	"struct outer", "outer_t", "union uu", "struct stats", "struct fwd",
	"struct pcpu", "enum color", "row_t", "cv_ulong", "int", "u_long",
	"struct nosuch", "nosuch_t",
};
static const char *const members[][2] = {
	{ "struct outer", "in.st.frees" }, { "struct outer", "u_i" },
	{ "struct outer", "s2" }, { "struct outer", "bf_b" },
	{ "struct outer", "bf_d" }, { "struct outer", "grid" },
	{ "struct outer", "flex" }, { "struct outer", "nest.r" },
	{ "outer_t", "cvl" }, { "union uu", "c" }, { "struct fwd", "self" },
	{ "struct outer", "nosuch" }, { "struct nosuch", "x" },
};
static const char *const vars[] = {
	"pcpu_ptr", "pcpu_arr", "fwd_global", "g_outer", "g_rows", "g_str",
	"nosuchvar",
};
static const char *const lists[] = {
	"struct outer", "union uu", "struct fwd", "outer_t", "struct nosuch",
};

static void
put_ti(char **s, size_t *n, FILE *f, int rc, kvs_t *kd,
    const struct kvs_typeinfo *ti)
{
	(void)s;
	(void)n;
	if (rc != 0)
		fprintf(f, " -> error %d: %s\n", (int)kvs_errstatus(kd), kvs_geterr(kd));
	else
		fprintf(f, " -> off %llu size %llu kind %d count %llu esize %llu "
		    "ekind %d bits %u@%u '%s'\n", (unsigned long long)ti->offset,
		    (unsigned long long)ti->size, ti->kind,
		    (unsigned long long)ti->count,
		    (unsigned long long)ti->elem_size, ti->elem_kind, ti->bit_size,
		    ti->bit_offset, ti->type_name);
}

static int
put_member(void *arg, const struct kvs_member_info *m)
{
	fprintf(arg, "  %s off %llu bit %llu bits %u size %llu kind %d depth %u "
	    "'%s'\n", m->name != NULL ? m->name : "(anon)",
	    (unsigned long long)m->offset, (unsigned long long)m->bit_offset,
	    m->bit_size, (unsigned long long)m->size, m->kind, m->depth,
	    m->type_name);
	return 0;
}

/* Every answer for the questions whose index bit is set in mask (all: ~0),
 * as text.  *dwarf_used: whether the handle had to open DWARF or BTF. */
static char *
answers(int flags, unsigned long long mask, bool *dwarf_used)
{
	char errbuf[KVS_ERRBUF_SIZE], *s = NULL;
	size_t n = 0, i, q = 0;
	FILE *f = open_memstream(&s, &n);
	kvs_t *kd = kvs_open(kpath, NULL, KVS_O_KERNEL_ONLY | flags, errbuf);
	struct kvs_typeinfo ti;

	ck_assert_msg(kd != NULL, "%s", errbuf);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++, q++)
		if (mask >> q & 1) {
			fprintf(f, "type %s", types[i]);
			put_ti(&s, &n, f, kvs_type(kd, types[i], &ti), kd, &ti);
		}
	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++, q++)
		if (mask >> q & 1) {
			fprintf(f, "member %s.%s", members[i][0], members[i][1]);
			put_ti(&s, &n, f, kvs_member(kd, members[i][0], members[i][1],
			    &ti), kd, &ti);
		}
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++, q++)
		if (mask >> q & 1) {
			fprintf(f, "var %s", vars[i]);
			put_ti(&s, &n, f, kvs_variable(kd, vars[i], &ti), kd, &ti);
		}
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++, q++)
		if (mask >> q & 1) {
			int rc;
			fprintf(f, "members %s\n", lists[i]);
			rc = kvs_type_members(kd, lists[i], put_member, f);
			fprintf(f, "  rc %d%s%s\n", rc, rc ? ": " : "",
			    rc ? kvs_geterr(kd) : "");
		}
	if (dwarf_used != NULL)
		{
		bool btf, dwarf;
		kvs_types_used(kd->types, &btf, NULL, &dwarf);
		*dwarf_used = btf || dwarf;
	}
	kvs_close(kd);
	fclose(f);
	return s;
}
#define NQ_TYPES (sizeof(types) / sizeof(types[0]))
#define NQ (sizeof(types) / sizeof(types[0]) + sizeof(members) / \
    sizeof(members[0]) + sizeof(vars) / sizeof(vars[0]) + \
    sizeof(lists) / sizeof(lists[0]))

struct tally {
	unsigned files, entries, valid;
};

static int
tally_cb(void *arg, const struct kvs_cache_file *f)
{
	struct tally *t = arg;

	t->files++;
	t->entries += f->entries;
	t->valid += f->valid;
	return 0;
}

static struct tally
tally(void)
{
	struct tally t = { 0, 0, 0 };

	ck_assert_int_eq(kvs_cache_list(tally_cb, &t), 0);
	return t;
}

/* The one cache file's path. */
static int
path_cb(void *arg, const struct kvs_cache_file *f)
{
	snprintf(arg, 4096, "%s", f->path);
	return 0;
}

START_TEST(hit)
{
	char *ref, *a, *b;
	bool used;
	struct tally t;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, &used);
	ck_assert(used);
	ck_assert_int_eq(tally().files, 0); /* --no-cache writes nothing */
	a = answers(0, ~0ULL, &used);
	ck_assert_str_eq(a, ref);
	t = tally();
	ck_assert_int_eq(t.files, 1);
	ck_assert_int_eq(t.valid, 1);
	ck_assert_uint_eq(t.entries, NQ);
	b = answers(0, ~0ULL, &used);
	ck_assert_str_eq(b, ref);
	ck_assert_msg(!used, "a full cache still opened DWARF/BTF");
	/* KVS_NO_CACHE=1 as the option */
	setenv("KVS_NO_CACHE", "1", 1);
	free(b);
	b = answers(0, ~0ULL, &used);
	ck_assert(used);
	ck_assert_str_eq(b, ref);
	unsetenv("KVS_NO_CACHE");
	free(ref);
	free(a);
	free(b);
}
END_TEST

START_TEST(miss)
{
	char *ref, *a;
	bool used;
	unsigned long long half = 0x5555555555555555ULL;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, NULL);
	free(answers(0, half, &used));
	ck_assert_uint_lt(tally().entries, NQ);
	a = answers(0, ~0ULL, &used);
	ck_assert(used); /* the half it lacked */
	ck_assert_str_eq(a, ref);
	ck_assert_uint_eq(tally().entries, NQ);
	free(a);
	a = answers(0, ~0ULL, &used);
	ck_assert(!used);
	ck_assert_str_eq(a, ref);
	free(ref);
	free(a);
}
END_TEST

/* Compile src (C) with gcc -g into out. */
static void
build(const char *src, const char *out)
{
	char cmd[8192], cpath[4096];
	int st;

	snprintf(cpath, sizeof(cpath), "%s.c", out);
	ck_assert_int_eq(write_file(cpath, src, strlen(src)), 0);
	snprintf(cmd, sizeof(cmd), "gcc -g -O0 -Wl,--build-id=none -o %s %s 2>&1",
	    out, cpath);
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 0);
}

START_TEST(stale)
{
	static const char *const v[2] = {
		"struct s { int a; char pad[8]; }; struct s g;\n"
		"int main(void) { return 0; }\n",
		"struct s { char pad[8]; int a; }; struct s g;\n"
		"int main(void) { return 0; }\n",
	};
	char other[4096];
	struct kvs_typeinfo ti;
	struct timespec ts[2];
	struct stat st1, st2;
	char errbuf[KVS_ERRBUF_SIZE], *b1, *b2;
	size_t l1, l2;
	int k;

	setup_dirs();
	snprintf(other, sizeof(other), "%s.other", kpath);
	build(v[0], kpath);
	build(v[1], other);
	/* rebuilt in place: same path, same size, same mtime */
	b1 = read_file(kpath, &l1);
	b2 = read_file(other, &l2);
	ck_assert_ptr_nonnull(b1);
	ck_assert_ptr_nonnull(b2);
	/* the same size too: zero bytes after the section headers */
	if (l1 != l2) {
		char **sm = l1 < l2 ? &b1 : &b2;
		size_t *ls = l1 < l2 ? &l1 : &l2, big = l1 < l2 ? l2 : l1;
		*sm = realloc(*sm, big);
		memset(*sm + *ls, 0, big - *ls);
		*ls = big;
	}
	ck_assert_int_eq(write_file(kpath, b1, l1), 0);
	ck_assert_int_eq(stat(kpath, &st1), 0);
	for (k = 0; k < 4; k++) {
		kvs_t *kd;
		int want = k % 2 == 0 ? 0 : 8;
		if (k > 0) {
			ck_assert_int_eq(write_file(kpath, k % 2 ? b2 : b1, l1), 0);
			ts[0] = st1.st_atim;
			ts[1] = st1.st_mtim;
			ck_assert_int_eq(utimensat(AT_FDCWD, kpath, ts, 0), 0);
			ck_assert_int_eq(stat(kpath, &st2), 0);
			ck_assert_int_eq(st2.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
		}
		kd = kvs_open(kpath, NULL, KVS_O_KERNEL_ONLY, errbuf);
		ck_assert_msg(kd != NULL, "%s", errbuf);
		ck_assert_int_eq(kvs_member(kd, "struct s", "a", &ti), 0);
		ck_assert_msg(ti.offset == (uint64_t)want, "round %d: struct s.a at "
		    "%llu, the compiler put it at %d", k,
		    (unsigned long long)ti.offset, want);
		kvs_close(kd);
	}
	ck_assert_int_eq(tally().files, 2);
	free(b1);
	free(b2);
}
END_TEST

/* struct s.a of the kernel at path, through a fresh handle (cache on). */
static uint64_t
offset_of_a(const char *path)
{
	char errbuf[KVS_ERRBUF_SIZE];
	struct kvs_typeinfo ti;
	kvs_t *kd = kvs_open(path, NULL, KVS_O_KERNEL_ONLY, errbuf);

	ck_assert_msg(kd != NULL, "%s", errbuf);
	ck_assert_msg(kvs_member(kd, "struct s", "a", &ti) == 0, "%s", kvs_geterr(kd));
	kvs_close(kd);
	return ti.offset;
}

static const char *const two_layouts[2] = {
	"struct s { int a; char pad[8]; }; struct s g;\n"
	"int main(void) { return 0; }\n",
	"struct s { char pad[8]; int a; }; struct s g;\n"
	"int main(void) { return 0; }\n",
};

/* Two kernels, each with its own NT_GNU_BUILD_ID: each is answered from
 * its own file, never from the other's (the identity holds the whole
 * build-id).  The offsets are the compiler's: pad first puts a at 8. */
START_TEST(buildid_identity)
{
	char other[4096], cmd[32768];
	int st, k;

	setup_dirs();
	snprintf(other, sizeof(other), "%s.other", kpath);
	build(two_layouts[0], kpath);
	build(two_layouts[1], other);
	snprintf(cmd, sizeof(cmd), "gcc -g -O0 -Wl,--build-id=sha1 -o %s %s.c && "
	    "gcc -g -O0 -Wl,--build-id=sha1 -o %s %s.c && readelf -n %s %s 2>&1",
	    kpath, kpath, other, other, kpath, other);
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 0);
	for (k = 0; k < 2; k++) {
		ck_assert_uint_eq(offset_of_a(kpath), 0);
		ck_assert_uint_eq(offset_of_a(other), 8);
	}
	ck_assert_int_eq(tally().files, 2);
}
END_TEST

/* A kernel stripped of its DWARF, whose types come from <kernel>.debug:
 * the same kernel file with another kernel.debug beside it (rebuilt) is
 * answered from the new one. */
START_TEST(debug_file_identity)
{
	char other[4096], cmd[32768];
	int st;

	setup_dirs();
	snprintf(other, sizeof(other), "%s.other", kpath);
	build(two_layouts[0], kpath);
	build(two_layouts[1], other);
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug %s %s.debug && "
	    "objcopy --strip-debug %s && objcopy --only-keep-debug %s %s.debug2 2>&1",
	    kpath, kpath, kpath, other, kpath);
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 0);
	ck_assert_uint_eq(offset_of_a(kpath), 0);
	ck_assert_uint_eq(offset_of_a(kpath), 0);
	snprintf(cmd, sizeof(cmd), "mv %s.debug2 %s.debug", kpath, kpath);
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 0);
	ck_assert_uint_eq(offset_of_a(kpath), 8);
	ck_assert_int_eq(tally().files, 2);
}
END_TEST

/* A cache file holding another kernel's identity, found under this
 * kernel's name (a collision, a copy): not used, rebuilt. */
struct paths {
	char p[4][4096];
	unsigned n;
};

static int
paths_cb(void *arg, const struct kvs_cache_file *f)
{
	struct paths *ps = arg;

	if (ps->n < 4)
		snprintf(ps->p[ps->n++], 4096, "%s", f->path);
	return 0;
}

START_TEST(foreign_identity)
{
	char other[4096], mine[4096];
	struct paths before, after;
	char *buf;
	size_t len;
	unsigned i;

	setup_dirs();
	snprintf(other, sizeof(other), "%s.other", kpath);
	build(two_layouts[0], kpath);
	build(two_layouts[1], other);
	ck_assert_uint_eq(offset_of_a(kpath), 0);
	memset(&before, 0, sizeof(before));
	ck_assert_int_eq(kvs_cache_list(paths_cb, &before), 0);
	ck_assert_uint_eq(before.n, 1);
	ck_assert_uint_eq(offset_of_a(other), 8);
	memset(&after, 0, sizeof(after));
	ck_assert_int_eq(kvs_cache_list(paths_cb, &after), 0);
	ck_assert_uint_eq(after.n, 2);
	mine[0] = '\0';
	for (i = 0; i < 2; i++)
		if (strcmp(after.p[i], before.p[0]) != 0)
			snprintf(mine, sizeof(mine), "%s", after.p[i]);
	ck_assert(mine[0] != '\0');
	/* the first kernel's file, whole and valid, as the other's */
	buf = read_file(before.p[0], &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(kvs_lcache_parse(buf, len), 0);
	ck_assert_int_eq(write_file(mine, buf, len), 0);
	free(buf);
	ck_assert_uint_eq(offset_of_a(other), 8);
	ck_assert_uint_eq(offset_of_a(kpath), 0);
}
END_TEST

/* Answers from BTF are not served to a handle that reads DWARF
 * (KVS_TYPES=dwarf): their spellings differ.  fixtures/btf-test/t.pahole
 * has both; shapes.h declares struct outer's grid as int [3][5], which
 * DWARF spells so and pahole's BTF as one dimension of 15. */
START_TEST(types_source_identity)
{
	char src[4096], *buf;
	size_t len;
	char errbuf[KVS_ERRBUF_SIZE];
	struct kvs_typeinfo ti;
	kvs_t *kd;
	int k;

	setup_dirs();
	snprintf(src, sizeof(src), "%s/fixtures/btf-test/t.pahole", srcdir());
	buf = read_file(src, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(write_file(kpath, buf, len), 0);
	free(buf);
	for (k = 0; k < 4; k++) {
		bool dwarf = k >= 2;
		if (dwarf)
			setenv("KVS_TYPES", "dwarf", 1);
		kd = kvs_open(kpath, NULL, KVS_O_KERNEL_ONLY, errbuf);
		ck_assert_msg(kd != NULL, "%s", errbuf);
		ck_assert_msg(kvs_member(kd, "struct outer", "grid", &ti) == 0, "%s",
		    kvs_geterr(kd));
		ck_assert_uint_eq(ti.count, 15);
		ck_assert_uint_eq(ti.size, 60);
		if (dwarf)
			ck_assert_str_eq(ti.type_name, "int [3][5]");
		else
			ck_assert_str_eq(ti.type_name, "int [15]");
		kvs_close(kd);
	}
	unsetenv("KVS_TYPES");
	ck_assert_int_eq(tally().files, 2);
}
END_TEST

/* fd 2 to a file beside the kernel copy, until stderr_back; returns the
 * saved fd. */
static int
stderr_to_file(void)
{
	char wpath[4096];
	int fd, save;

	snprintf(wpath, sizeof(wpath), "%s.stderr", kpath);
	fflush(stderr);
	save = dup(2);
	fd = open(wpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
	return save;
}

/* fd 2 back; what went to the file (caller frees). */
static char *
stderr_back(int save)
{
	char wpath[4096], *w;
	size_t n;

	snprintf(wpath, sizeof(wpath), "%s.stderr", kpath);
	fflush(stderr);
	dup2(save, 2);
	close(save);
	w = read_file(wpath, &n);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Answers with fd 2 sent to a file: the number of cache warnings. */
static char *
answers_counting(int *warnings)
{
	char *s, *w, *p;
	int save = stderr_to_file();

	s = answers(0, ~0ULL, NULL);
	w = stderr_back(save);
	*warnings = 0;
	for (p = w; p != NULL && (p = strstr(p, "libkvmstat: warning:")) != NULL; p++)
		(*warnings)++;
	free(w);
	return s;
}

static uint64_t
fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

START_TEST(corrupt)
{
	char *ref, *good, cpath[4096], *a;
	uint8_t *buf;
	size_t len, i;
	int iter, warnings, rejected = 0, parsed = 0;
	unsigned seed = 12345;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, NULL);
	free(answers(0, ~0ULL, NULL));
	ck_assert_int_eq(kvs_cache_list(path_cb, cpath), 0);
	good = read_file(cpath, &len);
	ck_assert_ptr_nonnull(good);
	ck_assert_int_eq(kvs_lcache_parse(good, len), 0);
	buf = malloc(len + 64);
	for (iter = 0; iter < 400; iter++) {
		size_t n = len;
		int kind = iter % 4, flips = 1 + (int)(rand_r(&seed) % 4);
		bool resum = iter % 8 >= 4;

		memcpy(buf, good, len);
		if (kind == 0 || kind == 1) {
			for (i = 0; i < (size_t)flips; i++)
				buf[rand_r(&seed) % len] ^= (uint8_t)(1 + rand_r(&seed) % 255);
		} else if (kind == 2)
			n = rand_r(&seed) % len; /* truncated */
		else {
			/* a byte run set to 0xff or 0, or bytes appended */
			size_t at = rand_r(&seed) % len, run = 1 + rand_r(&seed) % 16;
			if (iter % 3 == 0) {
				memset(buf + len, 0x41, 64);
				n = len + 1 + rand_r(&seed) % 63;
			} else
				memset(buf + at, iter % 2 ? 0xff : 0,
				    at + run > len ? len - at : run);
		}
		if (resum && n >= 32) {
			/* the checksum made right again: only the record checks
			 * stand between the damage and an answer */
			uint64_t h = fnv(buf + 32, n - 32);
			for (i = 0; i < 8; i++)
				buf[24 + i] = (uint8_t)(h >> (8 * i));
		}
		if (kvs_lcache_parse(buf, n) != 0)
			rejected++;
		else
			parsed++;
		if (resum)
			continue; /* values re-checksummed can lie: parse only */
		ck_assert_int_eq(write_file(cpath, buf, n), 0);
		a = answers_counting(&warnings);
		if (strcmp(a, ref) != 0) {
			/* the first line that differs (Check's messages are short) */
			size_t d = 0, ls;
			while (a[d] == ref[d])
				d++;
			for (ls = d; ls > 0 && ref[ls - 1] != '\n'; ls--)
				;
			ck_abort_msg("mutation %d gave a wrong answer at: %.200s "
			    "(want %.200s)", iter, a + ls, ref + ls);
		}
		ck_assert_int_le(warnings, 1);
		free(a);
	}
	ck_assert_int_gt(rejected, 300);
	/* the last handle rebuilt the file */
	free(good);
	good = read_file(cpath, &len);
	ck_assert_int_eq(kvs_lcache_parse(good, len), 0);
	free(good);
	free(buf);
	free(ref);
	(void)parsed;
}
END_TEST

/* A file of another format version ("KVSLC002": a later library's) is not
 * read as this one's, however well its bytes decode: here it holds a lie
 * ("uint32_t" for in.st.frees, a uint64_t in types.h) under a right
 * checksum, and the answers stay those of the kernel's own types. */
START_TEST(other_format_version)
{
	char *ref, *a, cpath[4096], *p;
	uint8_t *buf;
	size_t len, i;
	uint64_t h;
	int warnings, lies = 0;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, NULL);
	ck_assert_ptr_nonnull(strstr(ref, "'uint64_t'"));
	free(answers(0, ~0ULL, NULL));
	ck_assert_int_eq(kvs_cache_list(path_cb, cpath), 0);
	buf = read_file(cpath, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert(len > 32 && memcmp(buf, "KVSLC001", 8) == 0);
	for (p = (char *)buf + 32; (p = memmem(p, len - (size_t)(p - (char *)buf),
	    "uint64_t", 8)) != NULL; p += 8) {
		memcpy(p, "uint32_t", 8);
		lies++;
	}
	ck_assert_int_gt(lies, 0);
	memcpy(buf, "KVSLC002", 8);
	h = fnv(buf + 32, len - 32);
	for (i = 0; i < 8; i++)
		buf[24 + i] = (uint8_t)(h >> (8 * i));
	ck_assert_int_eq(kvs_lcache_parse(buf, len), -1);
	ck_assert_int_eq(write_file(cpath, buf, len), 0);
	free(buf);
	a = answers_counting(&warnings);
	ck_assert_str_eq(a, ref);
	ck_assert_int_le(warnings, 1);
	free(a);
	free(ref);
}
END_TEST

START_TEST(readonly_dir)
{
	char *ref, *a, ro[4096];
	int warnings;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, NULL);
	/* root ignores mode bits: a directory under /proc cannot be made */
	if (geteuid() == 0)
		snprintf(ro, sizeof(ro), "/proc/self/kvmstat-no");
	else {
		snprintf(ro, sizeof(ro), "%s.ro", cdir);
		ck_assert_int_eq(mkdir(ro, 0555), 0);
	}
	setenv("XDG_CACHE_HOME", ro, 1);
	a = answers_counting(&warnings);
	ck_assert_str_eq(a, ref);
	ck_assert_int_eq(warnings, 1);
	free(a);
	free(ref);
}
END_TEST

/* kvs_set_notify's handler: the messages it got, one per line. */
struct heard {
	unsigned n;
	char text[4096];
};

static void
hear(void *arg, const char *msg)
{
	struct heard *h = arg;
	size_t at = strlen(h->text);

	h->n++;
	snprintf(h->text + at, sizeof(h->text) - at, "%s\n", msg);
}

/* One handle asking every question, with kvs_set_notify(fn, arg) right
 * after the open; what reached stderr in *err (caller frees). */
static char *
answers_notified(kvs_notify_fn fn, void *arg, char **err)
{
	char errbuf[KVS_ERRBUF_SIZE], *s = NULL;
	size_t n = 0, i;
	FILE *f = open_memstream(&s, &n);
	struct kvs_typeinfo ti;
	kvs_t *kd;
	int save = stderr_to_file();

	kd = kvs_open(kpath, NULL, KVS_O_KERNEL_ONLY, errbuf);
	ck_assert_msg(kd != NULL, "%s", errbuf);
	kvs_set_notify(kd, fn, arg);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		fprintf(f, "type %s", types[i]);
		put_ti(&s, &n, f, kvs_type(kd, types[i], &ti), kd, &ti);
	}
	kvs_close(kd);
	fclose(f);
	*err = stderr_back(save);
	return s;
}

START_TEST(notify_handler)
{
	char *ref, *a, *err, cpath[4096], ro[4096];
	struct heard h;
	size_t len;
	uint8_t *good;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, NULL);
	free(answers(0, ~0ULL, NULL));
	ck_assert_int_eq(kvs_cache_list(path_cb, cpath), 0);
	good = (uint8_t *)read_file(cpath, &len);
	ck_assert_ptr_nonnull(good);
	ck_assert_uint_gt(len, 40);

	/* A file whose checksum fails, met when the first question opens
	 * the cache: one message, naming the file, to the handler alone. */
	good[len - 1] ^= 0x5a;
	ck_assert_int_eq(write_file(cpath, good, len), 0);
	memset(&h, 0, sizeof(h));
	a = answers_notified(hear, &h, &err);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_msg(strncmp(h.text, "layout cache ", 13) == 0 && strstr(h.text, cpath) != NULL &&
	    strstr(h.text, "(not used)\n") != NULL, "handler got: %s", h.text);
	ck_assert_msg(err[0] == '\0', "stderr got: %s", err);
	ck_assert_int_eq(strncmp(a, ref, strlen(a)), 0);     /* right answers */
	free(a);
	free(err);

	/* The same damage, the handler NULL: nothing anywhere. */
	ck_assert_int_eq(write_file(cpath, good, len), 0);
	a = answers_notified(NULL, NULL, &err);
	ck_assert_msg(err[0] == '\0', "stderr got: %s", err);
	ck_assert_int_eq(strncmp(a, ref, strlen(a)), 0);
	free(a);
	free(err);

	/* A directory that cannot be written: the message comes from
	 * kvs_close, to the handler. */
	if (geteuid() == 0)
		snprintf(ro, sizeof(ro), "/proc/self/kvmstat-no");
	else {
		snprintf(ro, sizeof(ro), "%s.ro2", cdir);
		ck_assert_int_eq(mkdir(ro, 0555), 0);
	}
	setenv("XDG_CACHE_HOME", ro, 1);
	memset(&h, 0, sizeof(h));
	a = answers_notified(hear, &h, &err);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_msg(strstr(h.text, "layout cache ") == h.text && strstr(h.text, ro) != NULL,
	    "handler got: %s", h.text);
	ck_assert_msg(err[0] == '\0', "stderr got: %s", err);
	ck_assert_int_eq(strncmp(a, ref, strlen(a)), 0);
	free(a);
	free(err);

	free(good);
	free(ref);
}
END_TEST

/* Two handles on one kernel, both opened before either writes: the second
 * to close keeps the first one's answers too (it merges what the file
 * holds by then), deterministically, without two processes racing. */
START_TEST(interleaved_handles)
{
	char errbuf[KVS_ERRBUF_SIZE], *ref, *a;
	struct kvs_typeinfo ti;
	kvs_t *k1, *k2;
	bool used;
	struct tally t;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, 3ULL << NQ_TYPES, NULL);
	k1 = kvs_open(kpath, NULL, KVS_O_KERNEL_ONLY, errbuf);
	ck_assert_msg(k1 != NULL, "%s", errbuf);
	k2 = kvs_open(kpath, NULL, KVS_O_KERNEL_ONLY, errbuf);
	ck_assert_msg(k2 != NULL, "%s", errbuf);
	ck_assert_int_eq(kvs_member(k1, members[0][0], members[0][1], &ti), 0);
	ck_assert_int_eq(kvs_member(k2, members[1][0], members[1][1], &ti), 0);
	kvs_close(k1);
	kvs_close(k2);
	t = tally();
	ck_assert_int_eq(t.files, 1);
	ck_assert_uint_eq(t.entries, 2);
	a = answers(0, 3ULL << NQ_TYPES, &used);
	ck_assert_msg(!used, "an answer of the first handle was lost");
	ck_assert_str_eq(a, ref);
	free(a);
	free(ref);
}
END_TEST

START_TEST(two_writers)
{
	char *ref, *a;
	int p[2], k, st;
	pid_t pid[4];
	bool used;
	struct tally t;

	setup_dirs();
	ref = answers(KVS_O_NO_CACHE, ~0ULL, NULL);
	for (int round = 0; round < 3; round++) {
		char rm[8192];
		snprintf(rm, sizeof(rm), "rm -rf '%s'", cdir);
		ck_assert_int_eq(system(rm), 0);
		ck_assert_int_eq(pipe(p), 0);
		for (k = 0; k < 4; k++) {
			pid[k] = fork();
			ck_assert_int_ge(pid[k], 0);
			if (pid[k] == 0) {
				char c;
				/* every fourth question, offset k, plus the first */
				unsigned long long m = 1;
				for (size_t q = (size_t)k; q < NQ; q += 4)
					m |= 1ULL << q;
				close(p[1]);
				(void)read(p[0], &c, 1); /* all start together */
				free(answers(0, m, NULL));
				_exit(0);
			}
		}
		close(p[0]);
		close(p[1]); /* releases them */
		for (k = 0; k < 4; k++) {
			ck_assert_int_eq(waitpid(pid[k], &st, 0), pid[k]);
			ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		t = tally();
		ck_assert_int_eq(t.files, 1);
		ck_assert_int_eq(t.valid, 1);
		ck_assert_uint_eq(t.entries, NQ);
		a = answers(0, ~0ULL, &used);
		ck_assert(!used);
		ck_assert_str_eq(a, ref);
		free(a);
	}
	free(ref);
}
END_TEST

START_TEST(list_and_clear)
{
	unsigned n;

	setup_dirs();
	free(answers(0, ~0ULL, NULL));
	setenv("KVS_TYPES", "dwarf", 1); /* another identity: another file */
	free(answers(0, 1, NULL));
	unsetenv("KVS_TYPES");
	ck_assert_int_eq(tally().files, 2);
	ck_assert_int_eq(kvs_cache_clear(&n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(tally().files, 0);
}
END_TEST

/* `kvmstat cache` and `kvmstat cache --clear`, text and JSON, against the
 * library's own listing; `kvmstat --no-cache` writes nothing. */
START_TEST(command)
{
	char cmd[8192], *out, want[4200];
	const char *k = build_path("analyzers/kvmstat");
	int st;
	json_t *j, *files;
	json_error_t je;
	struct tally t;

	setup_dirs();
	snprintf(cmd, sizeof(cmd), "%s --no-cache -N %s type 'struct outer' "
	    "'union uu' >/dev/null", k, kpath);
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(tally().files, 0);
	snprintf(cmd, sizeof(cmd), "%s -N %s type 'struct outer' 'union uu' "
	    ">/dev/null", k, kpath);
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 0);
	t = tally();
	ck_assert_int_eq(t.files, 1);
	ck_assert_uint_eq(t.entries, 4); /* two types, two members lists */
	ck_assert_int_eq(kvs_cache_list(path_cb, want), 0);
	snprintf(cmd, sizeof(cmd), "%s cache", k);
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(strstr(out, want) != NULL && strstr(out, "4 answers") &&
	    strstr(out, "types:btf") && strstr(out, cdir), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s cache --json", k);
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	j = json_loads(out, 0, &je);
	ck_assert_msg(j != NULL, "%s: %s", je.text, out);
	files = json_object_get(j, "files");
	ck_assert_int_eq((int)json_array_size(files), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(files, 0),
	    "path")), want);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(files,
	    0), "entries")), 4);
	json_decref(j);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s cache --clear", k);
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(strstr(out, "removed 1 cache file") != NULL, "%s", out);
	free(out);
	ck_assert_int_eq(tally().files, 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("layout_cache");
	TCase *tc = tcase_create("cache");

	tcase_add_test(tc, hit);
	tcase_add_test(tc, miss);
	tcase_add_test(tc, stale);
	tcase_add_test(tc, buildid_identity);
	tcase_add_test(tc, debug_file_identity);
	tcase_add_test(tc, foreign_identity);
	tcase_add_test(tc, types_source_identity);
	tcase_add_test(tc, corrupt);
	tcase_add_test(tc, other_format_version);
	tcase_add_test(tc, readonly_dir);
	tcase_add_test(tc, notify_handler);
	tcase_add_test(tc, two_writers);
	tcase_add_test(tc, interleaved_handles);
	tcase_add_test(tc, list_and_clear);
	tcase_add_test(tc, command);
	tcase_set_timeout(tc, 240);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
