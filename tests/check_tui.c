/*
 * check_tui.c - kvmtop end to end under tmux, on the live fixture (a raw
 * image that fixtures/gen/live.sh keeps changing): sort keys reorder the
 * rows, '/' filters, rates are non-zero while the "kernel" runs and settle
 * to zero when it stops, a resize redraws, q quits.  And names are escaped:
 * checked on the raw bytes kvmtop writes to its terminal (tmux pipe-pane),
 * since capture-pane shows only the rendered text, never an escape; and on
 * the raw bytes of batch mode (a pipe: nothing but printable ASCII and
 * newlines).  Removing kvmtop's escaping (render.c: clean() and put()) fails
 * raw_output_escapes_names (ncurses itself turns a control byte into ^[, so
 * the name reaches the terminal as curses' caret form, not ours),
 * end_to_end, screens_at_sizes, batch_malloc_sizes and batch_when_piped
 * (a raw ESC on stdout) - tried, then restored.
 *
 * Issue 27 (item 10): columns shown whole at every width (batch_columns_whole),
 * a filter's totals (end_to_end), a dump read once (batch_when_piped,
 * static_dump_and_zone_percpu), the per-CPU screen of a UMA zone, --version,
 * an unknown TERM and an unwritable stdout (version_term_full), one key help
 * in the program, README.md and kvmtop.1 (help_is_one_text), and no option
 * in README.md that kvmtop lacks (readme_options_exist).
 *
 * tmux (and python3, for the live fixture) are required oracles (see
 * testutil.c): without them the suite fails.
 */
#include <check.h>
#include <stdbool.h>
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

/* Column value: fields are fixed width (TYPE 18, INUSE 8, MEMUSE(K) 10, REQUESTS 10, dINUSE 8,
 * dMEM(K) 9, REQ/s 8). */
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
		s += field(r, 63, 8);
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
	/* The memory delta is in KiB with one decimal on every row (it once
	 * mixed bytes and K), and moves while the kernel runs. */
	{
		int moved = 0;
		ck_assert_ptr_nonnull(strstr(s, "dMEM(K)"));
		for (i = 0; i < 15 && (r = row(s, i)) != NULL && strncmp(r, "h help", 6) != 0; i++) {
			char cell[16], *dot;
			snprintf(cell, sizeof(cell), "%.9s", r + 54);
			dot = strchr(cell, '.');
			ck_assert_msg(dot != NULL && dot[1] >= '0' && dot[1] <= '9' && dot[2] == '\0',
			    "dMEM(K) cell '%s' is not KiB with one decimal", cell);
			moved += atof(cell) != 0;
		}
		ck_assert_int_gt(moved, 0);
	}
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
	double first = field(row(s, 0), 36, 10), second = field(row(s, 1), 36, 10);
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
	/* The header's totals are the filtered rows', and say so. */
	{
		char want[64];
		snprintf(want, sizeof(want), "types %d (filtered: %d of ", i, i);
		ck_assert_msg(strstr(s, want) != NULL, "no '%s' in the header:\n%s", want, s);
	}
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
	ck_assert_ptr_nonnull(memmem(b, len, "kvmtop: ", 8));

	/* The raw bytes never reach the terminal: not the name up to its first
	 * control byte, no BEL, and every ESC starts one of curses' own
	 * sequences.  (Checked first: with kvmtop's escaping removed, these
	 * are what fail.) */
	{
		size_t p = strcspn(name, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"
		    "\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e"
		    "\x1f\x7f");
		ck_assert_ptr_null(memmem(b, len, name, p + 1));
		/* Nor curses' own rendering of that byte (^[ for ESC): it shows
		 * kvmtop handed the raw name to curses unescaped. */
		if (p < strlen(name) && p < 200) {
			char caret[256];
			snprintf(caret, sizeof(caret), "%.*s^%c", (int)p, name, name[p] ^ 0x40);
			ck_assert_msg(memmem(b, len, caret, strlen(caret)) == NULL,
			    "the raw name reached curses: '%s' on the terminal", caret);
		}
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
	/* ... and the escaped form is drawn. */
	ck_assert_msg(memmem(b, len, esc, strlen(esc)) != NULL, "escaped name '%s' never written", esc);
	free(b);
	free(name);
}
END_TEST

/* ------------------------------------------------------------ batch mode */

/*
 * kvmtop -b prints frames as plain text, the same render() the terminal
 * shows.  Each frame is checked against the fixture generator's truth: every
 * row's name and figures belong to one object of the truth (used once), the
 * rows are in the sort order, and nothing is wider than the terminal.
 */
static char *
batch(const char *args, int w, int h, int *status)
{
	char cmd[4096], hs[32] = "";

	if (h > 0)
		snprintf(hs, sizeof(hs), "--height %d", h);
	snprintf(cmd, sizeof(cmd), "%s -b -n 1 --width %d %s %s 2>&1", build_path("tui/kvmtop"), w, hs,
	    args);
	return run_capture(cmd, status);
}

static char *
fbsd_args(const char *extra)
{
	static char a[2048];

	snprintf(a, sizeof(a), "-N %s -M %s %s", fixture_path("fbsd14/kernel"),
	    fixture_path("fbsd14/vmcore.minidump3"), extra);
	return a;
}

/* Lines of a frame (up to its blank separator), split in place. */
static int
frame_lines(char *out, char **lines, int max)
{
	int n = 0;
	char *p = out, *nl;

	while (n < max && (nl = strchr(p, '\n')) != NULL) {
		*nl = '\0';
		lines[n++] = p;
		p = nl + 1;
	}
	return n;
}

/* Name as a cell of width w shows it: control bytes as \xNN, cut, right
 * blanks dropped. */
static void
shown_name(char *dst, size_t len, const char *name, int w)
{
	size_t o = 0, i;

	for (i = 0; name[i] != '\0' && o + 5 < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(dst + o, len - o, "\\x%02x", c);
		else
			dst[o++] = (char)c;
	}
	dst[o] = '\0';
	if ((int)o > w)
		dst[w] = '\0';
	for (o = strlen(dst); o > 0 && dst[o - 1] == ' '; o--)
		dst[o - 1] = '\0';
}

/* A whole frame: only printable ASCII and newlines, no line wider than w. */
static void
assert_plain(const char *out, int w)
{
	const char *p, *ls = out;

	for (p = out; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		ck_assert_msg(c == '\n' || (c >= 0x20 && c < 0x7f),
		    "byte 0x%02x at offset %td of batch output", c, p - out);
		if (c == '\n') {
			ck_assert_msg(p - ls <= w, "line wider than %d: '%.*s'", w, (int)(p - ls), ls);
			ls = p + 1;
		}
	}
}

