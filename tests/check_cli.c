/*
 * check_cli.c - the kvmstat command end to end: `info --json` and `dmesg`
 * against the generator's truth for every format and generation, the
 * bundled default, usage errors, and that no escape byte from a dump ever
 * reaches the terminal.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

struct core {
	const char *dir, *kernel, *file, *format;
	unsigned version;
	const char *count_key;
};
static const struct core cores[] = {
	{ "fbsd14", "fbsd14", "vmcore.minidump1", "minidump", 1, "minidump1" },
	{ "fbsd14", "fbsd14", "vmcore.minidump2", "minidump", 2, "minidump2" },
	{ "fbsd14", "fbsd14", "vmcore.minidump3", "minidump", 3, "minidump3" },
	{ "fbsd14", "fbsd14", "vmcore.elf", "elf", 0, "elf" },
	{ "fbsd14", "fbsd14", "mem.raw", "raw", 0, "raw" },
	{ "fbsd14-s2", "fbsd14", "vmcore.minidump3", "minidump", 3, "minidump3" },
	{ "fbsd14-s2", "fbsd14", "vmcore.elf", "elf", 0, "elf" },
	{ "fbsd12", "fbsd12", "vmcore.minidump2", "minidump", 2, "minidump2" },
	{ "fbsd11", "fbsd11", "mem.raw", "raw", 0, "raw" },
	{ "fbsd5", "fbsd5", "vmcore.elf", "elf", 0, "elf" },
};

static char *
kvmstat(const struct core *c, const char *args, int *st)
{
	char cmd[4096], k[256], m[256];

	snprintf(k, sizeof(k), "%s/kernel", c->kernel);
	snprintf(m, sizeof(m), "%s/%s", c->dir, c->file);
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s %s 2>&1", build_path("analyzers/kvmstat"),
	    fixture_path(k), fixture_path(m), args);
	return run_capture(cmd, st);
}

static json_t *
truth_of(const struct core *c)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/truth.json", c->dir);
	return load_truth(rel);
}

START_TEST(info_json)
{
	const struct core *c = &cores[_i];
	json_t *t = truth_of(c), *j;
	json_error_t je;
	int st;
	char *out = kvmstat(c, "info --json", &st);
	const char *v;

	ck_assert_int_eq(st, 0);
	j = json_loads(out, 0, &je);
	ck_assert_msg(j != NULL, "%s", out);
	ck_assert_str_eq(json_string_value(json_object_get(j, "format")), c->format);
	if (c->version)
		ck_assert_uint_eq(jget(j, "format_version"), c->version);
	ck_assert_uint_eq(jget(j, "dumped_pages"), jget(json_object_get(t, "dumped_pages"), c->count_key));
	ck_assert_uint_eq(jget(j, "ncpus"), jget(t, "mp_ncpus"));
	ck_assert_uint_eq(jget(j, "mp_maxid"), jget(t, "mp_maxid"));
	v = json_string_value(json_object_get(t, "version"));
	ck_assert_int_eq(strncmp(json_string_value(json_object_get(j, "version")), v,
	    strcspn(v, "\n")), 0);
	if (json_is_null(json_object_get(t, "panicstr")))
		ck_assert(json_is_null(json_object_get(j, "panicstr")));
	else
		ck_assert_str_eq(json_string_value(json_object_get(j, "panicstr")),
		    json_string_value(json_object_get(t, "panicstr")));
	json_decref(j);
	json_decref(t);
	free(out);
}
END_TEST

START_TEST(dmesg_text_and_json)
{
	const struct core *c = &cores[_i];
	json_t *t = truth_of(c), *j;
	json_error_t je;
	int st;
	const char *want = json_string_value(json_object_get(t, "msgbuf_text"));
	char *out = kvmstat(c, "dmesg", &st);

	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(out, want);
	free(out);
	out = kvmstat(c, "dmesg --json", &st);
	ck_assert_int_eq(st, 0);
	j = json_loads(out, 0, &je);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "text")), want);
	json_decref(j);
	json_decref(t);
	free(out);
}
END_TEST

START_TEST(no_escape_reaches_terminal)
{
	int st;
	char *out = kvmstat(&cores[2], "-m", &st);

	ck_assert_int_eq(st, 0);
	ck_assert_ptr_null(strchr(out, 0x1b));
	ck_assert_ptr_null(strchr(out, 0x07));
	ck_assert_ptr_nonnull(strstr(out, "evil\\x1b[2J"));
	free(out);
	out = kvmstat(&cores[2], "-m --json", &st);
	ck_assert_int_eq(st, 0);
	ck_assert_ptr_null(strchr(out, 0x1b));
	free(out);
}
END_TEST

START_TEST(defaults_and_usage)
{
	char cmd[4096], *out;
	json_t *t = load_truth("fbsd14/truth.json");
	const char *v = json_string_value(json_object_get(t, "version"));
	int st;

	/* --demo: the bundled dump, found beside the uninstalled program. */
	snprintf(cmd, sizeof(cmd), "%s --demo 2>&1", build_path("analyzers/kvmstat"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_ptr_nonnull(strstr(out, "minidump v3"));
	ck_assert_int_eq(strncmp(strstr(out, "version:") + 15, v, strcspn(v, "\n")), 0);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s --demo -M x info 2>&1", build_path("analyzers/kvmstat"));
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 2);
	/* With neither -M nor -N: the running system, as vmstat; never a
	 * path of the source tree.  Where the booted kernel has no symbols
	 * installed, the error says what is missing and names --demo. */
	snprintf(cmd, sizeof(cmd), "%s info 2>&1", build_path("analyzers/kvmstat"));
	out = run_capture(cmd, &st);
	ck_assert_ptr_null(strstr(out, "fixtures/cores"));
	if (st != 0)
		ck_assert_msg(st == 1 && strstr(out, "-N") != NULL && strstr(out, "--demo") != NULL,
		    "no-argument run said: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "grep -c fixtures/cores %s", build_path("analyzers/kvmstat"));
	out = run_capture(cmd, &st);
	ck_assert_msg(st == 1 && atoi(out) == 0, "the program holds a source-tree path");
	free(out);
	/* -M alone reads the dump's own symbols and types (Linux): a missing
	 * file, or a dump that does not say its kernel, is an error naming it. */
	snprintf(cmd, sizeof(cmd), "%s -M x info 2>&1", build_path("analyzers/kvmstat"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "dump x: No such file"));
	free(out);
	/* A dump that does not name its kernel (FreeBSD): the installed
	 * kernel, here none (an empty system root); info then reads the
	 * dump's bytes alone, saying why, and a walker fails saying why. */
	snprintf(cmd, sizeof(cmd), "KVS_DEBUG_ROOT=%s %s -M %s malloc 2>&1", test_tmpdir(),
	    build_path("analyzers/kvmstat"), fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(out, "none is installed (") != NULL &&
	    strstr(out, "/boot/kernel/kernel)") != NULL, "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "KVS_DEBUG_ROOT=%s %s -M %s info 2>&1", test_tmpdir(),
	    build_path("analyzers/kvmstat"), fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(strstr(out, "none is installed (") != NULL &&
	    strstr(out, "its bytes alone") != NULL && strstr(out, "minidump v3") != NULL,
	    "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s frobnicate 2>&1", build_path("analyzers/kvmstat"));
	free(run_capture(cmd, &st));
	ck_assert_int_eq(st, 2);
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s info 2>&1", build_path("analyzers/kvmstat"),
	    fixture_path("fbsd14/kernel.other"), fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "does not match"));
	free(out);
	json_decref(t);
}
END_TEST

