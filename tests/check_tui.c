/*
 * check_tui.c - kvmtop end to end under tmux, on the live fixture (a raw
 * image that fixtures/gen/live.sh keeps changing): sort keys reorder the
 * rows, '/' filters, rates are non-zero while the "kernel" runs and settle
 * to zero when it stops, a resize redraws, q quits.  And names are escaped:
 * checked on the raw bytes kvmtop writes to its terminal (tmux pipe-pane),
 * since capture-pane shows only the rendered text, never an escape.
 *
 * tmux (and python3, for the live fixture) are required oracles (see
 * testutil.c): without them the suite fails.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* Session names are chosen in main() (before Check forks the tests) so that
 * main can remove them however a test ends. */
static char sess[64], sess_raw[64], raw[512];

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

	ck_assert_msg(src != NULL, "KVS_SRCDIR not set");
	snprintf(raw, sizeof(raw), "%s", path_join(test_tmpdir(), "live.raw"));
	snprintf(cmd, sizeof(cmd), "bash %s/fixtures/gen/live.sh %s 3000 60 >/dev/null 2>&1 & echo $!",
	    src, raw);
	s = run_capture(cmd, NULL);
	pid_t live = (pid_t)atoi(s);
	free(s);
	/* The generator compiles and writes the image first: slow on a busy machine. */
	for (i = 0; i < 600 && access(raw, R_OK) != 0; i++)
		usleep(100 * 1000);
	ck_assert_int_eq(access(raw, R_OK), 0);
	snprintf(cmd, sizeof(cmd), "new-session -d -s %s -x 80 -y 24 '%s -N %s -M %s --raw -w 0.3'",
	    sess, build_path("tui/kvmtop"), fixture_path("fbsd14/kernel"), raw);
	tmux("%s", cmd);
	usleep(1500 * 1000);

	s = screen();
	ck_assert_ptr_nonnull(strstr(s, "(live)"));
	ck_assert_msg(sum_rates(s) > 0, "no rates while live:\n%s", s);
	free(s);

	keys("n");                                      /* sort by name */
	s = screen();
	ck_assert_ptr_nonnull(strstr(s, "sort TYPE"));
	ck_assert_int_eq(strncmp(row(s, 0), "a_malloc_type_with", 18), 0);
	/* The hostile name is on screen, shown escaped. */
	ck_assert_msg(strstr(s, "evil\\x1b[2J\\x1b]0;") != NULL, "no escaped name:\n%s", s);
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

/* The fixture's hostile malloc type name (the first with a control byte). */
static char *
hostile_name(void)
{
	json_t *t = load_truth("fbsd14/truth.json"), *row;
	char *name = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(t, "malloc"), "types"), i, row) {
		const char *n = json_string_value(json_object_get(row, "name"));
		const char *c;
		for (c = n; *c != '\0' && name == NULL; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				name = strdup(n);
	}
	json_decref(t);
	ck_assert_msg(name != NULL, "truth has no malloc type with a control byte in its name");
	return name;
}

/* Length of the escape sequence at p (p[0] == ESC) if it is one curses
 * emits for TERM=screen: CSI (ESC [ params final), a charset designation
 * (ESC ( x, ESC ) x), keypad modes (ESC = / ESC >), save/restore cursor
 * (ESC 7 / ESC 8), index/reverse index/next line (ESC D, M, E), or a
 * reset (ESC c).  0 for anything else - an OSC (ESC ]) in particular. */
static size_t
curses_sequence(const unsigned char *p, size_t n)
{
	size_t i;

	if (n < 2)
		return 0;
	switch (p[1]) {
	case '[':
		for (i = 2; i < n; i++) {
			if (p[i] >= 0x40 && p[i] <= 0x7e)
				return i + 1;
			if (p[i] < 0x20 || p[i] > 0x3f)
				return 0;
		}
		return 0;
	case '(': case ')':
		return n >= 3 ? 3 : 0;
	case '=': case '>': case '7': case '8': case 'D': case 'M': case 'E': case 'c':
		return 2;
	default:
		return 0;
	}
}

