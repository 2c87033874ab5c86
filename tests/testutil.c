#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#include "testutil.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char rot[256][4096];
static unsigned rot_i;

static char *
next_buf(void)
{
	return rot[rot_i++ % 256];
}

const char *
path_join(const char *dir, const char *name)
{
	char *b = next_buf();
	snprintf(b, 4096, "%s/%s", dir, name);
	return b;
}

const char *
fixture_path(const char *rel)
{
	const char *d = getenv("KVS_FIXTURES");
	return path_join(d ? d : "fixtures/cores", rel);
}

const char *
build_path(const char *rel)
{
	const char *d = getenv("KVS_BUILDDIR");
	return path_join(d ? d : "build", rel);
}

static char tmproot[256], tmpdir[300];
static pid_t tmproot_owner;

/*
 * Check runs each test in a forked child, and a child whose test fails
 * leaves with _exit(), skipping atexit handlers.  So every directory a test
 * process makes lies inside one root that the suite's own process made
 * before any test ran (a constructor), and that process removes the root,
 * with whatever failed children left in it, when it exits.
 */
static void
rm_tmproot(void)
{
	char cmd[300];
	if (tmproot[0] != '\0' && getpid() == tmproot_owner && getenv("KVS_KEEP_TMP") == NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmproot);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmproot);
	}
}

__attribute__((constructor)) static void
make_tmproot(void)
{
	snprintf(tmproot, sizeof(tmproot), "/tmp/kvstest.XXXXXX");
	if (mkdtemp(tmproot) == NULL) {
		perror("mkdtemp");
		abort();
	}
	/* open to search: a test may run a command as nobody in its own
	 * directory (which it then opens itself); each process's stays 0700 */
	if (chmod(tmproot, 0755) != 0) {
		perror(tmproot);
		abort();
	}
	tmproot_owner = getpid();
	atexit(rm_tmproot);
}

/* The test's directory, made on first use: a forked test that asks first
 * gets its own; one forked after its parent asked shares the parent's. */
const char *
test_tmpdir(void)
{
	if (tmpdir[0] == '\0') {
		snprintf(tmpdir, sizeof(tmpdir), "%s/p%ld", tmproot, (long)getpid());
		if (mkdir(tmpdir, 0700) != 0) {
			perror(tmpdir);
			abort();
		}
	}
	return tmpdir;
}

int
write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	if (len > 0 && fwrite(buf, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

void *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *nb;
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

void *
read_file_grown(const char *path, size_t size, size_t *len)
{
	uint8_t *img = read_file(path, len);

	ck_assert_msg(img != NULL, "cannot read %s", path);
	ck_assert_uint_le(*len, size);
	img = realloc(img, size);
	ck_assert_ptr_nonnull(img);
	memset(img + *len, 0, size - *len);
	return img;
}

int
copy_prefix(const char *src, const char *dst, size_t len)
{
	size_t n;
	char *b = read_file(src, &n);
	int rc;
	if (b == NULL)
		return -1;
	rc = write_file(dst, b, len < n ? len : n);
	free(b);
	return rc;
}

char *
run_capture(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	int st;

	if (p == NULL)
		return NULL;
	for (;;) {
		if (n + 4096 > cap) {
			char *nb;
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (nb == NULL)
				break;
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, p);
		n += r;
		if (r == 0)
			break;
	}
	st = pclose(p);
	if (buf != NULL)
		buf[n] = '\0';
	if (status != NULL)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

int
run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

json_t *
load_truth(const char *rel)
{
	json_error_t err;
	json_t *j = json_load_file(fixture_path(rel), 0, &err);

	if (j == NULL) {
		fprintf(stderr, "%s: %s (line %d)\n", rel, err.text, err.line);
		abort();
	}
	return j;
}

uint64_t
member_off(kvs_t *kd, const char *type, const char *member)
{
	struct kvs_typeinfo ti;

	if (kvs_member(kd, type, member, &ti) != 0) {
		fprintf(stderr, "%s.%s: %s\n", type, member, kvs_geterr(kd));
		abort();
	}
	return ti.offset;
}

uint64_t
jnum(const json_t *v)
{
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 0);
	fprintf(stderr, "truth value is not a number\n");
	abort();
}

uint64_t
jget(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL) {
		fprintf(stderr, "truth has no '%s'\n", key);
		abort();
	}
	return jnum(v);
}

/* ---------------------------------------------------------------- oracles */

/*
 * What each suite checks against besides the library: external programs
 * (the independent oracles, installed by scripts/setup.sh) and files that
 * must be present.  Checked before main() of every suite, so no test can
 * pass or skip silently for want of its oracle: a missing one fails the
 * suite.  A developer may opt out of missing *programs* (never files) with
 * KVS_ALLOW_MISSING_ORACLES=1: the suite then prints "SKIPPED: ..." and
 * exits 77, which meson reports as SKIP and scripts/test.sh names in its
 * summary line.
 */
struct oracle_req {
	const char *suite;
	const char *const tools[6];
	const char *const files[6];   /* relative to $KVS_FIXTURES */
	int needs_srcdir;             /* $KVS_SRCDIR (generator sources) */
};

static const struct oracle_req oracle_reqs[] = {
	{ "check_gdb", { "gdb" }, { "fbsd14/kernel", "fbsd14/vmcore.kva.elf" }, 0 },
	{ "check_census_freebsd", { NULL }, { "fbsd14/truth.json", "fbsd14/truth.t2.json",
	    "fbsd14-s2/truth.json", "fbsd12/truth.json", "fbsd11/truth.json", "fbsd5/truth.json" }, 0 },
	{ "check_gprof", { "gprof" }, { "fbsd14/kernel" }, 0 },
	{ "check_fbsd_arm64", { "sh", "gzip" }, { "fbsd14-arm64/kernel", "fbsd14-arm64/truth.json",
	    "fbsd14-arm64/vmcore.minidump1", "fbsd14-arm64/vmcore.elf", "fbsd14/kernel",
	    "fbsd14/vmcore.minidump3" }, 0 },
	{ "check_tui", { "tmux", "python3", "bash" }, { "fbsd14/kernel", "fbsd14/truth.json" }, 1 },
	{ "check_symtab", { "gcc", "nm" }, { "fbsd14/kernel" }, 0 },
	{ "check_compressed", { "gzip", "zstd", "sha256sum" }, { "fbsd14/kernel",
	    "fbsd14/vmcore.minidump3", "linux-kaslr/vmlinux", "linux-nokaslr/vmcore" }, 1 },
	{ "check_layout_cache", { "gcc" }, { NULL }, 1 },
	{ "check_open", { "objcopy" }, { "fbsd14/kernel" }, 0 },
	{ "check_evidence", { "setpriv", "sh", "gzip" }, { "fbsd14/kernel", "linux-kaslr/vmlinux" }, 0 },
	{ "check_badinput", { "objcopy", "gzip" }, { "fbsd14/kernel" }, 0 },
	{ "check_cli", { "python3", "gcc", "ld", "bash" }, { "fbsd14/kernel" }, 1 },
	/* python3, gcc, ld, bash: fixtures/gen/big-kernel.sh (many_cu_kernels) */
	{ "check_dwarf", { "python3", "gcc", "ld", "bash" }, { "fbsd14/truth.json",
	    "fbsd14/kernel", "fbsd14/kernel.dwarf2", "fbsd14/kernel.dwarf5" }, 1 },
};

int
have_tool(const char *name)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0;
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path != '\0') {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", name);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n;
		if (*path == ':')
			path++;
	}
	return 0;
}

