/*
 * check_evidence.c - a dump is evidence: nothing kvmstat does may write to it,
 * output files appear whole or not at all, and hostile dumps cost bounded
 * memory.
 *
 *  - read_only_handles: with a handle open on every fixture dump (after
 *    walks that touch the source), every descriptor on the dump or kernel is
 *    O_RDONLY (/proc/self/fdinfo) and every mapping of them lacks 'w'
 *    (/proc/self/maps);
 *  - commands_read_only: every command on every fixture, run on 0444 copies
 *    as an unprivileged user (setpriv to nobody when root, since root ignores
 *    permissions) and as ourselves: the same output and status (so no command
 *    needs write access), and every dump's checksum unchanged;
 *  - gmon_output_atomic: gmon -o replaces its file by rename (another link
 *    keeps the old bytes; a new inode), leaves no temporary file, and a
 *    failing gmon leaves an existing file as it was;
 *  - hostile_bounded: every command on hostile dumps (linux-hostile, and
 *    FreeBSD images patched here: looping kmemstatistics, uk_link and uz_link,
 *    counts near 2^64, mp_maxid of 10^6, a minidump bitmap claiming more
 *    pages than the file holds) under a 512 MB address-space limit (an RSS
 *    limit under ASan): no signal, no "out of memory", an error names its
 *    cause.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmstat.h"
#include "memstat.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

struct fx {
	const char *kernel, *dump;
	int linux_;
};

/* Every fixture dump with its own kernel. */
static const struct fx fixtures[] = {
	{ "fbsd14/kernel", "fbsd14/vmcore.minidump1", 0 },
	{ "fbsd14/kernel", "fbsd14/vmcore.minidump2", 0 },
	{ "fbsd14/kernel", "fbsd14/vmcore.minidump3", 0 },
	{ "fbsd14/kernel", "fbsd14/vmcore.minidump3.t2", 0 },
	{ "fbsd14/kernel", "fbsd14/vmcore.elf", 0 },
	{ "fbsd14/kernel", "fbsd14/vmcore.kva.elf", 0 },
	{ "fbsd14/kernel", "fbsd14/mem.raw", 0 },
	{ "fbsd14/kernel", "fbsd14-s2/vmcore.minidump1", 0 },
	{ "fbsd14/kernel", "fbsd14-s2/vmcore.minidump2", 0 },
	{ "fbsd14/kernel", "fbsd14-s2/vmcore.minidump3", 0 },
	{ "fbsd14/kernel", "fbsd14-s2/vmcore.elf", 0 },
	{ "fbsd14/kernel", "fbsd14-s2/vmcore.kva.elf", 0 },
	{ "fbsd14/kernel", "fbsd14-s2/mem.raw", 0 },
	{ "fbsd12/kernel", "fbsd12/vmcore.minidump2", 0 },
	{ "fbsd12/kernel", "fbsd12/vmcore.minidump2.t2", 0 },
	{ "fbsd12/kernel", "fbsd12/mem.raw", 0 },
	{ "fbsd11/kernel", "fbsd11/vmcore.minidump2", 0 },
	{ "fbsd11/kernel", "fbsd11/mem.raw", 0 },
	{ "fbsd5/kernel", "fbsd5/vmcore.elf", 0 },
	{ "fbsd5/kernel", "fbsd5/mem.raw", 0 },
	{ "linux-kaslr/vmlinux", "linux-kaslr/vmcore", 1 },
	{ "linux-kaslr/vmlinux", "linux-kaslr/mem.raw", 1 },
	{ "linux-kaslr/vmlinux", "linux-nokaslr/vmcore", 1 },
	{ "linux-kaslr/vmlinux", "linux-hostile/mem.raw", 1 },
	{ "linux-kaslr/vmlinux", "linux-hostile/vmcore.loop", 1 },
};
#define NFIX (sizeof(fixtures) / sizeof(fixtures[0]))

