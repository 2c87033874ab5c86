/*
 * check_gdb.c - the independent check: gdb, given the fixture kernel and the
 * generator's ELF core addressed by virtual address, must print the same
 * values libkvmstat reads from the minidump, the ELF full dump and the raw
 * image (different files, different translation paths).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmstat.h"
#include "testutil.h"

static const char *const cores[] = {
	"fbsd14/vmcore.minidump3", "fbsd14/vmcore.minidump1", "fbsd14/vmcore.elf", "fbsd14/mem.raw",
};

/* Run gdb with one -ex per expression; returns its stdout. */
static char *
gdb(const char *exprs)
{
	char cmd[8192];
	int st;

	snprintf(cmd, sizeof(cmd), "gdb -batch -nx %s %s %s 2>/dev/null", exprs,
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.kva.elf"));
	return run_capture(cmd, &st);
}

static uint64_t
gdb_u64(const char *expr)
{
	char ex[512], *out, *p;
	uint64_t v;

	snprintf(ex, sizeof(ex), "-ex 'printf \"VAL=%%llu\\n\", (unsigned long long)(%s)'", expr);
	out = gdb(ex);
	ck_assert_ptr_nonnull(out);
	p = strstr(out, "VAL=");
	ck_assert_msg(p != NULL, "gdb did not evaluate %s: %s", expr, out);
	v = strtoull(p + 4, NULL, 10);
	free(out);
	return v;
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

START_TEST(same_values_as_gdb)
{
	kvs_t *kd;
	uint64_t a, mbp, head, v;
	char ours[512], *out, *p;

	if (system("command -v gdb >/dev/null 2>&1") != 0) {
		fprintf(stderr, "gdb not installed: independent check skipped\n");
		return;
	}
	kd = open_core(_i);
	/* version string */
	ck_assert_int_eq(kvs_symbol(kd, "version", &a, NULL), 0);
	ck_assert_int_ge(kvs_read_string(kd, a, ours, sizeof(ours), NULL), 0);
	out = gdb("-ex 'printf \"V=[%s]\\n\", version'");
	p = strstr(out, "V=[");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(strncmp(p + 3, ours, strlen(ours)), 0);
	ck_assert_int_eq(p[3 + strlen(ours)], ']');
	free(out);
	/* integers and struct members through DWARF on our side */
	ck_assert_int_eq(kvs_symbol(kd, "mp_ncpus", &a, NULL), 0);
	v = 0;
	kvs_read(kd, a, &v, 4);
	ck_assert_uint_eq(v, gdb_u64("mp_ncpus"));
	ck_assert_int_eq(kvs_symbol(kd, "mp_maxid", &a, NULL), 0);
	v = 0;
	kvs_read(kd, a, &v, 4);
	ck_assert_uint_eq(v, gdb_u64("mp_maxid"));
	ck_assert_int_eq(kvs_symbol(kd, "msgbufp", &a, NULL), 0);
	kvs_read(kd, a, &mbp, 8);
	ck_assert_uint_eq(mbp, gdb_u64("msgbufp"));
	ck_assert_uint_eq(our_member_u(kd, mbp, "struct msgbuf", "msg_size"), gdb_u64("msgbufp->msg_size"));
	ck_assert_uint_eq(our_member_u(kd, mbp, "struct msgbuf", "msg_wseq"), gdb_u64("msgbufp->msg_wseq"));
	ck_assert_uint_eq(our_member_u(kd, mbp, "struct msgbuf", "msg_ptr"), gdb_u64("msgbufp->msg_ptr"));
	ck_assert_int_eq(kvs_symbol(kd, "kmemstatistics", &a, NULL), 0);
	kvs_read(kd, a, &head, 8);
	ck_assert_uint_eq(head, gdb_u64("kmemstatistics"));
	ck_assert_uint_eq(our_member_u(kd, head, "struct malloc_type", "ks_next"),
	    gdb_u64("kmemstatistics->ks_next"));
	ck_assert_uint_eq(our_member_u(kd, head, "struct malloc_type", "ks_mti.mti_stats"),
	    gdb_u64("kmemstatistics->ks_mti.mti_stats"));
	ck_assert_uint_eq(our_member_u(kd, our_member_u(kd, head, "struct malloc_type", "ks_next"),
	    "struct malloc_type", "ks_version"), gdb_u64("kmemstatistics->ks_next->ks_version"));
	/* a name that straddles pages, read through the list */
	uint64_t second = our_member_u(kd, head, "struct malloc_type", "ks_next");
	uint64_t desc = our_member_u(kd, second, "struct malloc_type", "ks_shortdesc");
	ck_assert_int_ge(kvs_read_string(kd, desc, ours, 32, NULL), 0);
	out = gdb("-ex 'printf \"N=[%s]\\n\", kmemstatistics->ks_next->ks_shortdesc'");
	p = strstr(out, "N=[");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(strncmp(p + 3, ours, strlen(ours)), 0);
	free(out);
	kvs_close(kd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gdb");
	TCase *tc = tcase_create("independent");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 200);
	tcase_add_loop_test(tc, same_values_as_gdb, 0, 4);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