/* Split the cells after the name (and address) into blank-separated words. */
static int
words(char *s, char **w, int max)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " ", &save); t != NULL && n < max; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	return n;
}

static uint64_t
u(const char *s)
{
	return strtoull(s, NULL, 10);
}

/* Check the malloc list frame of size w x h (h 0: every row). */
static void
check_malloc_frame(int w, int h, bool addr)
{
	json_t *truth = load_truth("fbsd14/truth.json");
	json_t *types = json_object_get(json_object_get(truth, "malloc"), "types");
	size_t nt = json_array_size(types), i;
	char *out, *lines[4096], *used;
	int st, n, r, nrows = 0;
	uint64_t prev_mem = UINT64_MAX;

	out = batch(fbsd_args(addr ? "-a" : ""), w, h, &st);
	ck_assert_msg(st == 0, "kvmtop -b exited %d: %s", st, out);
	assert_plain(out, w);
	n = frame_lines(out, lines, 4096);
	if (h > 0)
		ck_assert_msg(n == h + 1, "%dx%d: %d lines, not a frame and its blank line", w, h, n);
	ck_assert_str_eq(lines[n - 1], "");
	ck_assert_msg(strncmp(lines[0], "kvmtop: malloc types - ", (size_t)(w < 23 ? w : 23)) == 0,
	    "title: %s", lines[0]);
	ck_assert_msg(strncmp(lines[4], "TYPE ", 5) == 0, "list header: %s", lines[4]);
	if (w >= 80) {
		const char *rate = strstr(lines[4], "REQ/s"), *sz = strstr(lines[4], "SIZES");
		ck_assert_ptr_nonnull(strstr(lines[4], "MEMUSE(K)"));
		ck_assert(addr || strstr(lines[4], "dMEM(K)") != NULL);
		ck_assert_msg(addr == (strstr(lines[4], "ADDRESS") != NULL), "ADDRESS column: %s", lines[4]);
		ck_assert_msg((addr && w < 120) || (rate != NULL && sz == rate + 6), "SIZES not right after REQ/s: %s", lines[4]);
	}
	used = calloc(nt, 1);
	for (r = 5; r < n && lines[r][0] != '\0'; r++) {
		char name[32], cells[1024], *wd[16];
		int nw, found = -1;
		nrows++;
		snprintf(name, sizeof(name), "%.18s", lines[r]);
		for (i = strlen(name); i > 0 && name[i - 1] == ' '; i--)
			name[i - 1] = '\0';
		snprintf(cells, sizeof(cells), "%s", strlen(lines[r]) > 18 ? lines[r] + 18 : "");
		nw = words(cells, wd, 16);
		for (i = 0; i < nt && found < 0; i++) {
			json_t *t = json_array_get(types, i);
			char want[128];
			int k = 0;
			if (used[i])
				continue;
			shown_name(want, sizeof(want), json_string_value(json_object_get(t, "name")), 18);
			if (strcmp(want, name) != 0)
				continue;
			if (addr && w >= 37) {
				if (strtoull(wd[k], NULL, 16) != strtoull(json_string_value(json_object_get(t,
				    "addr")), NULL, 16))
					continue;
				k++;
			}
			/* Figures that fit on the line: INUSE, MEMUSE(K), REQUESTS. */
			if (nw > k && u(wd[k]) != jget(t, "inuse"))
				continue;
			if (nw > k + 1 && u(wd[k + 1]) != (jget(t, "memuse_bytes") + 1023) / 1024)
				continue;
			if (nw > k + 2 && u(wd[k + 2]) != jget(t, "numallocs"))
				continue;
			if (nw > k + 6 && !addr) {       /* SIZES, whole at this width */
				char sz[256] = "";
				size_t j, o = 0;
				json_t *v;
				json_array_foreach(json_object_get(t, "sizes"), j, v)
					o += (size_t)snprintf(sz + o, sizeof(sz) - o, "%s%llu", o ? "," : "",
					    (unsigned long long)jnum(v));
				if (w >= 200 && strcmp(wd[k + 6], sz) != 0)
					continue;
			}
			found = (int)i;
		}
		ck_assert_msg(found >= 0, "%dx%d: row '%s' matches no malloc type of the truth", w, h,
		    lines[r]);
		used[found] = 1;
		{
			uint64_t mem = (jget(json_array_get(types, (size_t)found), "memuse_bytes") + 1023) / 1024;
			ck_assert_msg(mem <= prev_mem, "rows not sorted by MEMUSE at '%s'", lines[r]);
			prev_mem = mem;
		}
	}
	if (h > 0)
		ck_assert_int_eq(nrows, (int)nt < h - 5 ? (int)nt : h - 5);
	else
		ck_assert_int_eq(nrows, (int)nt);           /* every type, once */
	free(used);
	free(out);
	json_decref(truth);
}

START_TEST(batch_malloc_sizes)
{
	static const int sz[][2] = { { 40, 8 }, { 80, 24 }, { 120, 40 }, { 200, 50 }, { 200, 0 } };
	size_t i;

	for (i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		check_malloc_frame(sz[i][0], sz[i][1], false);
		check_malloc_frame(sz[i][0], sz[i][1], true);
	}
}
END_TEST

/* Two types named devbuf: with addresses shown they differ, and each is a
 * truth address. */
START_TEST(batch_addresses_tell_apart)
{
	char *out = batch(fbsd_args("-a --view malloc"), 120, 0, NULL), *lines[512], *p;
	int n = frame_lines(out, lines, 512), r, ndev = 0;
	char seen[2][32];

	for (r = 5; r < n && lines[r][0] != '\0'; r++)
		if (strncmp(lines[r], "devbuf ", 7) == 0) {
			p = strstr(lines[r], "0x");
			ck_assert_ptr_nonnull(p);
			ck_assert_int_lt(ndev, 2);
			snprintf(seen[ndev++], sizeof(seen[0]), "%.18s", p);
		}
	ck_assert_int_eq(ndev, 2);
	ck_assert_str_ne(seen[0], seen[1]);
	free(out);
}
END_TEST