/* Every command that reads a dump ("@" stands for an output file). */
static const char *const fbsd_cmds[] = {
	"info", "info --json", "dmesg", "malloc --percpu", "malloc --json", "zone --percpu",
	"zone --json", "profile", "probes --all", "profil", "gmon -f -o @", "slab",
};
static const char *const linux_cmds[] = {
	"info", "info --json", "dmesg", "slab --percpu", "slab --json", "malloc", "zone",
};

static uint64_t
sum_file(const char *path)
{
	size_t len, i;
	unsigned char *b = read_file(path, &len);
	uint64_t h = 1469598103934665603ULL;

	if (b == NULL) {       /* also called outside the tests, from main */
		fprintf(stderr, "cannot read %s\n", path);
		return 0;
	}
	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	free(b);
	return h ^ len;
}

/* --------------------------------------------------- read_only_handles */

/* Check every descriptor and mapping of `path`; returns how many of each
 * were seen through *nfd, *nmap. */
static void
check_access(const char *path, int *nfd, int *nmap)
{
	char real[PATH_MAX], link[PATH_MAX], p[300], line[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;
	FILE *f;

	ck_assert_ptr_nonnull(realpath(path, real));
	*nfd = *nmap = 0;
	ck_assert_ptr_nonnull(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL) {
		ssize_t n;
		unsigned long flags = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, real) != 0)
			continue;
		snprintf(p, sizeof(p), "/proc/self/fdinfo/%s", de->d_name);
		ck_assert_ptr_nonnull(f = fopen(p, "r"));
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "flags: %lo", &flags) == 1)
				break;
		fclose(f);
		ck_assert_msg((flags & O_ACCMODE) == O_RDONLY, "%s open with flags 0%lo", real, flags);
		(*nfd)++;
	}
	closedir(d);
	ck_assert_ptr_nonnull(f = fopen("/proc/self/maps", "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		char perms[8], *name = strchr(line, '/');
		size_t l;

		if (name == NULL)
			continue;
		l = strlen(name);
		if (l > 0 && name[l - 1] == '\n')
			name[l - 1] = '\0';
		if (strcmp(name, real) != 0 || sscanf(line, "%*s %7s", perms) != 1)
			continue;
		ck_assert_msg(perms[1] != 'w', "%s mapped %s", real, perms);
		(*nmap)++;
	}
	fclose(f);
}

START_TEST(read_only_handles)
{
	const struct fx *x = &fixtures[_i];
	char err[KVS_ERRBUF_SIZE], *text = NULL;
	struct memory_type_list *mtl = memstat_mtl_alloc();
	size_t len;
	int nfd, nmap;
	kvs_t *kd = kvs_open(fixture_path(x->kernel), fixture_path(x->dump), 0, err);

	ck_assert_msg(kd != NULL, "%s: %s", x->dump, err);
	(void)memstat_kvm_all(mtl, kd);
	(void)kvs_msgbuf(kd, &text, &len);
	free(text);
	check_access(fixture_path(x->dump), &nfd, &nmap);
	ck_assert_msg(nfd == 1, "%s: %d descriptors", x->dump, nfd);
	ck_assert_msg(nmap >= 1, "%s: not mapped (the check saw nothing)", x->dump);
	check_access(fixture_path(x->kernel), &nfd, &nmap);
	ck_assert_msg(nfd >= 1, "%s: %d descriptors", x->kernel, nfd);
	memstat_mtl_free(mtl);
	kvs_close(kd);
	/* Closed: nothing of the dump is left open or mapped. */
	check_access(fixture_path(x->dump), &nfd, &nmap);
	ck_assert_int_eq(nfd + nmap, 0);
}
END_TEST

/* -------------------------------------------------- commands_read_only */

/* The shell command running kvmstat on kernel+dump with `cmd` ('@' replaced
 * by out), optionally as nobody. */
