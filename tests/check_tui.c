/*
 * check_tui.c - kvmtop end to end under tmux, on the live fixture (a raw
 * image that fixtures/gen/live.sh keeps changing): sort keys reorder the
 * rows, '/' filters, rates are non-zero while the "kernel" runs and settle
 * to zero when it stops, a resize redraws, names are escaped, q quits.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char sess[64], raw[512];

static void
tmux(const char *fmt, const char *arg)
{
	char *a = NULL, *cmd = NULL;

	if (asprintf(&a, fmt, arg) < 0 || asprintf(&cmd, "tmux %s >/dev/null 2>&1", a) < 0)
		abort();
	(void)!system(cmd);
	free(a);
	free(cmd);
}

static char *
screen(void)
{
	char cmd[256];
	int st;

	snprintf(cmd, sizeof(cmd), "tmux capture-pane -p -t %s", sess);
	return run_capture(cmd, &st);
}

static void
keys(const char *k)
{
	char a[256];

	snprintf(a, sizeof(a), "send-keys -t %s %s", sess, k);
	tmux("%s", a);
	usleep(700 * 1000);
}

/* The n-th data row (0-based) of the list, or NULL. */
static char *
row(char *scr, int n)
{
	char *p = strstr(scr, "TYPE ");
	int i;

	if (p == NULL)
		return NULL;
	for (i = 0; i <= n; i++) {
		p = strchr(p, '\n');
		if (p == NULL)
			return NULL;
		p++;
	}
	return p;
}

/* Column value: fields are fixed width (TYPE 18, INUSE 8, MEMUSE 9, REQUESTS 10, dINUSE 8, dMEM 8, REQ/s 9). */
static double
field(const char *r, int start, int width)
{
	char b[32];

	snprintf(b, sizeof(b), "%.*s", width, r + start);
	return atof(b);
}

static double
sum_rates(char *scr)
{
	double s = 0;
	int i;

	for (i = 0; i < 15; i++) {
		char *r = row(scr, i);
		if (r == NULL || strncmp(r, "h help", 6) == 0)
			break;
		s += field(r, 61, 9);
	}
	return s;
}

START_TEST(end_to_end)
{
	char cmd[8192], *s, *r;
	const char *src = getenv("KVS_SRCDIR");
	int i;

	if (src == NULL || system("command -v tmux python3 >/dev/null 2>&1") != 0) {
		fprintf(stderr, "tmux or python3 missing: kvmtop end-to-end test skipped\n");
		return;
	}
	snprintf(sess, sizeof(sess), "kvstest%d", (int)getpid());
	snprintf(raw, sizeof(raw), "%s", path_join(test_tmpdir(), "live.raw"));
	snprintf(cmd, sizeof(cmd), "bash %s/fixtures/gen/live.sh %s 3000 60 >/dev/null 2>&1 & echo $!",
	    src, raw);
	s = run_capture(cmd, NULL);
	pid_t live = (pid_t)atoi(s);
	free(s);
	for (i = 0; i < 50 && access(raw, R_OK) != 0; i++)
		usleep(100 * 1000);
	ck_assert_int_eq(access(raw, R_OK), 0);
	snprintf(cmd, sizeof(cmd), "new-session -d -s %s -x 80 -y 24 '%s -N %s -M %s --raw -w 0.3'",
	    sess, build_path("tui/kvmtop"), fixture_path("fbsd14/kernel"), raw);
	tmux("%s", cmd);
	usleep(1500 * 1000);

	s = screen();
	ck_assert_ptr_nonnull(strstr(s, "(live)"));
	ck_assert_ptr_null(strchr(s, 0x1b));
	ck_assert_msg(sum_rates(s) > 0, "no rates while live:\n%s", s);
	free(s);

	keys("n");                                      /* sort by name */
	s = screen();
	ck_assert_ptr_nonnull(strstr(s, "sort TYPE"));
	ck_assert_int_eq(strncmp(row(s, 0), "a_malloc_type_with", 18), 0);
	free(s);
	keys("r");                                      /* sort by requests */
	s = screen();
	ck_assert_ptr_nonnull(strstr(s, "sort REQUESTS"));
	double first = field(row(s, 0), 35, 10), second = field(row(s, 1), 35, 10);
	ck_assert_msg(first >= second, "not sorted by requests:\n%s", s);
	free(s);

	keys("/");
	keys("d");
	keys("e");
	keys("v");
	keys("Enter");
	s = screen();
	for (i = 0; i < 10; i++) {
		r = row(s, i);
		if (r == NULL || strncmp(r, "h help", 6) == 0 || *r == '\n')
			break;
		ck_assert_msg(strncmp(r, "dev", 3) == 0, "filter let through: %.30s", r);
	}
	ck_assert_int_ge(i, 2);                         /* devbuf x2, devstat */
	free(s);
	keys("Escape");
	keys("/");
	keys("Escape");

	tmux("resize-window -t %s -x 100 -y 30", sess);
	usleep(800 * 1000);
	s = screen();
	{
		int lines = 0;
		for (r = s; *r; r++)
			lines += *r == '\n';
		ck_assert_int_eq(lines, 30);
		ck_assert_ptr_nonnull(strstr(s, "h help  q quit"));
	}
	free(s);

	/* Stop the "kernel": rates settle to zero. */
	kill(live, SIGTERM);
	usleep(1500 * 1000);
	s = screen();
	ck_assert_msg(sum_rates(s) == 0, "rates did not settle:\n%s", s);
	free(s);

	/* The image is cut short under kvmtop: a banner over the last good
	 * rows, no crash. */
	ck_assert_int_eq(truncate(raw, 2 << 20), 0);
	usleep(1200 * 1000);
	s = screen();
	ck_assert_msg(strstr(s, "refresh failed") != NULL, "no failure banner:\n%s", s);
	ck_assert_ptr_nonnull(row(s, 0));
	free(s);

	keys("q");
	snprintf(cmd, sizeof(cmd), "has-session -t %s", sess);
	snprintf(cmd, sizeof(cmd), "tmux has-session -t %s 2>/dev/null", sess);
	ck_assert_int_ne(system(cmd), 0);               /* kvmtop exited */
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tui");
	TCase *tc = tcase_create("tmux");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, end_to_end);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (sess[0] != '\0') {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess);
		(void)!system(cmd);
	}
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