START_TEST(batch_zones)
{
	json_t *truth = load_truth("fbsd14/truth.json");
	json_t *zones = json_object_get(json_object_get(truth, "uma"), "zones");
	size_t nz = json_array_size(zones), i;
	char *out, *lines[512], *used = calloc(nz, 1);
	int n, r, st, nrows = 0;

	out = batch(fbsd_args("--view zones"), 200, 0, &st);
	ck_assert_int_eq(st, 0);
	assert_plain(out, 200);
	n = frame_lines(out, lines, 512);
	ck_assert_msg(strncmp(lines[0], "kvmtop: UMA zones - ", 20) == 0, "%s", lines[0]);
	ck_assert_msg(strncmp(lines[4], "ZONE ", 5) == 0, "zone header: %s", lines[4]);
	ck_assert_ptr_null(strstr(lines[4], "TYPE"));
	ck_assert_ptr_null(strstr(lines[4], "SIZES"));
	for (r = 5; r < n && lines[r][0] != '\0'; r++) {
		char name[32], cells[1024], *wd[16];
		int found = -1;
		nrows++;
		snprintf(name, sizeof(name), "%.18s", lines[r]);
		for (i = strlen(name); i > 0 && name[i - 1] == ' '; i--)
			name[i - 1] = '\0';
		snprintf(cells, sizeof(cells), "%s", lines[r] + 18);
		ck_assert_int_eq(words(cells, wd, 16), 9);
		for (i = 0; i < nz && found < 0; i++) {
			json_t *z = json_array_get(zones, i);
			char want[64];
			shown_name(want, sizeof(want), json_string_value(json_object_get(z, "name")), 18);
			if (!used[i] && strcmp(want, name) == 0 && u(wd[0]) == jget(z, "size") &&
			    u(wd[1]) == jget(z, "count") && u(wd[2]) == jget(z, "free") &&
			    u(wd[3]) == (jget(z, "bytes") + 1023) / 1024 && u(wd[4]) == jget(z, "numallocs") &&
			    u(wd[5]) == jget(z, "failures"))
				found = (int)i;
		}
		ck_assert_msg(found >= 0, "zone row '%s' matches no zone of the truth", lines[r]);
		used[found] = 1;
	}
	ck_assert_int_eq(nrows, (int)nz);
	free(used);
	free(out);
	json_decref(truth);
}
END_TEST

/* Linux: slabtop's columns, each figure from the generator's truth. */
START_TEST(batch_slab)
{
	json_t *truth = load_truth("linux-nokaslr/truth.json");
	json_t *caches = json_object_get(truth, "caches");
	size_t nc = json_array_size(caches), i;
	char args[2048], *out, *lines[512], *used = calloc(nc, 1);
	int n, r, st, nrows = 0;

	snprintf(args, sizeof(args), "-N %s -M %s", fixture_path("linux-kaslr/vmlinux"),
	    fixture_path("linux-nokaslr/vmcore"));
	out = batch(args, 200, 0, &st);
	ck_assert_msg(st == 0, "%s", out);
	assert_plain(out, 200);
	n = frame_lines(out, lines, 512);
	ck_assert_msg(strncmp(lines[0], "kvmtop: slab caches - ", 22) == 0, "%s", lines[0]);
	ck_assert_msg(strncmp(lines[4], "CACHE ", 6) == 0, "%s", lines[4]);
	for (r = 5; r < n && lines[r][0] != '\0'; r++) {
		char name[32], cells[1024], *wd[16];
		int found = -1;
		nrows++;
		snprintf(name, sizeof(name), "%.20s", lines[r]);
		for (i = strlen(name); i > 0 && name[i - 1] == ' '; i--)
			name[i - 1] = '\0';
		snprintf(cells, sizeof(cells), "%s", lines[r] + 20);
		ck_assert_int_eq(words(cells, wd, 16), 9);
		for (i = 0; i < nc && found < 0; i++) {
			json_t *c = json_array_get(caches, i);
			char want[64];
			uint64_t objs = jget(c, "num_objs"), act = jget(c, "active_objs");
			char use[16];
			snprintf(use, sizeof(use), "%llu%%", (unsigned long long)(objs ? act * 100 / objs : 0));
			shown_name(want, sizeof(want), json_string_value(json_object_get(c, "name")), 20);
			if (!used[i] && strcmp(want, name) == 0 && u(wd[0]) == objs && u(wd[1]) == act &&
			    strcmp(wd[2], use) == 0 && u(wd[3]) == jget(c, "size") &&
			    u(wd[4]) == jget(c, "num_slabs") && u(wd[5]) == jget(c, "objects_per_slab") &&
			    u(wd[6]) == jget(c, "cache_bytes") / 1024 && u(wd[7]) == jget(c, "allocated"))
				found = (int)i;
		}
		ck_assert_msg(found >= 0, "cache row '%s' matches no cache of the truth", lines[r]);
		used[found] = 1;
	}
	ck_assert_int_eq(nrows, (int)nc);
	free(used);
	free(out);
	json_decref(truth);
}
END_TEST

/* The info screen: the kernel's version and panic string, at any width
 * (long values continue on the next line). */
START_TEST(batch_info)
{
	static const int widths[] = { 40, 80, 200 };
	json_t *truth = load_truth("fbsd14/truth.json");
	char version[256], panic[256];
	size_t k;

	snprintf(version, sizeof(version), "%s", json_string_value(json_object_get(truth, "version")));
	version[strcspn(version, "\n")] = '\0';
	snprintf(panic, sizeof(panic), "%s", json_string_value(json_object_get(truth, "panicstr")));
	for (k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
		int w = widths[k], n, i;
		char *out = batch(fbsd_args("--view info"), w, 0, NULL), *lines[128];
		char joined[4][1024] = { "", "", "", "" };   /* version, panic */
		int cur = -1;
		assert_plain(out, w);
		n = frame_lines(out, lines, 128);
		ck_assert_msg(strncmp(lines[0], "kvmtop: dump information", (size_t)(w < 24 ? w : 24)) == 0,
		    "%s", lines[0]);
		/* Label in columns 1..10, value from 11; a blank label continues. */
		for (i = 4; i < n; i++) {
			if (strlen(lines[i]) < 12)
				continue;
			if (strncmp(lines[i], " version ", 9) == 0)
				cur = 0;
			else if (strncmp(lines[i], " panic ", 7) == 0)
				cur = 1;
			else if (lines[i][1] != ' ')
				cur = -1;
			if (cur >= 0)
				strncat(joined[cur], lines[i] + 11, sizeof(joined[0]) - strlen(joined[cur]) - 1);
		}
		ck_assert_msg(strcmp(joined[0], version) == 0, "width %d: version '%s', want '%s'", w,
		    joined[0], version);
		ck_assert_msg(strcmp(joined[1], panic) == 0, "width %d: panic '%s', want '%s'", w,
		    joined[1], panic);
		free(out);
	}
	json_decref(truth);
}
END_TEST

/* The profile screen is titled as such, and its top function is the
 * truth's busiest. */