static void
command(char *buf, size_t len, const char *pre, const char *kernel, const char *dump,
    const char *cmd, const char *out)
{
	char c[512];
	const char *at = strchr(cmd, '@');

	if (at != NULL)
		snprintf(c, sizeof(c), "%.*s%s%s", (int)(at - cmd), cmd, out, at + 1);
	else
		snprintf(c, sizeof(c), "%s", cmd);
	snprintf(buf, len, "%s %s -N %s -M %s %s 2>&1", pre, build_path("analyzers/kvmstat"),
	    kernel, dump, c);
}

/* Copy a fixture into dir as a 0444 file; returns its path. */
static const char *
readonly_copy(const char *dir, const char *rel, const char *name)
{
	char *dst = strdup(path_join(dir, name));

	ck_assert_int_eq(copy_prefix(fixture_path(rel), dst, SIZE_MAX), 0);
	ck_assert_int_eq(chmod(dst, 0444), 0);
	return dst;
}

START_TEST(commands_read_only)
{
	const struct fx *x = &fixtures[_i];
	const char *const *cmds = x->linux_ ? linux_cmds : fbsd_cmds;
	size_t ncmds = x->linux_ ? sizeof(linux_cmds) / sizeof(linux_cmds[0]) :
	    sizeof(fbsd_cmds) / sizeof(fbsd_cmds[0]);
	char dir[2048], odir[2048];
	const char *kernel, *dump, *as_user;
	uint64_t before[3];
	char cmd[8192];
	size_t i;

#ifdef UNDER_ASAN
	/* Under ASan each run is ten times slower: one dump per format and
	 * kernel here (the plain build runs them all). */
	if (_i % 3 != 0 && _i != 5 && _i != 20)
		return;
#endif
	/* Root ignores permissions: the unprivileged run is what 0444 means. */
	as_user = getuid() == 0 ? "setpriv --reuid=nobody --regid=nogroup --clear-groups" : "";
	snprintf(dir, sizeof(dir), "%s/ro%d", test_tmpdir(), _i);
	snprintf(odir, sizeof(odir), "%s/out%d", test_tmpdir(), _i);
	ck_assert_int_eq(chmod(test_tmpdir(), 0755), 0);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mkdir(odir, 0777), 0);
	ck_assert_int_eq(chmod(odir, 0777), 0);
	kernel = readonly_copy(dir, x->kernel, "kernel");
	dump = readonly_copy(dir, x->dump, "dump");
	before[0] = sum_file(fixture_path(x->dump));
	before[1] = sum_file(dump);
	before[2] = sum_file(kernel);
	for (i = 0; i < ncmds; i++) {
		char *o1, *o2, out1[4096], out2[4096];
		int st1, st2;

		snprintf(out1, sizeof(out1), "%s/gmon.self", odir);
		snprintf(out2, sizeof(out2), "%s/gmon.self", odir);   /* same name in both runs */
		command(cmd, sizeof(cmd), "", kernel, dump, cmds[i], out1);
		o1 = run_capture(cmd, &st1);
		unlink(out1);
		command(cmd, sizeof(cmd), as_user, kernel, dump, cmds[i], out2);
		o2 = run_capture(cmd, &st2);
		unlink(out2);
		ck_assert_ptr_nonnull(o1);
		ck_assert_ptr_nonnull(o2);
		/* run_capture: the exit code, -1 if killed; a shell says 128+signal. */
		ck_assert_msg(st1 >= 0 && st1 < 128, "%s: status %d", cmd, st1);
		ck_assert_msg(st1 == st2 && strcmp(o1, o2) == 0,
		    "%s: differs as an unprivileged user on a 0444 copy:\n%s\n---\n%s", cmd, o1, o2);
		free(o1);
		free(o2);
	}
	ck_assert_uint_eq(sum_file(fixture_path(x->dump)), before[0]);
	ck_assert_uint_eq(sum_file(dump), before[1]);
	ck_assert_uint_eq(sum_file(kernel), before[2]);
	free((char *)kernel);
	free((char *)dump);
}
END_TEST

/* -------------------------------------------------- gmon_output_atomic */

