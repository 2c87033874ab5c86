/*
 * check_threads.c - handles are independent.  Two handles on two different
 * dumps of two different kernels (a raw image walked through the kernel's
 * own page tables, and a minidump with its own page-table section), used
 * from two threads at once, give exactly the answers each gives alone.
 *
 * The answer of a handle is a transcript of everything the library says
 * about its dump: the kernel description, the message buffer, every malloc
 * type and UMA zone with its counters, per-CPU numbers included, translated
 * addresses, and symbols found by address.  Any state shared between
 * handles (a global cache, a thread-local "last page size", a global zone
 * table) shows up as a transcript that differs from the one taken alone.
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmstat.h"
#include "memstat.h"
#include "testutil.h"

#define ROUNDS 40

struct text {
	char *buf;
	size_t len, cap;
};

static void
tprintf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		ck_assert_int_ge(n, 0);
		if ((size_t)n < t->cap - t->len)
			break;
		t->cap = t->cap * 2 + (size_t)n + 1;
		t->buf = realloc(t->buf, t->cap);
		ck_assert_ptr_nonnull(t->buf);
	}
	t->len += (size_t)n;
}

struct job {
	char kernel[1024], core[1024];
	int flags;
	struct text out;      /* the transcript of the last round */
	int mismatches;       /* rounds whose transcript differed from round 1 */
	char err[2048];
};

static void
list_transcript(struct text *t, struct memory_type_list *l)
{
	struct memory_type *mt;
	unsigned c, ncpu = memstat_get_maxcpus(memstat_mtl_first(l));

	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
		tprintf(t, "%d %s 0x%" PRIx64 " size %" PRIu64 " allocs %" PRIu64 " frees %"
		    PRIu64 " bytes %" PRIu64 " count %" PRIu64 " free %" PRIu64 "\n",
		    memstat_get_allocator(mt), memstat_get_name(mt), memstat_get_kaddr(mt),
		    memstat_get_size(mt), memstat_get_numallocs(mt), memstat_get_numfrees(mt),
		    memstat_get_bytes(mt), memstat_get_count(mt), memstat_get_free(mt));
		for (c = 0; c < ncpu; c++)
			tprintf(t, "  cpu%u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", c,
			    memstat_get_percpu_numallocs(mt, c), memstat_get_percpu_numfrees(mt, c),
			    memstat_get_percpu_free(mt, c));
	}
}

/* One round: open, describe everything, close.  0, or -1 with j->err. */
static int
transcript(struct job *j, struct text *t)
{
	char errbuf[KVS_ERRBUF_SIZE];
	struct kvs_kernelinfo ki;
	struct memory_type_list *l;
	struct memory_type *mt;
	kvs_t *kd;
	char *msg;
	size_t len;
	uint64_t pa;
	int i;

	t->len = 0;
	kd = kvs_open(j->kernel, j->core, j->flags, errbuf);
	if (kd == NULL) {
		snprintf(j->err, sizeof(j->err), "open: %s", errbuf);
		return -1;
	}
	kvs_kernel_info(kd, &ki);
	tprintf(t, "%s|%s|%s|%d|%d\n", ki.os, ki.version ? ki.version : "-",
	    ki.panic ? ki.panic : "-", ki.ncpus, ki.maxid);
	if (kvs_msgbuf(kd, &msg, &len) == 0) {
		tprintf(t, "msgbuf %zu %s\n", len, msg);
		free(msg);
	} else
		tprintf(t, "msgbuf error %s\n", kvs_geterr(kd));
	l = memstat_mtl_alloc();
	ck_assert_ptr_nonnull(l);
	if (memstat_kvm_all(l, kd) != 0) {
		snprintf(j->err, sizeof(j->err), "memstat_kvm_all: %s", kvs_geterr(kd));
		memstat_mtl_free(l);
		kvs_close(kd);
		return -1;
	}
	list_transcript(t, l);
	/* Translation and symbolisation of every type's kernel address (the
	 * translation cache and the page-size bookkeeping are per handle). */
	for (mt = memstat_mtl_first(l), i = 0; mt != NULL; mt = memstat_mtl_next(mt), i++) {
		uint64_t off = 0;
		const char *s = kvs_symbol_at(kd, memstat_get_kaddr(mt), &off);
		if (kvs_kvtop(kd, memstat_get_kaddr(mt), &pa) == 0)
			tprintf(t, "kvtop 0x%" PRIx64 " 0x%" PRIx64 " %s+%" PRIu64 "\n",
			    memstat_get_kaddr(mt), pa, s ? s : "?", off);
		else
			tprintf(t, "kvtop 0x%" PRIx64 " error %s\n", memstat_get_kaddr(mt),
			    kvs_geterr(kd));
	}
	/* Refresh the same list again: what the second pass finds must be
	 * what the first found (a dump does not change). */
	if (memstat_kvm_all(l, kd) != 0) {
		snprintf(j->err, sizeof(j->err), "refresh: %s", kvs_geterr(kd));
		memstat_mtl_free(l);
		kvs_close(kd);
		return -1;
	}
	list_transcript(t, l);
	memstat_mtl_free(l);
	kvs_close(kd);
	return 0;
}