/* Bad options are errors: exit 2, one line naming the problem and one
 * naming the help to read (not the whole usage); under --json the error is
 * a JSON document on stdout. */
START_TEST(strict_options)
{
	static const struct { const char *args, *want; } bad[] = {
		{ "malloc --sort foo", "--sort must be one of" },
		{ "profile --top abc", "--top takes a positive number, not 'abc'" },
		{ "profile --top -5", "--top takes a positive number, not '-5'" },
		{ "zone --sort name", "zone does not take --sort" },
		{ "-z -m", "-m and -z cannot be combined" },
		{ "malloc --format 7", "--format must be one of 5|6|14, not '7'" },
		{ "info --percpu", "info does not take --percpu" },
		{ "info stray", "info takes no argument 'stray'" },
		{ "--bogus info", "unknown option --bogus" },
		{ "profile --top", "needs a value" },
		{ "help nosuch", "unknown command 'nosuch'" },
		{ "malloc --libxo", "--libxo goes with --json" },
		{ "info --csv", "info does not take --csv" },
		{ "dmesg -p", "dmesg does not take -p" },
		{ "rd", "rd takes ADDRESS|SYMBOL" },
		{ "rd btext 0", "rd COUNT takes a positive number of words, not '0'" },
		{ "rd btext 3x", "rd COUNT takes a positive number of words, not '3x'" },
		{ "rd -p btext", "rd -p takes a hexadecimal physical address" },
		{ "diff x", "diff takes two dumps" },
		{ "malloc --kernel-b x", "malloc does not take --kernel-b" },
		{ "--demo info", "--demo cannot be combined with -M or -N" },
	};
	char cmd[4096], *out;
	size_t i;
	int st;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s -N %s -M %s %s 2>&1", build_path("analyzers/kvmstat"),
		    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.minidump3"),
		    bad[i].args);
		out = run_capture(cmd, &st);
		ck_assert_msg(st == 2, "'%s' exited %d", bad[i].args, st);
		ck_assert_msg(strstr(out, bad[i].want) != NULL, "'%s' said: %s", bad[i].args, out);
		ck_assert_msg(strstr(out, "try 'kvmstat help ") != NULL ||
		    strstr(out, "try 'kvmstat --help'") != NULL, "'%s' named no help: %s",
		    bad[i].args, out);
		ck_assert_msg(strstr(out, "usage: kvmstat") == NULL && strstr(out, "commands:") == NULL,
		    "'%s' printed the whole usage: %s", bad[i].args, out);
		{
			size_t lines = 0;
			const char *q;
			for (q = out; *q != '\0'; q++)
				lines += *q == '\n';
			ck_assert_msg(lines == 2, "'%s' said %zu lines: %s", bad[i].args, lines, out);
		}
		free(out);
	}
	/* JSON errors on stdout, usage on stderr dropped. */
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s --json malloc --sort foo 2>/dev/null",
	    build_path("analyzers/kvmstat"), fixture_path("fbsd14/kernel"),
	    fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 2);
	{
		json_error_t je;
		json_t *j = json_loads(out, 0, &je), *e;
		ck_assert_msg(j != NULL, "not JSON: %s", out);
		e = json_object_get(j, "error");
		ck_assert_ptr_nonnull(e);
		ck_assert_str_eq(json_string_value(json_object_get(e, "code")), "usage");
		ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(e, "message")),
		    "--sort"));
		json_decref(j);
	}
	free(out);
	snprintf(cmd, sizeof(cmd), "%s -N /nonexistent -M %s --json info 2>/dev/null",
	    build_path("analyzers/kvmstat"), fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_ptr_nonnull(strstr(out, "\"open\""));
	ck_assert_ptr_nonnull(strstr(out, "/nonexistent"));
	free(out);
	/* Good ones still work; help and --version succeed. */
	snprintf(cmd, sizeof(cmd), "%s help malloc && %s --version", build_path("analyzers/kvmstat"),
	    build_path("analyzers/kvmstat"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_ptr_nonnull(strstr(out, "--sort name|inuse|memuse|requests"));
	ck_assert_ptr_nonnull(strstr(out, "kvmstat 0."));
	free(out);
}
END_TEST

/* A shell script run in a fresh directory with $K the kvmstat command on
 * the FreeBSD 14 minidump (which has gprof data): its stdout and stderr. */
static char *
script(int *st, const char *fmt, ...)
{
	char body[4096], cmd[8192];
	const char *dir = path_join(test_tmpdir(), "out");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir %s && cd %s && K='%s -N %s -M %s' && "
	    "{ %s ; } 2>&1", dir, dir, dir, build_path("analyzers/kvmstat"),
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.minidump3"), body);
	return run_capture(cmd, st);
}

#define HAS(out, s) ck_assert_msg(strstr(out, s) != NULL, "no '%s' in: %s", s, out)

/* Issue 27: usage without noise, a command's own --help, no command at all,
 * and a stdout that cannot be written. */
START_TEST(cli_noise)
{
	char *out;
	int st;

	/* Nothing given: the usage, exit 2 (not the running system's kernel). */
	out = script(&st, "${K%%%% -N*}; echo rc=$?");
	HAS(out, "usage: kvmstat");
	HAS(out, "rc=2");
	ck_assert_ptr_null(strstr(out, "vmlinux"));
	free(out);
	/* COMMAND --help: that command's options, as `help COMMAND`. */
	out = script(&st, "$K malloc --help; echo rc=$?; $K -z --help; echo rc=$?");
	HAS(out, "--sort name|inuse|memuse|requests");
	HAS(out, "--format 12|14|15");
	HAS(out, "rc=0\n");
	ck_assert_msg(strstr(out, "commands:") == NULL && strstr(out, "rc=2") == NULL, "%s", out);
	free(out);
	/* An unknown option after the command points to that command's help. */
	out = script(&st, "$K malloc --bogus; echo rc=$?; $K -m --top; echo rc=$?");
	HAS(out, "unknown option --bogus\ntry 'kvmstat help malloc' for its usage\nrc=2");
	HAS(out, "--top needs a value\ntry 'kvmstat help malloc' for its usage\nrc=2");
	free(out);
	/* A full stdout: said, exit 1 (every command, and help). */
	out = script(&st, "for c in malloc info dmesg 'help malloc' --help 'rd btext 4' "
	    "'type struct malloc_type' 'rd btext 4 -o -'; do $K $c >/dev/full; "
	    "echo \"$c rc=$?\"; done");
	ck_assert_msg(strstr(out, "rc=0") == NULL, "%s", out);
	ck_assert_ptr_null(strstr(out, "rc=2"));
	{
		const char *p = out;
		int n = 0;
		while ((p = strstr(p, "writing standard output: No space left on device")) != NULL) {
			n++;
			p++;
		}
		ck_assert_msg(n == 8, "%d of 8 said it (once each): %s", n, out);
	}
	free(out);
	/* --raw on a dump of a known format: the option, not the library's flag. */
	out = script(&st, "$K --raw info; echo rc=$?");
	HAS(out, "without --raw");
	HAS(out, "rc=1");
	ck_assert_ptr_null(strstr(out, "KVS_O_"));
	free(out);
}
END_TEST

/* Issue 27: -o never replaces what it does not own (rd and gmon alike). */
START_TEST(output_files)
{
	static const char *const cmds[] = { "rd btext 4", "gmon" };
	char *out;
	size_t i;
	int st;

	for (i = 0; i < 2; i++) {
		const char *c = cmds[i];
		/* A new file; then refused without -f, replaced with -f. */
		out = script(&st, "$K %s -o f1 2>/dev/null && echo old > f1 && $K %s -o f1; echo rc=$?; "
		    "cat f1; chmod 604 f1; $K %s -o f1 -f 2>/dev/null; echo rc=$?; "
		    "test $(wc -c < f1) -gt 4 && echo REPLACED; stat -c mode=%%a f1; ls", c, c, c);
		HAS(out, "f1 exists (use -f to replace it)");
		HAS(out, "rc=1\nold\n");
		HAS(out, "rc=0\nREPLACED\nmode=604\nf1\n");   /* its mode kept, no temporary */
		free(out);
		/* -o -: standard output, no file named '-'. */
		out = script(&st, "$K %s -o - 2>/dev/null | wc -c; test -e ./- && echo DASHFILE; "
		    "$K %s -o - -f > /dev/null; echo rc=$?", c, c);
		ck_assert_msg(atoi(out) >= 32, "%s", out);
		ck_assert_ptr_null(strstr(out, "DASHFILE"));
		HAS(out, "rc=0");
		free(out);
		/* A FIFO is written in place and stays a FIFO. */
		out = script(&st, "mkfifo ff && { cat ff > got & } && $K %s -o ff 2>/dev/null; echo rc=$?; "
		    "wait; test -p ff && echo FIFO; $K %s -o - > want 2>/dev/null; cmp got want && echo SAME", c, c);
		HAS(out, "rc=0");
		HAS(out, "FIFO");
		HAS(out, "SAME");
		free(out);
		/* A symbolic link with -f: its target replaced, the link kept. */
		out = script(&st, "echo old > t && ln -s t l && $K %s -o l; echo rc1=$?; "
		    "$K %s -o l -f 2>/dev/null; echo rc2=$?; test -L l && echo LINK; "
		    "$K %s -o - 2>/dev/null | cmp - t && echo TARGET; "
		    "ln -s nowhere d && $K %s -o d -f; echo rc3=$?; test -e nowhere || "
		    "echo NOTMADE", c, c, c, c);
		HAS(out, "l exists (use -f to replace it)");
		HAS(out, "rc1=1\nrc2=0\nLINK\nTARGET\n");
		HAS(out, "d is a symbolic link to a missing file");
		HAS(out, "rc3=1\nNOTMADE");
		free(out);
		/* A directory and a socket: refused, left as they are. */
		out = script(&st, "mkdir dir && $K %s -o dir -f; echo rc=$?; test -d dir && echo DIR; "
		    "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"s\")' && "
		    "$K %s -o s -f; echo rc=$?; test -S s && echo SOCK", c, c);
		HAS(out, "dir is a directory; not written");
		HAS(out, "rc=1\nDIR");
		HAS(out, "s is a socket; not written");
		HAS(out, "rc=1\nSOCK");
		free(out);
		/* A full device: the error, exit 1; the device node stays. */
		out = script(&st, "$K %s -o /dev/full; echo rc=$?; $K %s -o /dev/full -f; echo rc=$?; "
		    "test -c /dev/full && echo CHR", c, c);
		HAS(out, "/dev/full: No space left on device");
		HAS(out, "rc=1\n");
		ck_assert_ptr_null(strstr(out, "rc=0"));
		HAS(out, "CHR");
		free(out);
	}
}
END_TEST

/* The generator is deterministic: regenerating from the sources gives the
 * committed fixtures bit for bit (kernels, cores and truth). */
START_TEST(fixtures_regenerate_identically)
{
	char cmd[8192], *out;
	const char *src = getenv("KVS_SRCDIR");
	const char *dir = path_join(test_tmpdir(), "regen");
	int st;

	/* The toolchain and $KVS_SRCDIR are required of this suite before it
	 * starts (testutil's oracle table): their absence fails, never skips. */
	ck_assert_msg(src != NULL, "KVS_SRCDIR unset");
	ck_assert_msg(have_tool("python3") && have_tool("gcc") && have_tool("ld"),
	    "generator toolchain missing");
	snprintf(cmd, sizeof(cmd), "bash %s/fixtures/gen/regen.sh %s >/dev/null 2>&1 && "
	    "diff -r %s %s/fixtures/cores && echo SAME", src, dir, dir, src);
	out = run_capture(cmd, &st);
	ck_assert_msg(out != NULL && strstr(out, "SAME") != NULL, "regenerated fixtures differ: %s",
	    out ? out : "");
	free(out);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("kvmstat");
	int n = (int)(sizeof(cores) / sizeof(cores[0]));

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, info_json, 0, n);
	tcase_add_loop_test(tc, dmesg_text_and_json, 0, n);
	tcase_add_test(tc, no_escape_reaches_terminal);
	tcase_add_test(tc, defaults_and_usage);
	tcase_add_test(tc, strict_options);
	tcase_add_test(tc, cli_noise);
	tcase_add_test(tc, output_files);
	tcase_add_test(tc, fixtures_regenerate_identically);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