START_TEST(gmon_output_atomic)
{
	const char *dir = path_join(test_tmpdir(), "gmon");
	const char *out = path_join(dir, "gmon.out"), *keep = path_join(dir, "old-link");
	const char *fresh = path_join(dir, "fresh.out");
	char cmd[8192], *o;
	struct stat a, b;
	struct dirent *de;
	size_t len1, len2;
	char *f1, *f2;
	DIR *d;
	int st;

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(write_file(out, "old contents\n", 13), 0);
	ck_assert_int_eq(link(out, keep), 0);
	ck_assert_int_eq(stat(out, &a), 0);
	command(cmd, sizeof(cmd), "", fixture_path("fbsd14/kernel"),
	    fixture_path("fbsd14/vmcore.minidump3"), "gmon -f -o @", out);
	o = run_capture(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, o);
	free(o);
	command(cmd, sizeof(cmd), "", fixture_path("fbsd14/kernel"),
	    fixture_path("fbsd14/vmcore.minidump3"), "gmon -o @", fresh);
	o = run_capture(cmd, &st);
	ck_assert_msg(st == 0, "%s: %s", cmd, o);
	free(o);
	/* Replaced by rename: a new inode; the other link still has the old bytes. */
	ck_assert_int_eq(stat(out, &b), 0);
	ck_assert_uint_ne(a.st_ino, b.st_ino);
	f1 = read_file(keep, &len1);
	ck_assert_uint_eq(len1, 13);
	ck_assert_int_eq(memcmp(f1, "old contents\n", 13), 0);
	free(f1);
	/* Whole: the same bytes as a file written where none was. */
	f1 = read_file(out, &len1);
	f2 = read_file(fresh, &len2);
	ck_assert_uint_gt(len1, 40);
	ck_assert(len1 == len2 && memcmp(f1, f2, len1) == 0);
	free(f1);
	free(f2);
	/* A gmon that fails (no profile in this kernel's dump) leaves the file
	 * as it was, and no temporary file anywhere. */
	ck_assert_int_eq(stat(out, &a), 0);
	command(cmd, sizeof(cmd), "", fixture_path("fbsd12/kernel"),
	    fixture_path("fbsd12/vmcore.minidump2"), "gmon -f -o @", out);
	o = run_capture(cmd, &st);
	ck_assert_msg(st != 0 && strstr(o, "kvmstat: ") != NULL, "%s: %s", cmd, o);
	free(o);
	ck_assert_int_eq(stat(out, &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino);
	ck_assert_int_eq(a.st_size, b.st_size);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		ck_assert_msg(strstr(de->d_name, ".tmp.") == NULL, "left behind: %s", de->d_name);
	closedir(d);
}
END_TEST

/* ----------------------------------------------------- hostile_bounded */

/* Write a copy of fbsd14/mem.raw with `width` bytes of `value` at the
 * kernel address va. */
static void
patch_raw(const char *dst, const uint64_t *va, const uint64_t *value, const size_t *width,
    size_t n)
{
	patch_image("fbsd14/kernel", "fbsd14/mem.raw", dst, va, value, width, n);
}

static uint64_t
sym(kvs_t *kd, const char *name)
{
	uint64_t a;

	ck_assert_msg(kvs_symbol(kd, name, &a, NULL) == 0, "%s", name);
	return a;
}

/* The hostile FreeBSD variants, written into dir; their count. */
static size_t
make_fbsd_hostile(const char *dir, char paths[][4096])
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"), 0, err);
	uint64_t mt, mt2, keg, zone, stats, pcpu, va[2], val[2];
	size_t w[2] = { 8, 8 }, n = 0, len;
	uint8_t *md;

	ck_assert_msg(kd != NULL, "%s", err);
	mt = rd64(kd, sym(kd, "kmemstatistics"));
	keg = rd64(kd, sym(kd, "uma_kegs"));
	zone = rd64(kd, keg + member_off(kd, "struct uma_keg", "uk_zones"));
	/* A malloc type whose ks_next is itself. */
	snprintf(paths[n], 4096, "%s/kmem-cycle.raw", dir);
	va[0] = mt + member_off(kd, "struct malloc_type", "ks_next");
	val[0] = mt;
	patch_raw(paths[n++], va, val, w, 1);
	/* A keg whose uk_link is itself; a zone whose uz_link is itself. */
	snprintf(paths[n], 4096, "%s/uk-cycle.raw", dir);
	va[0] = keg + member_off(kd, "struct uma_keg", "uk_link");
	val[0] = keg;
	patch_raw(paths[n++], va, val, w, 1);
	snprintf(paths[n], 4096, "%s/uz-cycle.raw", dir);
	va[0] = zone + member_off(kd, "struct uma_zone", "uz_link");
	val[0] = zone;
	patch_raw(paths[n++], va, val, w, 1);
	/* CPU 0's statistics of the first malloc type near 2^64. */
	pcpu = rd64(kd, sym(kd, "__pcpu"));
	/* (The list's head is the fixture's bad-version type, skipped: the next.) */
	mt2 = rd64(kd, mt + member_off(kd, "struct malloc_type", "ks_next"));
	stats = pcpu + rd64(kd, mt2 + member_off(kd, "struct malloc_type", "ks_mti.mti_stats"));
	/* Every CPU's copy (CPU ids may be sparse): numallocs and memalloced. */
	{
		struct kvs_typeinfo pc;
		uint32_t maxid;
		uint64_t cva[2 * 64], cval[2 * 64];
		size_t cw[2 * 64], k = 0, c;

		ck_assert_int_eq(kvs_type(kd, "struct pcpu", &pc), 0);
		ck_assert_int_eq(kvs_read(kd, sym(kd, "mp_maxid"), &maxid, 4), 0);
		ck_assert_uint_lt(maxid, 64);
		for (c = 0; c <= maxid; c++) {
			cva[k] = stats + c * pc.size + member_off(kd, "struct malloc_type_stats",
			    "mts_numallocs");
			cval[k] = UINT64_MAX - 5;
			cw[k++] = 8;
			cva[k] = stats + c * pc.size + member_off(kd, "struct malloc_type_stats",
			    "mts_memalloced");
			cval[k] = UINT64_MAX - 4095;
			cw[k++] = 8;
		}
		snprintf(paths[n], 4096, "%s/counts-2e64.raw", dir);
		patch_raw(paths[n++], cva, cval, cw, k);
	}
	/* mp_maxid of 10^6. */
	snprintf(paths[n], 4096, "%s/maxid-1e6.raw", dir);
	va[0] = sym(kd, "mp_maxid");
	val[0] = 1000000;
	w[0] = 4;
	patch_raw(paths[n++], va, val, w, 1);
	/* A kmemstatistics longer than the image can hold distinct types: the
	 * head's ks_next leads into the zeros after the kernel image (through
	 * the direct map) made into overlapping nodes 8 bytes apart, each
	 * ks_next slot naming the next node.  Every node is a type of the wrong
	 * version, skipped, so only the dump-derived bound
	 * (6 MiB / sizeof(struct malloc_type)) stops the walk. */
	{
		uint64_t next_off = member_off(kd, "struct malloc_type", "ks_next");
		/* the zeros from the kernel image's end (its `end` symbol) up */
		uint64_t base = (sym(kd, "end") - 0xffffffff80000000ULL + 4095) & ~4095ULL;
		uint64_t end = 0x400000, dmap = 0xfffff80000000000ULL;
		uint64_t k, nslots = (end - base) / 8 - 64, pa;
		uint8_t *img = read_file(fixture_path("fbsd14/mem.raw"), &len);

		ck_assert_ptr_nonnull(img);
		for (k = 0; k < nslots; k++) {
			uint64_t next = k + 1 < nslots ? dmap + base + 8 * (k + 1) - next_off : 0;
			ck_assert_uint_eq(*(uint64_t *)(img + base + 8 * k), 0);
			memcpy(img + base + 8 * k, &next, 8);
		}
		ck_assert_int_eq(kvs_kvtop(kd, mt + next_off, &pa), 0);
		va[0] = dmap + base - next_off;
		memcpy(img + pa, &va[0], 8);
		snprintf(paths[n], 4096, "%s/kmem-long.raw", dir);
		ck_assert_int_eq(write_file(paths[n++], img, len), 0);
		free(img);
	}
	kvs_close(kd);
	/* A minidump whose page bitmap claims every page (its 4 KiB bitmap at
	 * 0x4000 covers 32768 pages; the file holds about 50). */
	md = read_file(fixture_path("fbsd14/vmcore.minidump3"), &len);
	ck_assert_ptr_nonnull(md);
	memset(md + 0x4000, 0xff, 4096);
	snprintf(paths[n], 4096, "%s/bitmap-all.minidump", dir);
	ck_assert_int_eq(write_file(paths[n++], md, len), 0);
	free(md);
	return n;
}

