/*
 * fuzz_cli.c - libFuzzer harness for the kvmstat command line
 * (analyzers/options.c: cli_parse), no command run.  The input is the
 * arguments after argv[0], separated by NUL bytes (at most 64).
 *
 * stdout and stderr are memory streams during the call (libFuzzer's and
 * the sanitizers' own messages go to the real stderr).  Checked:
 *   - the answer is "run" (-1), 0 (--version, --help, help CMD) or 2 (a
 *     usage error), never anything else;
 *   - "run" names a command of the table, the options it is given pass the
 *     command's own checks (--csv not with --json, --libxo only with
 *     --json, --top a positive number), and the positional arguments are
 *     the tail of argv;
 *   - a usage error says why on stderr; with --json anywhere on the line
 *     (or an abbreviation of it before the error), stdout is one JSON
 *     document {"schema": "kvmstat/1", "error": {"code": "usage",
 *     "message"}} (jansson parses it), else stdout is empty;
 *   - whatever reaches stdout is valid UTF-8 with no control byte but
 *     newline and tab (an argument echoed in a JSON message is escaped;
 *     stderr echoes the user's own arguments as given).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define MAXARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fail(const char *what, const char *out, const char *err)
{
	fprintf(stderr, "fuzz_cli: %s\n--- stdout\n%s\n--- stderr\n%s\n", what,
	    out != NULL ? out : "", err != NULL ? err : "");
	abort();
}

/* Valid UTF-8 with no C0 control but \n and \t, no DEL. */
static const char *
text_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned c = p[i], len, k;
		uint32_t cp;
		if (c < 0x80) {
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				return "a control byte";
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else
			return "a byte that starts no UTF-8 sequence";
		if (i + len > n)
			return "a cut UTF-8 sequence";
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return "a bad UTF-8 continuation";
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
			return "an overlong or invalid code point";
		if (cp >= 0x80 && cp <= 0x9f)
			return "a C1 control";
		i += len;
	}
	return NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[MAXARGS + 2], *out = NULL, *err = NULL;
	size_t outlen = 0, errlen = 0, i, start = 0;
	FILE *so = stdout, *se = stderr;
	int argc = 1, rc;
	bool json = false, shell_seen = false;
	struct cli cl;
	const char *why;

	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"kvmstat";
	for (i = 0; i <= size && argc <= MAXARGS; i++)
		if (i == size || buf[i] == '\0') {
			if (i == size && start == size && size > 0)
				break;      /* a trailing NUL ends the last argument */
			argv[argc++] = buf + start;
			start = i + 1;
		}
	argv[argc] = NULL;
	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
			break;
		}
		/* `shell SCRIPT ARG...`: a --json after the script may be the
		 * script's own (checked below once the parse says where it is) */
		if (strcmp(argv[i], "shell") == 0)
			shell_seen = true;
	}

	stdout = open_memstream(&out, &outlen);
	stderr = open_memstream(&err, &errlen);
	if (stdout == NULL || stderr == NULL)
		abort();
	optind = 0;                 /* getopt_long starts afresh */
	rc = cli_parse(argc, argv, &cl);
	fclose(stdout);
	fclose(stderr);
	stdout = so;
	stderr = se;

	if (rc != -1 && rc != 0 && rc != 2)
		fail("cli_parse answered neither -1, 0 nor 2", out, err);
	if ((why = text_ok(out, outlen)) != NULL)
		fail(why, out, err);
	if (rc == -1) {
		const struct opts *o = &cl.o;
		if (cl.c == NULL || find_command(cl.c->name) != cl.c)
			fail("run, but no command of the table", out, err);
		if (strcmp(cl.c->name, "shell") == 0 && o->nargs > 0) {
			/* the script's arguments are its own: --json counts before it */
			json = false;
			for (i = 1; argv + i < o->args && i < (size_t)argc; i++)
				if (strcmp(argv[i], "--json") == 0)
					json = true;
		}
		if (outlen != 0 || errlen != 0)
			fail("run, but something was printed", out, err);
		if ((o->csv && o->json) || (o->libxo && !o->json) || o->top <= 0 ||
		    o->nargs < 0 || o->nargs > argc - 1 || o->args + o->nargs != argv + argc ||
		    o->nmodules < 0 || o->nmodules > 32 || (json && !o->json))
			fail("run with options the command does not take", out, err);
		for (i = 0; i < (size_t)o->nargs; i++)
			if (o->args[i] == NULL)
				fail("a NULL positional argument", out, err);
	} else if (rc == 2) {
		if (errlen == 0)
			fail("a usage error that says nothing on stderr", out, err);
		if (json && outlen == 0 && !shell_seen)
			fail("--json usage error: nothing on stdout", out, err);
		if (outlen > 0) {
			json_error_t je;
			json_t *j = json_loads(out, 0, &je), *e;
			if (j == NULL)
				fail("usage error: stdout is not JSON", out, err);
			e = json_object_get(j, "error");
			if (!json_is_string(json_object_get(j, "schema")) ||
			    strcmp(json_string_value(json_object_get(j, "schema")), KVS_JSON_SCHEMA) != 0 ||
			    !json_is_object(e) || !json_is_string(json_object_get(e, "code")) ||
			    strcmp(json_string_value(json_object_get(e, "code")), "usage") != 0 ||
			    !json_is_string(json_object_get(e, "message")))
				fail("--json usage error: not {schema, error: {code usage, message}}",
				    out, err);
			json_decref(j);
		}
	}
	cli_free(&cl);
	free(out);
	free(err);
	free(buf);
	return 0;
}