int
oracles_optional(void)
{
	const char *v = getenv("KVS_ALLOW_MISSING_ORACLES");

	return v != NULL && strcmp(v, "1") == 0;
}

__attribute__((constructor)) static void
require_oracles(void)
{
	const char *me = program_invocation_short_name;
	char missing[1024] = "";
	size_t i, k, n = 0;
	int files_missing = 0;

	for (i = 0; i < sizeof(oracle_reqs) / sizeof(oracle_reqs[0]); i++) {
		const struct oracle_req *r = &oracle_reqs[i];
		if (strcmp(me, r->suite) != 0)
			continue;
		for (k = 0; k < 6 && r->tools[k] != NULL; k++)
			if (!have_tool(r->tools[k]))
				n += (size_t)snprintf(missing + n, n < sizeof(missing) ? sizeof(missing) - n : 0,
				    "%s%s", n ? ", " : "", r->tools[k]);
		for (k = 0; k < 6 && r->files[k] != NULL; k++)
			if (access(fixture_path(r->files[k]), R_OK) != 0) {
				fprintf(stderr, "FAILED: %s: fixture %s missing: %s\n", me,
				    fixture_path(r->files[k]), strerror(errno));
				files_missing = 1;
			}
		if (r->needs_srcdir && getenv("KVS_SRCDIR") == NULL) {
			fprintf(stderr, "FAILED: %s: KVS_SRCDIR not set (run through meson test)\n", me);
			files_missing = 1;
		}
	}
	if (files_missing)
		exit(EXIT_FAILURE);
	if (n == 0)
		return;
	if (oracles_optional()) {
		fprintf(stderr, "SKIPPED: %s missing (%s)\n", missing, me);
		exit(77);
	}
	fprintf(stderr, "FAILED: %s: oracle %s missing; install it (scripts/setup.sh) or set "
	    "KVS_ALLOW_MISSING_ORACLES=1 to skip this suite\n", me, missing);
	exit(EXIT_FAILURE);
}

void
patch_image(const char *kernel, const char *image, const char *dst, const uint64_t *va,
    const uint64_t *val, const size_t *width, size_t n)
{
	char err[KVS_ERRBUF_SIZE], k[4096], m[4096];
	kvs_t *kd;
	uint8_t *img;
	uint64_t pa;
	size_t len, i;

	snprintf(k, sizeof(k), "%s", fixture_path(kernel));
	snprintf(m, sizeof(m), "%s", fixture_path(image));
	kd = kvs_open(k, m, 0, err);
	ck_assert_msg(kd != NULL, "%s: %s", m, err);
	img = read_file(m, &len);
	ck_assert_msg(img != NULL, "%s", m);
	for (i = 0; i < n; i++) {
		size_t w = width != NULL ? width[i] : 8;
		ck_assert_uint_le(w, 8);
		ck_assert_msg(kvs_kvtop(kd, va[i], &pa) == 0, "%s", kvs_geterr(kd));
		ck_assert_uint_le(pa + w, len);
		memcpy(img + pa, &val[i], w);         /* the low bytes: little-endian */
	}
	kvs_close(kd);
	ck_assert_int_eq(write_file(dst, img, len), 0);
	free(img);
}

uint64_t
rd64(kvs_t *kd, uint64_t va)
{
	uint64_t v;

	ck_assert_msg(kvs_read(kd, va, &v, 8) == 0, "%s", kvs_geterr(kd));
	return v;
}