/* Run every command on one hostile dump under the memory limit. */
static void
run_bounded(const char *kernel, const char *dump, const char *const *cmds, size_t ncmds)
{
	const char *out = path_join(test_tmpdir(), "hostile.gmon");
	char cmd[8192], pre[256];
	size_t i;

#ifdef UNDER_ASAN
	/* ASan reserves terabytes of address space: limit what is resident. */
	snprintf(pre, sizeof(pre), "ASAN_OPTIONS=$ASAN_OPTIONS:hard_rss_limit_mb=1024");
#else
	snprintf(pre, sizeof(pre), "ulimit -v 524288;");
#endif
	for (i = 0; i < ncmds; i++) {
		char *o;
		int st;

		command(cmd, sizeof(cmd), pre, kernel, dump, cmds[i], out);
		o = run_capture(cmd, &st);
		ck_assert_ptr_nonnull(o);
		ck_assert_msg(st >= 0 && st < 128, "%s: status %d\n%s", cmd, st, o);
		ck_assert_msg(strstr(o, "out of memory") == NULL && strstr(o, "Cannot allocate") == NULL &&
		    strstr(o, "AddressSanitizer") == NULL, "%s: memory not bounded:\n%s", cmd, o);
		if (st != 0)
			ck_assert_msg(strstr(o, "kvmstat: ") != NULL && strlen(strstr(o, "kvmstat: ")) > 12,
			    "%s: failed without saying why:\n%s", cmd, o);
		free(o);
		unlink(out);
	}
}

