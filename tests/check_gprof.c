/*
 * check_gprof.c - kernel gprof buffers against the generator's truth, the
 * gmon.out file, and the independent check: GNU gprof reads our gmon.out
 * with the fixture kernel and must report the truth's flat profile and
 * call graph.  Bad buffers give clear errors.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmprof.h"
#include "kvs_private.h"
#include "profile.h"
#include "testutil.h"

static kvs_t *
open_core(const char *dir, const char *core, int flags)
{
	char err[KVS_ERRBUF_SIZE], rel[256];
	kvs_t *kd;

	snprintf(rel, sizeof(rel), "%s/%s", dir, core);
	kd = kvs_open(fixture_path("fbsd14/kernel"), core[0] == '/' ? core : fixture_path(rel),
	    flags, err);
	ck_assert_msg(kd != NULL, "%s", err);
	return kd;
}

START_TEST(buffers_equal_truth)
{
	const char *dir = _i ? "fbsd14-s2" : "fbsd14";
	char rel[256];
	json_t *t, *gt, *f, *a;
	kvs_t *kd = open_core(dir, "vmcore.minidump3", 0);
	kvmprof_gmon_t *g;
	size_t i, k;

	snprintf(rel, sizeof(rel), "%s/truth.json", dir);
	t = load_truth(rel);
	gt = json_object_get(t, "gprof");
	g = kvmprof_gmon_read(kd);
	ck_assert_msg(g != NULL, "%s", kvs_geterr(kd));
	ck_assert_int_eq(kvmprof_gmon_state(g), (int)jget(gt, "state"));
	ck_assert_int_eq(kvmprof_gmon_profrate(g), jget(gt, "profrate") ? (int)jget(gt, "profrate") :
	    (int)jget(gt, "profhz"));
	ck_assert_uint_eq(kvmprof_gmon_lowpc(g), jget(gt, "lowpc"));
	ck_assert_uint_eq(kvmprof_gmon_highpc(g), jget(gt, "highpc"));
	ck_assert_uint_eq(kvmprof_gmon_nbins(g) * 2, jget(gt, "kcountsize"));
	json_array_foreach(json_object_get(gt, "functions"), i, f) {
		uint64_t lo = jget(f, "addr"), hi = lo + jget(f, "size"), sum = 0;
		for (k = 0; k < kvmprof_gmon_nbins(g); k++) {
			uint64_t pc = kvmprof_gmon_lowpc(g) + k * kvmprof_gmon_binsize(g);
			if (pc >= lo && pc < hi)
				sum += kvmprof_gmon_bin(g, k);
		}
		ck_assert_msg(sum == jget(f, "ticks"), "%s: %llu ticks, truth %llu",
		    json_string_value(json_object_get(f, "name")), (unsigned long long)sum,
		    (unsigned long long)jget(f, "ticks"));
	}
	ck_assert_uint_eq(kvmprof_gmon_narcs(g), json_array_size(json_object_get(gt, "arcs")));
	json_array_foreach(json_object_get(gt, "arcs"), i, a) {
		int found = 0;
		for (k = 0; k < kvmprof_gmon_narcs(g); k++) {
			uint64_t fp, sp;
			int64_t c;
			kvmprof_gmon_arc(g, k, &fp, &sp, &c);
			found += fp == jget(a, "frompc") && sp == jget(a, "selfpc") &&
			    (uint64_t)c == jget(a, "count");
		}
		ck_assert_int_eq(found, 1);
	}
	kvmprof_gmon_free(g);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(gmon_out_file)
{
	json_t *t = load_truth("fbsd14/truth.json"), *gt = json_object_get(t, "gprof");
	kvs_t *kd = open_core("fbsd14", "vmcore.elf", 0);
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
	const char *out = path_join(test_tmpdir(), "gmon.out");
	size_t len;
	uint8_t *b;
	uint64_t u;
	int32_t v;

	ck_assert_ptr_nonnull(g);
	unlink(out);
	ck_assert_int_eq(kvmprof_gmon_write(g, out, 0), 0);
	ck_assert_int_eq(kvmprof_gmon_write(g, out, 0), -1);      /* no clobbering */
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(kvmprof_gmon_write(g, out, 1), 0);       /* -f */
	{
		/* An ordinary file under the umask (not mkstemp's 0600), no temporaries left. */
		struct stat sb;
		mode_t old = umask(022);
		unlink(out);
		ck_assert_int_eq(kvmprof_gmon_write(g, out, 0), 0);
		umask(old);
		ck_assert_int_eq(stat(out, &sb), 0);
		ck_assert_int_eq(sb.st_mode & 0777, 0644);
		char cmd[4096];
		snprintf(cmd, sizeof(cmd), "ls %s.tmp* >/dev/null 2>&1", out);
		ck_assert_int_ne(system(cmd), 0);
	}
	b = read_file(out, &len);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(len, 40 + jget(gt, "kcountsize") + 24 * json_array_size(json_object_get(gt, "arcs")));
	memcpy(&u, b, 8);
	ck_assert_uint_eq(u, jget(gt, "lowpc"));
	memcpy(&u, b + 8, 8);
	ck_assert_uint_eq(u, jget(gt, "highpc"));
	memcpy(&v, b + 16, 4);
	ck_assert_int_eq(v, 40 + (int)jget(gt, "kcountsize"));
	memcpy(&v, b + 20, 4);
	ck_assert_int_eq(v, (int)jget(gt, "gmonversion"));
	memcpy(&v, b + 24, 4);
	ck_assert_int_eq(v, (int)jget(gt, "profrate"));
	memcpy(&v, b + 28, 4);
	ck_assert_int_eq(v, (int)jget(gt, "histcounter_type"));
	free(b);
	kvmprof_gmon_free(g);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A line of text that starts with `start` and contains `needle`, blanks
 * squeezed to single spaces first (gprof aligns columns with runs of them). */
