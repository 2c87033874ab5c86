/* check_error.c - the error chain: innermost message, context, fault address. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "kvs_private.h"
#include "testutil.h"

START_TEST(chain_prefixes_context)
{
	struct kvs_error e;

	kerr_clear(&e);
	ck_assert_int_eq(e.status, KVS_OK);
	ck_assert_int_eq(kerr_set(&e, KVS_E_NOTDUMPED, "physical page 0x%x not in dump", 0x5000), -1);
	kerr_fault(&e, 0x5000);
	kerr_push(&e, "reading 8 bytes at 0x%llx", 0xffffffff80801000ULL);
	kerr_push(&e, "malloc type");
	ck_assert_str_eq(e.msg, "malloc type: reading 8 bytes at 0xffffffff80801000: "
	    "physical page 0x5000 not in dump");
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert(e.fault_valid);
	ck_assert_uint_eq(e.fault_addr, 0x5000);
	/* The first fault recorded wins. */
	kerr_fault(&e, 0x9000);
	ck_assert_uint_eq(e.fault_addr, 0x5000);
	kerr_clear(&e);
	ck_assert(!e.fault_valid);
	ck_assert_str_eq(e.msg, "");
	/* Context with no inner failure: an error still, of inconsistent data,
	 * and just the context. */
	ck_assert_int_eq(kerr_push(&e, "zone %s", "mbuf"), -1);
	ck_assert_int_eq(e.status, KVS_E_DATA);
	ck_assert_str_eq(e.msg, "zone mbuf");
}
END_TEST

START_TEST(errno_text_and_truncation)
{
	struct kvs_error e;
	char big[3000];
	int i;

	kerr_clear(&e);
	kerr_errno(&e, ENOENT, "dump %s", "/nonexistent");
	ck_assert_int_eq(e.status, KVS_E_IO);
	ck_assert_str_eq(e.msg, "dump /nonexistent: No such file or directory");
	kerr_errno(&e, ENOMEM, "x");
	ck_assert_int_eq(e.status, KVS_E_NOMEM);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	kerr_set(&e, KVS_E_DATA, "%s", big);
	for (i = 0; i < 10; i++)
		kerr_push(&e, "%s", big);
	ck_assert_uint_eq(strlen(e.msg), KVS_MSG_MAX - 1);
}
END_TEST

START_TEST(status_strings)
{
	int s;

	for (s = 0; s < KVS_E__COUNT; s++) {
		ck_assert_ptr_nonnull(kvs_status_str(s));
		ck_assert_int_gt(strlen(kvs_status_str(s)), 3);
	}
	ck_assert_str_eq(kvs_status_str(KVS_E__COUNT + 5), "unknown status");
	ck_assert_str_eq(kvs_status_str(KVS_E__COUNT), "unknown status");   /* the first past the end */
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("chain");

	tcase_add_test(tc, chain_prefixes_context);
	tcase_add_test(tc, errno_text_and_truncation);
	tcase_add_test(tc, status_strings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