START_TEST(batch_profile_title)
{
	char *out = batch(fbsd_args("--view profile"), 100, 0, NULL), *lines[128];
	int n = frame_lines(out, lines, 128);

	ck_assert_int_gt(n, 7);
	ck_assert_msg(strncmp(lines[0], "kvmtop: kernel profile - ", 25) == 0, "%s", lines[0]);
	ck_assert_ptr_null(strstr(out, "UMA zones"));
	ck_assert_ptr_nonnull(strstr(lines[4], "kernel profile: profiling"));
	free(out);
}
END_TEST

/* The profile and probe screens at a narrow width: a figure is whole or
 * left out (the same word as in a wide frame), never cut. */
START_TEST(batch_text_screens_whole)
{
	static const char *const views[] = { "--view profile", "--view probes" };
	static const int widths[] = { 20, 30, 35, 42, 45, 50 };
	size_t v, k;

	for (v = 0; v < 2; v++)
		for (k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
			char *wide = batch(fbsd_args(views[v]), 200, 0, NULL), *narrow;
			char *wl[256], *nl[256];
			int nw, nn, i;
			narrow = batch(fbsd_args(views[v]), widths[k], 0, NULL);
			assert_plain(narrow, widths[k]);
			nw = frame_lines(wide, wl, 256);
			nn = frame_lines(narrow, nl, 256);
			for (i = 4; i < nn && i < nw; i++) {
				char a[512], b[512], *aw[32], *bw[32];
				int na, nb, j;
				snprintf(a, sizeof(a), "%s", nl[i]);
				snprintf(b, sizeof(b), "%s", wl[i]);
				na = words(a, aw, 32);
				nb = words(b, bw, 32);
				for (j = 0; j < na && j < nb; j++)
					if (strspn(aw[j], "0123456789.%") == strlen(aw[j]))
						ck_assert_msg(strcmp(aw[j], bw[j]) == 0,
						    "%s at %d: '%s' cut from '%s' in '%s'", views[v], widths[k],
						    aw[j], bw[j], nl[i]);
			}
			free(wide);
			free(narrow);
		}
}
END_TEST

/* Bad options are errors (exit 2), never a curses screen. */
START_TEST(batch_bad_options)
{
	static const char *const bad[] = { "-n 0", "-n abc", "--width 5", "--view nosuch", "-w x",
		"extra-arg" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st;
		char *out = batch(fbsd_args(bad[i]), 80, 0, &st);
		ck_assert_msg(st == 2, "'%s': exit %d, not 2: %s", bad[i], st, out);
		ck_assert_ptr_nonnull(strstr(out, "kvmtop"));
		free(out);
	}
}
END_TEST

/* Not a terminal and no -b: still batch, no control sequence, and N frames
 * with -n N (the bug: `kvmtop --iterations 1 | cat` drew curses).  A dump
 * is read once: every frame shows that one reading (issue 27: it was
 * re-read every interval, "refresh #3"). */
START_TEST(batch_when_piped)
{
	char cmd[4096], *out, *p;
	int st, frames = 0;

	snprintf(cmd, sizeof(cmd), "%s %s --iterations 3 -w 0.1 | cat", build_path("tui/kvmtop"),
	    fbsd_args(""));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_ptr_null(strchr(out, 0x1b));
	assert_plain(out, 80);                          /* COLUMNS unset: 80 wide */
	for (p = out; (p = strstr(p, "kvmtop: malloc types")) != NULL; p++)
		frames++;
	ck_assert_int_eq(frames, 3);
	ck_assert_msg(strstr(out, "refresh #") == NULL, "a dump was refreshed:\n%s", out);
	for (frames = 0, p = out; (p = strstr(p, "\ndump read once (")) != NULL; p++)
		frames++;
	ck_assert_int_eq(frames, 3);
	free(out);
}
END_TEST

/* ------------------------------------------------- the screens under tmux */

static char sess_scr[64];

static char *
capture(const char *session)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tmux capture-pane -p -t %s", session);
	return run_capture(cmd, NULL);
}

/*
 * What the terminal shows equals the batch frame of the same size (checked
 * against the truth above), row for row, but for the refresh timing (row 2)
 * and the key hints on the last row.  A line that wrapped, a column drawn
 * elsewhere, a title left from another view: each shows as a difference.
 */
static void
assert_screen_is_frame(const char *scr_in, const char *batch_args, int w, int h, const char *what)
{
	char *scr = strdup(scr_in), *out = batch(batch_args, w, h, NULL);
	char *sl[256], *bl[256];
	int ns = frame_lines(scr, sl, 256), nb = frame_lines(out, bl, 256), y;

	ck_assert_msg(ns == h, "%s %dx%d: %d screen lines:\n%s", what, w, h, ns, scr_in);
	ck_assert_int_eq(nb, h + 1);
	for (y = 0; y < h - 1; y++) {
		if (y == 2) {
			ck_assert_msg(strncmp(sl[y], "refresh #", 9) == 0 ||
			    strncmp(sl[y], "dump read once (", 16) == 0, "%s: row 2 '%s'", what, sl[y]);
			continue;
		}
		ck_assert_msg(strcmp(sl[y], bl[y]) == 0, "%s %dx%d row %d:\n screen '%s'\n batch  '%s'",
		    what, w, h, y, sl[y], bl[y]);
	}
	ck_assert_msg(strncmp(sl[h - 1], "h help", (size_t)(w < 6 ? w : 6)) == 0, "%s: last row '%s'",
	    what, sl[h - 1]);
	free(scr);
	free(out);
}

static void
skeys(const char *k)
{
	char a[256];

	snprintf(a, sizeof(a), "send-keys -t %s %s", sess_scr, k);
	tmux("%s", a);
	usleep(600 * 1000);
}