static int
graph_line(const char *text, const char *start, const char *needle)
{
	const char *ln = text;

	while (ln != NULL && *ln != '\0') {
		const char *end = strchr(ln, '\n');
		size_t n = end ? (size_t)(end - ln) : strlen(ln), k, o = 0;
		char line[1024];

		for (k = 0; k < n && o + 2 < sizeof(line); k++) {
			char c = ln[k] == '\t' ? ' ' : ln[k];
			if (c == ' ' && o > 0 && line[o - 1] == ' ')
				continue;
			line[o++] = c;
		}
		line[o++] = ' ';
		line[o] = '\0';
		if (strncmp(ln, start, strlen(start)) == 0 && strstr(line, needle) != NULL)
			return 1;
		ln = end ? end + 1 : NULL;
	}
	return 0;
}

/* GNU gprof, given the fixture kernel and our gmon.out. */
/* Issue 27: kvmprof_gmon_write never replaces what is not a regular file:
 * a symbolic link's target is replaced (the link kept), a FIFO is written in
 * place, a directory, a socket and a dangling link are refused, a full
 * device is ENOSPC, NULL is standard output. */
START_TEST(gmon_write_targets)
{
	kvs_t *kd = open_core("fbsd14", "vmcore.elf", 0);
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
	const char *dir = test_tmpdir();
	char target[1024], link_[1024], fifo[1024], sub[1024], cmd[4096], *out;
	struct stat sb;
	size_t want;
	int st;

	ck_assert_ptr_nonnull(g);
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link_, sizeof(link_), "%s/link", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	ck_assert_int_eq(write_file(target, "old", 3), 0);
	ck_assert_int_eq(symlink("target", link_), 0);
	ck_assert_int_eq(kvmprof_gmon_write(g, link_, 0), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(chmod(target, 0604), 0);
	ck_assert_int_eq(kvmprof_gmon_write(g, link_, 1), 0);
	ck_assert_int_eq(lstat(link_, &sb), 0);
	ck_assert(S_ISLNK(sb.st_mode));
	ck_assert_int_eq(stat(target, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0604);         /* its mode kept, as cp */
	free(read_file(target, &want));
	ck_assert_uint_gt(want, 40);
	/* A dangling link: neither it nor its target made. */
	unlink(link_);
	ck_assert_int_eq(symlink("nowhere", link_), 0);
	ck_assert_int_eq(kvmprof_gmon_write(g, link_, 1), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_ne(access(path_join(dir, "nowhere"), F_OK), 0);
	/* A directory. */
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(kvmprof_gmon_write(g, sub, 1), -1);
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_int_eq(stat(sub, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	/* A full device. */
	ck_assert_int_eq(kvmprof_gmon_write(g, "/dev/full", 1), -1);
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_int_eq(stat("/dev/full", &sb), 0);
	ck_assert(S_ISCHR(sb.st_mode));
	/* A FIFO: written in place (a reader in the background), still a FIFO. */
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	snprintf(cmd, sizeof(cmd), "cat %s > %s/fromfifo &", fifo, dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(kvmprof_gmon_write(g, fifo, 0), 0);
	ck_assert_int_eq(stat(fifo, &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	snprintf(cmd, sizeof(cmd), "sleep 0.2; n=0; while [ $n -lt 50 ] && "
	    "[ $(wc -c < %s/fromfifo) -lt %zu ]; do sleep 0.1; n=$((n+1)); done; "
	    "cmp %s/fromfifo %s && echo SAME", dir, want, dir, target);
	out = run_capture(cmd, &st);
	ck_assert_msg(out != NULL && strstr(out, "SAME") != NULL, "FIFO got other bytes");
	free(out);
	kvmprof_gmon_free(g);
	kvs_close(kd);
}
END_TEST

START_TEST(gnu_gprof_agrees)
{
	json_t *t = load_truth("fbsd14/truth.json"), *gt = json_object_get(t, "gprof"), *f, *a, *b2;
	const char *out = path_join(test_tmpdir(), "gprof.gmon");
	char cmd[4096], *flat, *graph;
	size_t i, j;
	int st;

	/* GNU gprof is this suite's oracle: testutil's constructor fails the
	 * suite without it (or skips it, KVS_ALLOW_MISSING_ORACLES=1). */
	ck_assert_msg(have_tool("gprof"), "GNU gprof missing");
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s gmon -f -o %s 2>/dev/null", build_path("analyzers/kvmstat"),
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.minidump3"), out);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "gprof -b -p %s %s", fixture_path("fbsd14/kernel"), out);
	flat = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	snprintf(cmd, sizeof(cmd), "gprof -b -q %s %s", fixture_path("fbsd14/kernel"), out);
	graph = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	json_array_foreach(json_object_get(gt, "functions"), i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		uint64_t calls = 0;
		char *line, *p;
		double pct, cum, self;
		unsigned long long ncalls = 0;

		/* gprof counts self-recursive calls apart from "calls". */
		json_array_foreach(json_object_get(gt, "arcs"), j, a)
			if (strcmp(json_string_value(json_object_get(a, "callee")), name) == 0 &&
			    strcmp(json_string_value(json_object_get(a, "caller")), name) != 0)
				calls += jget(a, "count");
		for (line = flat; (p = strstr(line, name)) != NULL; line = p + 1)
			if (p[strlen(name)] == '\n' || p[strlen(name)] == '\0')
				break;
		ck_assert_msg(p != NULL, "%s missing from gprof's flat profile:\n%s", name, flat);
		while (p > flat && p[-1] != '\n')
			p--;
		ck_assert_int_ge(sscanf(p, "%lf %lf %lf %llu", &pct, &cum, &self, &ncalls), 3);
		ck_assert_msg(fabs(self - json_real_value(json_object_get(f, "seconds"))) < 0.006,
		    "%s: gprof %.2f s, truth %.4f s", name, self, json_real_value(json_object_get(f, "seconds")));
		ck_assert_msg(ncalls == calls, "%s: gprof %llu calls, truth %llu", name, ncalls,
		    (unsigned long long)calls);
	}
	/*
	 * Call graph (the fixture's graph has no cycles, so gprof prints full
	 * fractions).  Each called function's primary line shows its calls from
	 * others, "+N" for self-recursion; each caller -> callee pair shows
	 * "pair/total" both as the callee's parent line and the caller's child
	 * line, where total is the callee's calls from others.
	 */
	json_array_foreach(json_object_get(gt, "functions"), i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		uint64_t others = 0, self = 0;
		char want[160];

		json_array_foreach(json_object_get(gt, "arcs"), j, a) {
			if (strcmp(json_string_value(json_object_get(a, "callee")), name) != 0)
				continue;
			if (strcmp(json_string_value(json_object_get(a, "caller")), name) == 0)
				self += jget(a, "count");
			else
				others += jget(a, "count");
		}
		if (others + self == 0)
			continue;
		if (self)
			snprintf(want, sizeof(want), " %llu+%llu %s [", (unsigned long long)others,
			    (unsigned long long)self, name);
		else
			snprintf(want, sizeof(want), " %llu %s [", (unsigned long long)others, name);
		if (!graph_line(graph, "[", want))
			fprintf(stderr, "%s", graph);
		ck_assert_msg(graph_line(graph, "[", want), "call graph: no primary line \"%s\"", want);
	}
	json_array_foreach(json_object_get(gt, "arcs"), i, a) {
		const char *caller = json_string_value(json_object_get(a, "caller"));
		const char *callee = json_string_value(json_object_get(a, "callee"));
		uint64_t pair = 0, total = 0;
		char want[160];

		if (strcmp(caller, callee) == 0)
			continue;
		json_array_foreach(json_object_get(gt, "arcs"), j, b2) {
			const char *c2 = json_string_value(json_object_get(b2, "caller"));
			const char *e2 = json_string_value(json_object_get(b2, "callee"));
			if (strcmp(e2, callee) != 0 || strcmp(c2, e2) == 0)
				continue;
			total += jget(b2, "count");
			if (strcmp(c2, caller) == 0)
				pair += jget(b2, "count");
		}
		snprintf(want, sizeof(want), " %llu/%llu %s [", (unsigned long long)pair,
		    (unsigned long long)total, caller);
		ck_assert_msg(graph_line(graph, " ", want), "call graph lacks parent line \"%s\" of %s",
		    want, callee);
		snprintf(want, sizeof(want), " %llu/%llu %s [", (unsigned long long)pair,
		    (unsigned long long)total, callee);
		ck_assert_msg(graph_line(graph, " ", want), "call graph lacks child line \"%s\" of %s",
		    want, caller);
	}
	free(flat);
	free(graph);
	json_decref(t);
}
END_TEST

/* kvmstat profile --json: per-function ticks and calls. */
START_TEST(profile_json)
{
	json_t *t = load_truth("fbsd14/truth.json"), *gt = json_object_get(t, "gprof"), *f, *j, *r;
	char cmd[4096], *out;
	json_error_t je;
	size_t i, k;
	int st;

	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s profile --json", build_path("analyzers/kvmstat"),
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	j = json_loads(out, 0, &je);
	ck_assert_ptr_nonnull(j);
	json_array_foreach(json_object_get(gt, "functions"), i, f) {
		int found = 0;
		json_array_foreach(json_object_get(j, "functions"), k, r)
			if (strcmp(json_string_value(json_object_get(r, "name")),
			    json_string_value(json_object_get(f, "name"))) == 0) {
				ck_assert_uint_eq(jget(r, "ticks"), jget(f, "ticks"));
				ck_assert_uint_eq(jget(r, "calls"), jget(f, "calls"));
				found = 1;
			}
		ck_assert_int_eq(found, 1);
	}
	json_decref(j);
	free(out);

	/* --top 5: the five busiest arcs, busiest first (ties by call site). */
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s profile --json --top 5", build_path("analyzers/kvmstat"),
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.minidump2"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	j = json_loads(out, 0, &je);
	ck_assert_ptr_nonnull(j);
	json_t *ta = json_object_get(gt, "arcs"), *ja = json_object_get(j, "arcs");
	size_t n = json_array_size(ta), used[8], nu = 0;
	ck_assert_uint_eq(json_array_size(ja), n < 5 ? n : 5);
	json_array_foreach(ja, k, r) {
		size_t best = (size_t)-1, u;
		for (i = 0; i < n; i++) {
			json_t *c = json_array_get(ta, i);
			int taken = 0;
			for (u = 0; u < nu; u++)
				taken |= used[u] == i;
			if (taken)
				continue;
			if (best == (size_t)-1 || jget(c, "count") > jget(json_array_get(ta, best), "count") ||
			    (jget(c, "count") == jget(json_array_get(ta, best), "count") &&
			    jget(c, "frompc") < jget(json_array_get(ta, best), "frompc")))
				best = i;
		}
		used[nu++] = best;
		ck_assert_uint_eq(jget(r, "calls"), jget(json_array_get(ta, best), "count"));
		ck_assert_uint_eq(jget(r, "frompc"), jget(json_array_get(ta, best), "frompc"));
		ck_assert_uint_eq(jget(r, "selfpc"), jget(json_array_get(ta, best), "selfpc"));
		ck_assert_str_eq(json_string_value(json_object_get(r, "to")),
		    json_string_value(json_object_get(json_array_get(ta, best), "callee")));
	}
	json_decref(j);
	free(out);
	json_decref(t);
}
END_TEST

/* Patch _gmonparam fields in a copy of the raw image. */
static const char *
patched(const char *member, uint64_t value, uint64_t at_tos_link)
{
	json_t *t = load_truth("fbsd14/truth.json"), *gt = json_object_get(t, "gprof");
	kvs_t *kd = open_core("fbsd14", "mem.raw", 0);
	static char copy[4096];
	struct kvs_typeinfo ti;
	uint64_t addr, pa;
	size_t len;
	uint8_t *img = read_file(fixture_path("fbsd14/mem.raw"), &len);

	snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "gmon.raw"));
	ck_assert_int_eq(kvs_symbol(kd, "_gmonparam", &addr, NULL), 0);
	if (member != NULL) {
		ck_assert_int_eq(kvs_member(kd, "struct gmonparam", member, &ti), 0);
		ck_assert_int_eq(kvs_kvtop(kd, addr + ti.offset, &pa), 0);
		memcpy(img + pa, &value, ti.size);
	}
	if (at_tos_link) {
		/* The first arc of the first used call site links to itself. */
		uint16_t *fr;
		uint64_t frp, first = 0, i;
		ck_assert_int_eq(kvs_kvtop(kd, jget(gt, "froms_addr"), &frp), 0);
		fr = (uint16_t *)(img + frp);
		for (i = 0; i < jget(gt, "fromssize") / 2 && first == 0; i++)
			first = fr[i];
		ck_assert_int_eq(kvs_kvtop(kd, jget(gt, "tos_addr") + first * 24 + 16, &pa), 0);
		uint16_t self = (uint16_t)first;
		memcpy(img + pa, &self, 2);
	}
	write_file(copy, img, len);
	free(img);
	kvs_close(kd);
	json_decref(t);
	return copy;
}

/* histcounter_type 0 (kernels that never set it): the width comes from the
 * DWARF type of kcount, and the result is the same as with 16. */
START_TEST(width_from_dwarf)
{
	json_t *t = load_truth("fbsd14/truth.json"), *gt = json_object_get(t, "gprof");
	kvs_t *kd = open_core("fbsd14", patched("histcounter_type", 0, 0), KVS_O_RAW);
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);

	ck_assert_msg(g != NULL, "%s", kvs_geterr(kd));
	ck_assert_int_eq(kvmprof_gmon_counter_bits(g), 16);
	ck_assert_uint_eq(kvmprof_gmon_nbins(g) * 2, jget(gt, "kcountsize"));
	kvmprof_gmon_free(g);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A family's histogram whose last counter holds what fell outside the text
 * (Linux's prof_buffer): that bin's ticks are unknown even where its address
 * lies inside a function; without the flag they are the function's.  Four
 * 16-byte bins of 32-bit counters over prof_ip_output (0x69 bytes, nm). */
START_TEST(last_bin_overflow)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.elf"),
	    KVS_O_NO_CACHE, err);
	uint64_t lo, size;
	static const uint32_t cnt[4] = { 1, 2, 3, 5 };

	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_symbol(kd, "prof_ip_output", &lo, &size), 0);
	ck_assert_uint_ge(size, 64);
	for (int ovf = 0; ovf < 2; ovf++) {
		uint8_t *c = malloc(sizeof(cnt));
		ck_assert_ptr_nonnull(c);
		memcpy(c, cnt, sizeof(cnt));
		kvmprof_gmon_t *g = kvmprof_gmon_hist(kd, 0, 100, 32, lo, 64, c, sizeof(cnt), ovf);
		ck_assert_ptr_nonnull(g);
		ck_assert_uint_eq(kvmprof_gmon_nbins(g), 4);
		kvmprof_flat_t *f = kvmprof_gmon_flat(g, kd);
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(kvmprof_flat_total(f), 11);
		ck_assert_uint_eq(kvmprof_flat_unknown(f), ovf ? 5 : 0);
		ck_assert_uint_eq(kvmprof_flat_count(f), 1);
		ck_assert_str_eq(kvmprof_flat_get(f, 0)->name, "prof_ip_output");
		ck_assert_uint_eq(kvmprof_flat_get(f, 0)->ticks, ovf ? 6 : 11);
		kvmprof_flat_free(f);
		kvmprof_gmon_free(g);
	}
	kvs_close(kd);
}
END_TEST

/* A kernel of no family kvmstat knows (a plain amd64 executable, opened
 * for its file alone): no profile buffer, said so, no crash. */
START_TEST(profile_of_unknown_family)
{
	char err[KVS_ERRBUF_SIZE];
	char path[4096];
	kvs_t *kd;

	snprintf(path, sizeof(path), "%s/fixtures/dwarf-test/t.exec5", getenv("KVS_SRCDIR"));
	kd = kvs_open(path, NULL, KVS_O_KERNEL_ONLY | KVS_O_NO_CACHE, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOSYMBOL);
	ck_assert_msg(strstr(kvs_geterr(kd), "reads no kernel profile buffer of") != NULL, "%s",
	    kvs_geterr(kd));
	kvs_close(kd);
}
END_TEST

START_TEST(bad_buffers)
{
	kvs_t *kd;

	kd = open_core("fbsd14", patched("kcountsize", 1 << 20, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "larger than the text range"));
	kvs_close(kd);
	kd = open_core("fbsd14", patched("kcount", 0xffffffff8f000000ULL, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_UNMAPPED);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "histogram"));
	kvs_close(kd);
	kd = open_core("fbsd14", patched(NULL, 0, 1), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "loops"));
	kvs_close(kd);
	kd = open_core("fbsd14", patched("tossize", 1ULL << 40, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	kvs_close(kd);
	/* A counter width that is no whole counter: an error, not a division by zero. */
	kd = open_core("fbsd14", patched("histcounter_type", 4, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "histcounter_type 4"));
	kvs_close(kd);
	/* INT_MIN (UBSan caught its negation), and -16 (signed 16-bit counters). */
	kd = open_core("fbsd14", patched("histcounter_type", (uint32_t)INT32_MIN, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "histcounter_type -2147483648 is not a counter width"));
	kvs_close(kd);
	kd = open_core("fbsd14", patched("histcounter_type", (uint32_t)-16, 0), KVS_O_RAW);
	{
		kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
		ck_assert_msg(g != NULL, "%s", kvs_geterr(kd));
		ck_assert_int_eq(kvmprof_gmon_counter_bits(g), 16);
		kvmprof_gmon_free(g);
	}
	kvs_close(kd);
	/* kcountsize not a multiple of the counter size. */
	kd = open_core("fbsd14", patched("kcountsize", 167, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "whole number"));
	kvs_close(kd);
	/* A tolimit whose byte size would overflow. */
	kd = open_core("fbsd14", patched("tolimit", 1ULL << 62, 0), KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "tolimit"));
	kvs_close(kd);
	/* A kernel without profiling: clear message. */
	kd = kvs_open(fixture_path("fbsd12/kernel"), fixture_path("fbsd12/vmcore.minidump2"), 0, NULL);
	ck_assert_ptr_nonnull(kd);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "GPROF"));
	kvs_close(kd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gprof");
	TCase *tc = tcase_create("gmon");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, buffers_equal_truth, 0, 2);
	tcase_add_test(tc, gmon_out_file);
	tcase_add_test(tc, gmon_write_targets);
	tcase_add_test(tc, gnu_gprof_agrees);
	tcase_add_test(tc, profile_json);
	tcase_add_test(tc, width_from_dwarf);
	tcase_add_test(tc, bad_buffers);
	tcase_add_test(tc, last_bin_overflow);
	tcase_add_test(tc, profile_of_unknown_family);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