/*
 * kvmtop on a static core in a window tall enough for every malloc type,
 * with everything it writes to the terminal recorded by tmux pipe-pane
 * (started before kvmtop: the session's shell waits for a gate file).
 * The hostile name's raw bytes never reach the terminal: no ESC but those
 * that begin curses' own sequences, no OSC, no BEL, not the name's bytes;
 * its escaped form does.
 */
START_TEST(raw_output_escapes_names)
{
	char *name = hostile_name(), cmd[8192], esc[512];
	const char *s2 = sess_raw;
	const char *dir = test_tmpdir();
	char out[512], gate[512];
	unsigned char *b;
	size_t len, i, o = 0;
	int k;

	snprintf(out, sizeof(out), "%s", path_join(dir, "kvmtop.bytes"));
	snprintf(gate, sizeof(gate), "%s", path_join(dir, "gate"));
	/* What the list's 18-column TYPE field shows: each control byte as
	 * \xNN, cut to 18 characters. */
	for (i = 0; name[i] != '\0' && o < sizeof(esc) - 5; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(esc + o, sizeof(esc) - o, "\\x%02x", c);
		else
			esc[o++] = (char)c;
	}
	esc[o < 18 ? o : 18] = '\0';

	snprintf(cmd, sizeof(cmd), "tmux new-session -d -s %s -x 100 -y 60 "
	    "'while [ ! -e %s ]; do sleep 0.05; done; exec env TERM=screen %s -N %s -M %s -w 0.2 "
	    "--iterations 3' >/dev/null 2>&1", s2, gate, build_path("tui/kvmtop"),
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.minidump3"));
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "tmux pipe-pane -O -t %s 'cat >> %s' >/dev/null 2>&1", s2, out);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(write_file(gate, "", 0), 0);
	/* kvmtop quits after its iterations; the session ends with it. */
	snprintf(cmd, sizeof(cmd), "tmux has-session -t %s >/dev/null 2>&1", s2);
	for (k = 0; k < 300 && system(cmd) == 0; k++)
		usleep(100 * 1000);
	if (k == 300) {
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", s2);
		(void)!system(cmd);
		ck_abort_msg("kvmtop did not exit after --iterations 3");
	}
	usleep(300 * 1000);                         /* let the pipe drain */
	b = read_file(out, &len);
	ck_assert_msg(b != NULL && len > 0, "nothing recorded from kvmtop");
	ck_assert_ptr_nonnull(memmem(b, len, "kvmtop - ", 9));

	/* The escaped form is drawn... */
	ck_assert_msg(memmem(b, len, esc, strlen(esc)) != NULL, "escaped name '%s' never written", esc);
	/* ... the raw bytes never: not the name up to its first control byte,
	 * no BEL, and every ESC starts one of curses' own sequences. */
	{
		size_t p = strcspn(name, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"
		    "\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e"
		    "\x1f\x7f");
		ck_assert_ptr_null(memmem(b, len, name, p + 1));
	}
	ck_assert_msg(memchr(b, 0x07, len) == NULL, "BEL written to the terminal");
	for (i = 0; i < len; i++) {
		size_t n;
		if (b[i] != 0x1b)
			continue;
		n = curses_sequence(b + i, len - i);
		ck_assert_msg(n != 0, "ESC not starting a curses sequence at byte %zu: %.*s", i,
		    (int)(len - i < 24 ? len - i : 24), (const char *)b + i);
		i += n - 1;
	}
	free(b);
	free(name);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tui");
	TCase *tc = tcase_create("tmux");
	SRunner *sr;
	int nf;

	snprintf(sess, sizeof(sess), "kvstest%d", (int)getpid());
	snprintf(sess_raw, sizeof(sess_raw), "kvsraw%d", (int)getpid());
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, end_to_end);
	tcase_add_test(tc, raw_output_escapes_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess);
		(void)!system(cmd);
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess_raw);
		(void)!system(cmd);
	}
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