START_TEST(screens_at_sizes)
{
	static const int sz[][2] = { { 40, 8 }, { 80, 24 }, { 120, 40 }, { 200, 50 } };
	size_t i;

	for (i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		int w = sz[i][0], h = sz[i][1], k;
		char cmd[4096], *scr;

		snprintf(cmd, sizeof(cmd), "new-session -d -s %s -x %d -y %d 'env TERM=screen %s %s -w 60'",
		    sess_scr, w, h, build_path("tui/kvmtop"), fbsd_args(""));
		tmux("%s", cmd);
		for (k = 0; k < 50; k++) {                  /* until the list is drawn */
			usleep(200 * 1000);
			scr = capture(sess_scr);
			if (scr != NULL && strstr(scr, "TYPE") != NULL)
				break;
			free(scr);
			scr = NULL;
		}
		ck_assert_msg(scr != NULL, "kvmtop never drew its list at %dx%d", w, h);
		free(scr);
		scr = capture(sess_scr);
		assert_screen_is_frame(scr, fbsd_args(""), w, h, "malloc list");
		free(scr);

		skeys("a");                                 /* addresses on */
		scr = capture(sess_scr);
		assert_screen_is_frame(scr, fbsd_args("-a"), w, h, "list with addresses");
		free(scr);
		skeys("a");

		skeys("Tab");                               /* UMA zones */
		scr = capture(sess_scr);
		assert_screen_is_frame(scr, fbsd_args("--view zones"), w, h, "zones");
		free(scr);
		skeys("Tab");

		skeys("i");                                 /* version and panic */
		scr = capture(sess_scr);
		assert_screen_is_frame(scr, fbsd_args("--view info"), w, h, "info");
		free(scr);
		skeys("Escape");

		skeys("p");                                 /* kernel profile */
		scr = capture(sess_scr);
		assert_screen_is_frame(scr, fbsd_args("--view profile"), w, h, "profile");
		free(scr);
		skeys("Escape");

		skeys("q");
		snprintf(cmd, sizeof(cmd), "tmux has-session -t %s 2>/dev/null", sess_scr);
		ck_assert_msg(system(cmd) != 0, "kvmtop did not quit on q at %dx%d", w, h);
	}
	/* A Linux kernel: the slab caches screen (slabtop's columns, checked
	 * against the truth by batch_slab), with and without addresses. */
	{
		char args[2048], cmd[4096], *scr = NULL;
		int k;
		snprintf(args, sizeof(args), "-N %s -M %s", fixture_path("linux-kaslr/vmlinux"),
		    fixture_path("linux-nokaslr/vmcore"));
		snprintf(cmd, sizeof(cmd), "new-session -d -s %s -x 120 -y 40 'env TERM=screen %s %s -w 60'",
		    sess_scr, build_path("tui/kvmtop"), args);
		tmux("%s", cmd);
		for (k = 0; k < 50; k++) {
			usleep(200 * 1000);
			scr = capture(sess_scr);
			if (scr != NULL && strstr(scr, "CACHE") != NULL)
				break;
			free(scr);
			scr = NULL;
		}
		ck_assert_msg(scr != NULL, "kvmtop never drew the slab caches");
		free(scr);
		scr = capture(sess_scr);
		assert_screen_is_frame(scr, args, 120, 40, "slab caches");
		free(scr);
		skeys("a");
		scr = capture(sess_scr);
		snprintf(cmd, sizeof(cmd), "%s -a", args);
		assert_screen_is_frame(scr, cmd, 120, 40, "slab caches with addresses");
		free(scr);
		skeys("q");
	}
}
END_TEST

/* With neither -M nor -N: the running system (booted kernel and live
 * memory), never a path of the source tree; where the booted kernel has no
 * symbols installed, a one-line error naming what is missing and --demo.
 * --demo: the bundled dump beside the uninstalled program, the same frame
 * as the fixture it is a copy of; with -M or -N a usage error. */
START_TEST(defaults_and_demo)
{
	static const char *const clash[] = { "--demo -M x", "--demo -N x", "-N x --demo" };
	char cmd[4096], *out, *ref, *l[512], *r[512];
	int st, nl, nr, i;
	size_t k;

	snprintf(cmd, sizeof(cmd), "grep -c fixtures/cores %s", build_path("tui/kvmtop"));
	out = run_capture(cmd, &st);
	ck_assert_msg(st == 1 && atoi(out) == 0, "kvmtop holds a source-tree path");
	free(out);

	out = batch("2>&1 </dev/null", 80, 0, &st);
	ck_assert_msg(strstr(out, "fixtures/cores") == NULL, "no-argument run: %s", out);
	if (st != 0) {
		ck_assert_msg(st == 1 && strncmp(out, "kvmtop: no -N kernel given", 26) == 0 &&
		    strstr(out, "--demo") != NULL && strchr(out, '\n') == out + strlen(out) - 1,
		    "no-argument run without a system kernel (exit %d) said: %s", st, out);
	} else
		ck_assert_msg(strncmp(out, "kvmtop: malloc types - /dev/mem", 31) == 0 ||
		    strncmp(out, "kvmtop: slab caches - /dev/mem", 30) == 0, "%s", out);
	free(out);

	out = batch("--demo", 100, 0, &st);
	ck_assert_msg(st == 0, "kvmtop --demo exited %d: %s", st, out);
	ref = batch(fbsd_args(""), 100, 0, &st);
	ck_assert_int_eq(st, 0);
	nl = frame_lines(out, l, 512);
	nr = frame_lines(ref, r, 512);
	ck_assert_msg(strncmp(l[0], "kvmtop: malloc types - ", 23) == 0 &&
	    strstr(l[0], "/tui/demo/vmcore.minidump3") != NULL, "%s", l[0]);
	ck_assert_int_eq(nl, nr);
	ck_assert_int_gt(nl, 10);
	/* Row 2 holds this refresh's duration; every other row past the
	 * title is the dump's. */
	for (i = 1; i < nl; i++)
		if (i != 2)
			ck_assert_str_eq(l[i], r[i]);
	free(out);
	free(ref);

	for (k = 0; k < sizeof(clash) / sizeof(clash[0]); k++) {
		out = batch(clash[k], 80, 0, &st);
		ck_assert_msg(st == 2 && strstr(out, "--demo cannot be combined with -M or -N") != NULL,
		    "'%s': exit %d: %s", clash[k], st, out);
		free(out);
	}
}
END_TEST


/* ------------------------------------------------------ issue 27, item 10 */

static bool
known_title(const char *w)
{
	static const char *const t[] = { "TYPE", "ZONE", "CACHE", "ADDRESS", "INUSE", "MEMUSE(K)",
		"REQUESTS", "dINUSE", "dMEM(K)", "REQ/s", "SIZES", "SIZE", "USED", "FREE", "FAIL",
		"dUSED", "OBJS", "ACTIVE", "USE%", "OBJSIZE", "SLABS", "OBJ/SLAB", "CACHE(K)" };
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(w, t[i]) == 0)
			return true;
	return false;
}

/* The malloc type of the truth shown as `name` with `inuse` objects. */
static json_t *
truth_type(json_t *types, const char *name, uint64_t inuse)
{
	size_t i;

	for (i = 0; i < json_array_size(types); i++) {
		json_t *t = json_array_get(types, i);
		char want[128];
		shown_name(want, sizeof(want), json_string_value(json_object_get(t, "name")), 18);
		if (strcmp(want, name) == 0 && jget(t, "inuse") == inuse)
			return t;
	}
	return NULL;
}