static void *
run_job(void *arg)
{
	struct job *j = arg;
	struct text first = { 0 };
	int r;

	for (r = 0; r < ROUNDS; r++) {
		struct text *t = r == 0 ? &first : &j->out;
		if (transcript(j, t) != 0)
			return NULL;
		if (r > 0 && (t->len != first.len || memcmp(t->buf, first.buf, t->len) != 0))
			j->mismatches++;
	}
	free(first.buf);
	return NULL;
}

static void
job_init(struct job *j, const char *kernel, const char *core, int flags)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->kernel, sizeof(j->kernel), "%s", fixture_path(kernel));
	snprintf(j->core, sizeof(j->core), "%s", fixture_path(core));
	j->flags = flags;
}

START_TEST(two_handles_two_threads)
{
	struct job alone[2], together[2];
	pthread_t th[2];
	int i;

	job_init(&alone[0], "fbsd14/kernel", "fbsd14/mem.raw", KVS_O_RAW);
	job_init(&alone[1], "fbsd12/kernel", "fbsd12/vmcore.minidump2", 0);
	for (i = 0; i < 2; i++) {
		ck_assert_msg(transcript(&alone[i], &alone[i].out) == 0, "%s", alone[i].err);
		ck_assert_uint_gt(alone[i].out.len, 1000);
	}
	/* The two dumps really are different (else equal answers prove little). */
	ck_assert(alone[0].out.len != alone[1].out.len ||
	    memcmp(alone[0].out.buf, alone[1].out.buf, alone[0].out.len) != 0);

	for (i = 0; i < 2; i++) {
		job_init(&together[i], i == 0 ? "fbsd14/kernel" : "fbsd12/kernel",
		    i == 0 ? "fbsd14/mem.raw" : "fbsd12/vmcore.minidump2", alone[i].flags);
		ck_assert_int_eq(pthread_create(&th[i], NULL, run_job, &together[i]), 0);
	}
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_msg(together[i].err[0] == '\0', "thread %d: %s", i, together[i].err);
		ck_assert_int_eq(together[i].mismatches, 0);
		ck_assert_uint_eq(together[i].out.len, alone[i].out.len);
		ck_assert_msg(memcmp(together[i].out.buf, alone[i].out.buf, alone[i].out.len) == 0,
		    "thread %d's answers differ from the same handle's alone", i);
		free(together[i].out.buf);
		free(alone[i].out.buf);
	}
}
END_TEST

/* Two handles on one dump in one thread, interleaved call by call: a handle
 * keeps its error, its cache and its list to itself. */
START_TEST(interleaved_handles_keep_their_errors)
{
	char errbuf[KVS_ERRBUF_SIZE];
	char path14[1024], path12[1024], k14[1024], k12[1024];
	kvs_t *a, *b;
	uint64_t v;

	snprintf(k14, sizeof(k14), "%s", fixture_path("fbsd14/kernel"));
	snprintf(k12, sizeof(k12), "%s", fixture_path("fbsd12/kernel"));
	snprintf(path14, sizeof(path14), "%s", fixture_path("fbsd14/vmcore.minidump3"));
	snprintf(path12, sizeof(path12), "%s", fixture_path("fbsd12/vmcore.minidump2"));
	a = kvs_open(k14, path14, 0, errbuf);
	ck_assert_msg(a != NULL, "%s", errbuf);
	b = kvs_open(k12, path12, 0, errbuf);
	ck_assert_msg(b != NULL, "%s", errbuf);
	ck_assert_int_eq(kvs_read(a, 0x10, &v, sizeof(v)), -1);     /* unmapped in a */
	ck_assert_int_eq(kvs_symbol(b, "version", &v, NULL), 0);     /* fine in b */
	ck_assert_int_eq(kvs_errstatus(b), KVS_OK);
	ck_assert_int_eq(kvs_errstatus(a), KVS_E_UNMAPPED);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(a), "0x10"));
	kvs_close(a);
	kvs_close(b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("independent handles");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, two_handles_two_threads);
	tcase_add_test(tc, interleaved_handles_keep_their_errors);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