START_TEST(hostile_bounded)
{
	char paths[8][4096];
	size_t n = make_fbsd_hostile(test_tmpdir(), paths), i;
	char *o;
	int st;

	for (i = 0; i < n; i++)
		run_bounded(fixture_path("fbsd14/kernel"), paths[i], fbsd_cmds,
		    sizeof(fbsd_cmds) / sizeof(fbsd_cmds[0]));
	run_bounded(fixture_path("linux-kaslr/vmlinux"), fixture_path("linux-hostile/mem.raw"),
	    linux_cmds, sizeof(linux_cmds) / sizeof(linux_cmds[0]));
	run_bounded(fixture_path("linux-kaslr/vmlinux"), fixture_path("linux-hostile/vmcore.loop"),
	    linux_cmds, sizeof(linux_cmds) / sizeof(linux_cmds[0]));
	/* Counts near 2^64: the row is kept as read and flagged - a warning more
	 * than the untouched image gives (its bad-version type's).  Also from a
	 * gzip copy, which has no mapping to sum in place: the statistics are
	 * then read CPU by CPU into a buffer, another summing loop. */
	{
		char err[KVS_ERRBUF_SIZE], gz[8192];
		const char *imgs[3] = { fixture_path("fbsd14/mem.raw"),
		    path_join(test_tmpdir(), "counts-2e64.raw"),
		    path_join(test_tmpdir(), "counts-2e64.raw.gz") };
		unsigned warns[3];
		int wrapped_rows = 0;
		snprintf(gz, sizeof(gz), "gzip -1 -c '%s' > '%s'", imgs[1], imgs[2]);
		ck_assert_int_eq(system(gz), 0);
		for (i = 0; i < 3; i++) {
			struct memory_type_list *mtl = memstat_mtl_alloc();
			struct memory_type *mt;
			kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), imgs[i],
			    i == 2 ? KVS_O_RAW : 0, err);
			ck_assert_msg(kd != NULL, "%s", err);
			ck_assert_msg(memstat_kvm_malloc(mtl, kd) == 0, "%s", kvs_geterr(kd));
			warns[i] = kvs_warnings(kd, NULL);
			for (mt = memstat_mtl_first(mtl); mt != NULL; mt = memstat_mtl_next(mt)) {
				if (i == 0 || memstat_get_numallocs(mt) <= (1ULL << 63))
					continue;
				wrapped_rows++;
				/* Summed again, every add checked: per-CPU as read,
				 * the total as the kernel's own wrapping sum. */
				{
					uint64_t n = 0;
					int c;
					for (c = 0; c < 64; c++)
						n += memstat_get_percpu_numallocs(mt, c) == UINT64_MAX - 5;
					ck_assert_uint_ge(n, 2);
					ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, 0), UINT64_MAX - 4095);
					ck_assert_uint_eq(memstat_get_numallocs(mt), n * (UINT64_MAX - 5));
				}
			}
			memstat_mtl_free(mtl);
			kvs_close(kd);
		}
		ck_assert_int_eq(wrapped_rows, 2);
		ck_assert_uint_eq(warns[1], warns[0] + 1);
		ck_assert_uint_eq(warns[2], warns[0] + 1);
	}
	/* What each variant must say (a flagged row or an error naming it). */
	{
		static const struct { const char *file, *cmd, *want; } says[] = {
			{ "kmem-cycle.raw", "malloc", "kmemstatistics" },
			{ "kmem-long.raw", "malloc", "kmemstatistics list longer than " },
			{ "uk-cycle.raw", "zone", "loops" },
			{ "uz-cycle.raw", "zone", "loops" },
			{ "maxid-1e6.raw", "malloc", "mp_maxid 1000000 out of range" },
			{ "bitmap-all.minidump", "malloc", "pages claimed" },
		};
		char cmd[8192];
		for (i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
			command(cmd, sizeof(cmd), "", fixture_path("fbsd14/kernel"),
			    path_join(test_tmpdir(), says[i].file), says[i].cmd, NULL);
			o = run_capture(cmd, &st);
			ck_assert_msg(st != 0 && strstr(o, says[i].want) != NULL, "%s: %s", cmd, o);
			free(o);
		}
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("evidence");
	TCase *tc[4];
	int rc;
	uint64_t before[NFIX];
	size_t i;

	/* Runs as root and as nobody are compared byte for byte: nobody cannot
	 * write the tests' layout cache, and says so once.  The cache is
	 * check_layout_cache's; here only the dumps matter. */
	setenv("KVS_NO_CACHE", "1", 1);

	/* One directory for every forked test, made (and removed) here. */
	(void)test_tmpdir();
	tc[0] = tcase_create("handles");
	tcase_add_loop_test(tc[0], read_only_handles, 0, NFIX);
	tc[1] = tcase_create("commands");
	tcase_add_loop_test(tc[1], commands_read_only, 0, NFIX);
	tc[2] = tcase_create("atomic");
	tcase_add_test(tc[2], gmon_output_atomic);
	tc[3] = tcase_create("bounded");
	tcase_add_test(tc[3], hostile_bounded);
	for (i = 0; i < 4; i++) {
		tcase_set_timeout(tc[i], 300);
		suite_add_tcase(s, tc[i]);
	}
	for (i = 0; i < NFIX; i++)
		before[i] = sum_file(fixture_path(fixtures[i].dump));
	rc = run_suite(s);
	/* No test may have changed a fixture. */
	for (i = 0; i < NFIX; i++)
		if (sum_file(fixture_path(fixtures[i].dump)) != before[i]) {
			fprintf(stderr, "%s changed during the tests\n", fixtures[i].dump);
			rc = EXIT_FAILURE;
		}
	return rc;
}