/*
 * At every width a column is whole or absent (issue 27: at 80 columns SIZES
 * was cut mid-number and the zones' header ended in "dM"): the header's
 * words are whole titles, every row has one cell per title, and a malloc
 * type's SIZES are its first sizes, whole, then "+N" for the N left out.
 */
START_TEST(batch_columns_whole)
{
	static const int widths[] = { 40, 60, 80, 100, 120 };
	static const char *const views[] = { "", "-a", "--view zones", "--view zones -a", "slab",
		"slab -a" };
	json_t *truth = load_truth("fbsd14/truth.json");
	json_t *types = json_object_get(json_object_get(truth, "malloc"), "types");
	size_t k, v;

	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++)
		for (k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
			char args[2048], *out, *lines[512], hdr[1024], *wd[32];
			bool slab = strncmp(views[v], "slab", 4) == 0;
			int namew = slab ? 20 : 18, w = widths[k], n, r, nt, st, i;

			if (slab)
				snprintf(args, sizeof(args), "-N %s -M %s %s", fixture_path("linux-kaslr/vmlinux"),
				    fixture_path("linux-nokaslr/vmcore"), views[v] + 4);
			else
				snprintf(args, sizeof(args), "%s", fbsd_args(views[v]));
			out = batch(args, w, 0, &st);
			ck_assert_msg(st == 0, "%s: %s", args, out);
			assert_plain(out, w);
			n = frame_lines(out, lines, 512);
			snprintf(hdr, sizeof(hdr), "%s", lines[4]);
			nt = words(hdr, wd, 32);
			for (i = 0; i < nt; i++)
				ck_assert_msg(known_title(wd[i]), "'%s' at %d: header word '%s' is no title: %s",
				    views[v], w, wd[i], lines[4]);
			ck_assert_int_ge(nt, 2);
			for (r = 5; r < n && lines[r][0] != '\0'; r++) {
				char cells[1024], *cw[32];
				int nc;
				snprintf(cells, sizeof(cells), "%s", (int)strlen(lines[r]) > namew ?
				    lines[r] + namew : "");
				nc = words(cells, cw, 32);
				if (strcmp(wd[nt - 1], "SIZES") == 0) {
					/* The sizes: one word, maybe empty, maybe "+N" after. */
					char name[32], want[256] = "";
					json_t *t, *sz;
					size_t j, left, o = 0, shown = 0;
					const char *got;
					snprintf(name, sizeof(name), "%.18s", lines[r]);
					for (j = strlen(name); j > 0 && name[j - 1] == ' '; j--)
						name[j - 1] = '\0';
					t = truth_type(types, name, u(cw[strchr(views[v], 'a') ? 1 : 0]));
					ck_assert_msg(t != NULL, "row '%s' is no type of the truth", lines[r]);
					sz = json_object_get(t, "sizes");
					ck_assert_msg(nc >= nt - 2 && nc <= nt, "row '%s': %d cells", lines[r], nc);
					got = nc >= nt - 1 ? cw[nt - 2] : "";
					if (got[0] == '+')
						got = "";       /* only "+N" */
					for (j = 0; j < json_array_size(sz); j++) {
						char one[32];
						snprintf(one, sizeof(one), "%s%llu", j ? "," : "",
						    (unsigned long long)jnum(json_array_get(sz, j)));
						if (strncmp(got + o, one, strlen(one)) != 0)
							break;
						o += strlen(one);
						shown++;
					}
					ck_assert_msg(got[o] == '\0', "width %d: SIZES '%s' cut in a number (row '%s')",
					    w, got, lines[r]);
					left = json_array_size(sz) - shown;
					if (left > 0) {
						snprintf(want, sizeof(want), "+%zu", left);
						ck_assert_msg(strcmp(cw[nc - 1], want) == 0,
						    "width %d: '%s' leaves %zu sizes out unsaid", w, lines[r], left);
					} else
						ck_assert_msg(cw[nc - 1][0] != '+', "row '%s'", lines[r]);
					continue;
				}
				ck_assert_msg(nc == nt - 1, "'%s' at %d: row '%s' has %d cells for %d titles",
				    views[v], w, lines[r], nc, nt - 1);
			}
			free(out);
		}
	json_decref(truth);
}
END_TEST

/* --version; a TERM curses does not know gives batch frames and a note,
 * not an exit; an unwritable stdout is an error (exit 1, said). */
START_TEST(version_term_full)
{
	char cmd[8192], *out, sdir[512], rcf[600], errf[600], *scr = NULL;
	int st, k;
	size_t len;

	snprintf(cmd, sizeof(cmd), "%s --version", build_path("tui/kvmtop"));
	out = run_capture(cmd, &st);
	ck_assert_msg(st == 0 && strncmp(out, "kvmtop ", 7) == 0 && out[7] >= '0' && out[7] <= '9' &&
	    strchr(out, '\n') == out + strlen(out) - 1, "--version (exit %d): %s", st, out);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s -b -n 2 %s 2>&1 >/dev/full", build_path("tui/kvmtop"), fbsd_args(""));
	out = run_capture(cmd, &st);
	ck_assert_msg(st == 1 && strstr(out, "kvmtop: writing standard output") != NULL,
	    "> /dev/full: exit %d: %s", st, out);
	free(out);

	snprintf(sdir, sizeof(sdir), "%s", test_tmpdir());
	snprintf(rcf, sizeof(rcf), "%s/term.rc", sdir);
	snprintf(errf, sizeof(errf), "%s/term.err", sdir);
	/* The sanitizers' options go on the command line: a tmux server
	 * already running keeps the environment it was started with. */
	char san[1536] = "";
	static const char *const sanvars[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS" };
	for (k = 0; k < 3; k++) {
		const char *v = getenv(sanvars[k]);
		if (v != NULL && strchr(v, '\'') == NULL && strlen(san) + strlen(v) + 64 < sizeof(san))
			snprintf(san + strlen(san), sizeof(san) - strlen(san), "%s='%s' ", sanvars[k], v);
	}
	snprintf(cmd, sizeof(cmd), "tmux new-session -d -s %s -x 100 -y 80 "
	    "\"env %sTERM=nosuchterm %s %s 2>%s; echo \\$? >%s; sleep 30\" >/dev/null 2>&1",
	    sess_raw, san, build_path("tui/kvmtop"), fbsd_args(""), errf, rcf);
	ck_assert_int_eq(system(cmd), 0);
	for (k = 0; k < 100 && access(rcf, R_OK) != 0; k++)
		usleep(100 * 1000);
	usleep(200 * 1000);
	scr = capture(sess_raw);
	snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess_raw);
	(void)!system(cmd);
	out = read_file(rcf, &len);
	ck_assert_msg(out != NULL && atoi(out) == 0, "TERM=nosuchterm: exit %s", out ? out : "(none)");
	free(out);
	out = read_file(errf, &len);
	ck_assert_msg(out != NULL && strstr(out, "kvmtop: cannot use terminal type 'nosuchterm'; batch mode") != NULL,
	    "TERM=nosuchterm: stderr '%s'", out ? out : "");
	free(out);
	ck_assert_msg(scr != NULL && strstr(scr, "kvmtop: malloc types - ") != NULL &&
	    strstr(scr, "devbuf") != NULL, "no batch frame on the terminal:\n%s", scr ? scr : "");
	free(scr);
}
END_TEST

/* A dump in the terminal is read once (issue 27: it was re-read every
 * interval); the per-CPU screen of a UMA zone shows the items each CPU
 * caches and each domain's free items, as the truth has them. */
START_TEST(static_dump_and_zone_percpu)
{
	json_t *truth = load_truth("fbsd14/truth.json");
	json_t *zones = json_object_get(json_object_get(truth, "uma"), "zones"), *z = NULL, *pc;
	char cmd[4096], *scr = NULL, *p, name[128];
	const char *key;
	json_t *val;
	size_t i;
	int k;

	snprintf(cmd, sizeof(cmd), "new-session -d -s %s -x 100 -y 40 'env TERM=screen %s %s -w 0.2 "
	    "--view zones'", sess_scr, build_path("tui/kvmtop"), fbsd_args(""));
	tmux("%s", cmd);
	for (k = 0; k < 50; k++) {
		usleep(200 * 1000);
		scr = capture(sess_scr);
		if (scr != NULL && strstr(scr, "ZONE") != NULL)
			break;
		free(scr);
		scr = NULL;
	}
	ck_assert_msg(scr != NULL, "kvmtop never drew its zones");
	free(scr);
	usleep(1500 * 1000);                            /* 7 intervals */
	scr = capture(sess_scr);
	ck_assert_msg(strstr(scr, "\ndump read once (") != NULL && strstr(scr, "refresh #") == NULL,
	    "a dump re-read:\n%s", scr);
	free(scr);

	skeys("Enter");
	scr = capture(sess_scr);
	p = strstr(scr, "per-CPU: ");
	ck_assert_msg(p != NULL, "no per-CPU screen:\n%s", scr);
	snprintf(name, sizeof(name), "%s", p + 9);
	*strstr(name, " at 0x") = '\0';
	for (i = 0; i < json_array_size(zones) && z == NULL; i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(zones, i), "name")), name) == 0)
			z = json_array_get(zones, i);
	ck_assert_msg(z != NULL, "per-CPU of '%s', no zone of the truth", name);
	ck_assert_ptr_nonnull(strstr(scr, "CACHED"));
	pc = json_object_get(z, "percpu_free");
	ck_assert_int_gt(json_object_size(pc), 0);
	json_object_foreach(pc, key, val) {
		char want[128];
		snprintf(want, sizeof(want), "\n%-8s %14llu ", key, (unsigned long long)jnum(val));
		ck_assert_msg(strstr(scr, want) != NULL, "CPU %s caches %llu of %s, not shown:\n%s", key,
		    (unsigned long long)jnum(val), name, scr);
	}
	for (i = 0; i < json_array_size(json_object_get(z, "domain_zonefree")); i++) {
		char want[128];
		snprintf(want, sizeof(want), "\ndomain%-2zu %14s %14s %12llu %12llu", i, "", "",
		    (unsigned long long)jnum(json_array_get(json_object_get(z, "domain_zonefree"), i)),
		    (unsigned long long)jnum(json_array_get(json_object_get(z, "domain_kegfree"), i)));
		ck_assert_msg(strstr(scr, want) != NULL, "domain %zu of %s not shown:\n%s", i, name, scr);
	}
	free(scr);
	/* 45 columns: the figures that fit, whole (no "ZO" of ZONEFREE). */
	tmux("resize-window -t %s -x 45 -y 40", sess_scr);
	usleep(800 * 1000);
	scr = capture(sess_scr);
	p = strstr(scr, "\nCPU ");
	ck_assert_msg(p != NULL, "no per-CPU title at 45 columns:\n%s", scr);
	{
		char t[128], *wd[8];
		int nw, j;
		snprintf(t, sizeof(t), "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
		nw = words(t, wd, 8);
		ck_assert_int_ge(nw, 2);
		for (j = 0; j < nw; j++)
			ck_assert_msg(strcmp(wd[j], "CPU") == 0 || strcmp(wd[j], "CACHED") == 0 ||
			    strcmp(wd[j], "CACHED(K)") == 0 || strcmp(wd[j], "ZONEFREE") == 0 ||
			    strcmp(wd[j], "KEGFREE") == 0, "per-CPU title word '%s' at 45 columns", wd[j]);
	}
	free(scr);
	skeys("q");
	json_decref(truth);
}
END_TEST

/* Words of a man page line, mdoc's Ic/No and commas dropped, \& and \ cut. */
static void
mdoc_keys(const char *line, char *out, size_t len)
{
	char b[512], *save = NULL, *t;
	size_t o = 0;

	snprintf(b, sizeof(b), "%s", line);
	out[0] = '\0';
	for (t = strtok_r(b, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save)) {
		char w[64];
		size_t i, j = 0;
		if (strcmp(t, ".It") == 0 || strcmp(t, "Ic") == 0 || strcmp(t, "No") == 0 ||
		    strcmp(t, ",") == 0)
			continue;
		for (i = 0; t[i] != '\0' && j < sizeof(w) - 1; i++) {
			if (t[i] == '\\' && t[i + 1] == '&') {
				i++;
				continue;
			}
			if (t[i] == '\\')
				continue;
			w[j++] = t[i];
		}
		w[j] = '\0';
		o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", w);
	}
}

/*
 * The key help is one text: every line of the help screen (keys, then
 * their words) is a row of README.md's kvmtop key table and an item of
 * kvmtop.1's Keys list, and neither has a key the screen lacks (issue 27:
 * the three differed).
 */
START_TEST(help_is_one_text)
{
	const char *src = getenv("KVS_SRCDIR");
	char path[1024], *out, *lines[128], *readme, *man, *keys;
	int n, i, nhelp = 0, nreadme = 0, nman = 0;
	size_t len;

	ck_assert_ptr_nonnull(src);
	out = batch(fbsd_args("--view help"), 120, 0, NULL);
	n = frame_lines(out, lines, 128);
	snprintf(path, sizeof(path), "%s/README.md", src);
	readme = read_file(path, &len);
	ck_assert_ptr_nonnull(readme);
	snprintf(path, sizeof(path), "%s/man/kvmtop.1", src);
	man = read_file(path, &len);
	ck_assert_ptr_nonnull(man);
	keys = strstr(man, ".Ss Keys");
	ck_assert_ptr_nonnull(keys);
	for (i = 4; i < n; i++) {
		char k[128], d[256], row[512], item[512], *sep, *p;
		size_t o = 0;
		if (lines[i][0] != ' ' || lines[i][1] == ' ' || lines[i][1] == '\0')
			continue;
		sep = strstr(lines[i] + 1, "  ");
		ck_assert_msg(sep != NULL, "help line '%s'", lines[i]);
		snprintf(k, sizeof(k), "%.*s", (int)(sep - lines[i] - 1), lines[i] + 1);
		for (p = sep; *p == ' '; p++)
			;
		snprintf(d, sizeof(d), "%s", p);
		nhelp++;
		/* README: | `k1` `k2` | words | */
		{
			char tmp[128], *save = NULL, *t;
			snprintf(tmp, sizeof(tmp), "%s", k);
			o = (size_t)snprintf(row, sizeof(row), "|");
			for (t = strtok_r(tmp, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save))
				o += (size_t)snprintf(row + o, sizeof(row) - o, " `%s`", t);
			snprintf(row + o, sizeof(row) - o, " | %s |\n", d);
		}
		ck_assert_msg(strstr(readme, row) != NULL, "README.md lacks the key row '%s'", row);
		/* kvmtop.1: .It with those keys, then the words. */
		snprintf(item, sizeof(item), "\n%s\n", d);
		for (p = keys; (p = strstr(p, "\n.It ")) != NULL && p < keys + strlen(keys); p++) {
			char l[512], kk[256];
			const char *e = strchr(p + 1, '\n');
			snprintf(l, sizeof(l), "%.*s", (int)(e - p - 1), p + 1);
			mdoc_keys(l, kk, sizeof(kk));
			if (strcmp(kk, k) == 0 && strncmp(e, item, strlen(item)) == 0)
				break;
		}
		ck_assert_msg(p != NULL, "kvmtop.1 lacks the key item '%s': %s", k, d);
	}
	ck_assert_int_ge(nhelp, 10);
	/* Nothing more in either. */
	{
		const char *p = strstr(readme, "| keys | action |");
		ck_assert_ptr_nonnull(p);
		for (p = strchr(p, '\n') + 1; strncmp(p, "| ", 2) == 0; p = strchr(p, '\n') + 1)
			nreadme += strncmp(p, "| `", 3) == 0;
		const char *q = strstr(keys, "\n.Bl ");
		const char *end = strstr(q, "\n.El");
		for (q = strstr(q, "\n.It "); q != NULL && q < end; q = strstr(q + 1, "\n.It "))
			nman++;
	}
	ck_assert_int_eq(nreadme, nhelp);
	ck_assert_int_eq(nman, nhelp);
	free(out);
	free(readme);
	free(man);
}
END_TEST

/* Every --option README.md's kvmtop section names is one kvmtop takes
 * (issue 27: it named a --json kvmtop never had). */
START_TEST(readme_options_exist)
{
	const char *src = getenv("KVS_SRCDIR");
	char path[1024], cmd[2048], *readme, *usage, *sec, *end, *p;
	size_t len;
	int st, n = 0;

	ck_assert_ptr_nonnull(src);
	snprintf(path, sizeof(path), "%s/README.md", src);
	readme = read_file(path, &len);
	ck_assert_ptr_nonnull(readme);
	snprintf(cmd, sizeof(cmd), "%s -h", build_path("tui/kvmtop"));
	usage = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	sec = strstr(readme, "\n### kvmtop\n");
	ck_assert_ptr_nonnull(sec);
	end = strstr(sec + 1, "\n### ");
	ck_assert_ptr_nonnull(end);
	*end = '\0';
	for (p = sec; (p = strstr(p, "--")) != NULL; p += 2) {
		char opt[64];
		size_t k = 0;
		if (p[2] < 'a' || p[2] > 'z')
			continue;
		while (k < sizeof(opt) - 1 && ((p[k] >= 'a' && p[k] <= 'z') || p[k] == '-'))
			opt[k] = p[k], k++;
		opt[k] = '\0';
		n++;
		ck_assert_msg(strstr(usage, opt) != NULL, "README's kvmtop section names %s; kvmtop -h:\n%s",
		    opt, usage);
	}
	ck_assert_int_ge(n, 5);
	ck_assert_msg(strstr(sec, "With no arguments it opens the bundled dump") == NULL,
	    "README says no arguments open the bundled dump");
	free(usage);
	free(readme);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tui");
	TCase *tc = tcase_create("tmux");
	int rc;

	snprintf(sess, sizeof(sess), "kvstest%d", (int)getpid());
	snprintf(sess_raw, sizeof(sess_raw), "kvsraw%d", (int)getpid());
	snprintf(sess_scr, sizeof(sess_scr), "kvsscr%d", (int)getpid());
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, end_to_end);
	tcase_add_test(tc, raw_output_escapes_names);
	tcase_add_test(tc, screens_at_sizes);
	tcase_add_test(tc, version_term_full);
	tcase_add_test(tc, static_dump_and_zone_percpu);
	suite_add_tcase(s, tc);
	tc = tcase_create("batch");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, batch_malloc_sizes);
	tcase_add_test(tc, batch_addresses_tell_apart);
	tcase_add_test(tc, batch_zones);
	tcase_add_test(tc, batch_slab);
	tcase_add_test(tc, batch_info);
	tcase_add_test(tc, batch_profile_title);
	tcase_add_test(tc, batch_bad_options);
	tcase_add_test(tc, batch_when_piped);
	tcase_add_test(tc, defaults_and_demo);
	tcase_add_test(tc, batch_columns_whole);
	tcase_add_test(tc, batch_text_screens_whole);
	tcase_add_test(tc, help_is_one_text);
	tcase_add_test(tc, readme_options_exist);
	suite_add_tcase(s, tc);
	rc = run_suite(s);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess);
		(void)!system(cmd);
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess_raw);
		(void)!system(cmd);
		snprintf(cmd, sizeof(cmd), "tmux kill-session -t %s >/dev/null 2>&1", sess_scr);
		(void)!system(cmd);
	}
	return rc;
}
