/*
 * fuzz_escape.c - libFuzzer harness for the output escapers: nothing read
 * from a dump reaches a terminal, a JSON document or a CSV row raw
 * (common/escape.c: sanitize, sanitize_json, fput_sanitized;
 * analyzers/emit.c: json_dumpstr, csv_field, emit_str).
 *
 * The input's first byte picks keep_newlines and a short destination size;
 * the rest is the untrusted string.  Checked on every input:
 *   text (sanitize, fput_sanitized, emit_str): the output is valid UTF-8
 *     with no C0 control (but \n and \t when kept), no DEL and no C1
 *     control; it is the input up to its first NUL with some bytes
 *     replaced by their \xNN escape, and only bytes that cannot be shown
 *     are (printable ASCII and valid UTF-8 sequences that are no C1
 *     control are kept as they are); cut to a short buffer it is a prefix
 *     of the whole answer that cuts no escape and no UTF-8 sequence;
 *   JSON (sanitize_json, json_dumpstr, emit_str --json): the string is
 *     valid UTF-8 (control characters kept: the encoder escapes them),
 *     differs from the input only by \xNN for bytes that are not UTF-8,
 *     and goes through jansson (json_dumps, also JSON_ENSURE_ASCII, then
 *     json_loads) to the same code points;
 *   CSV (csv_field): the field read back by RFC 4180's rules is the
 *     string; after sanitize (as the commands do) no control byte is left.
 */
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cli.h"
#include "escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
bad(const char *what, const uint8_t *in, size_t n, const char *out)
{
	fprintf(stderr, "fuzz_escape: %s\ninput (%zu bytes):", what, n);
	for (size_t i = 0; i < n && i < 256; i++)
		fprintf(stderr, " %02x", in[i]);
	fprintf(stderr, "\noutput: %s\n", out != NULL ? out : "(null)");
	abort();
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 if none; *cp its code
 * point.  The C library's decoder (C.UTF-8) is the oracle, not escape.c's
 * own: it refuses overlong forms and surrogates; past U+10FFFF (which it
 * takes, as 5- and 6-byte forms) is refused here. */
static size_t
u8len(const unsigned char *s, size_t n, uint32_t *cp)
{
	static locale_t utf8;
	mbstate_t st;
	wchar_t w = 0;
	size_t r;

	if (n == 0)
		return 0;
	if (utf8 == (locale_t)0) {
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		if (utf8 == (locale_t)0) {
			fprintf(stderr, "fuzz_escape: no C.UTF-8 locale\n");
			abort();
		}
	}
	locale_t old = uselocale(utf8);
	memset(&st, 0, sizeof(st));
	r = mbrtowc(&w, (const char *)s, n, &st);
	uselocale(old);
	if (r == 0)                     /* NUL: one byte, code point 0 */
		r = 1;
	if (r == (size_t)-1 || r == (size_t)-2 || r > 4 || (uint32_t)w > 0x10ffff)
		return 0;
	*cp = (uint32_t)w;
	return r;
}

enum { M_TEXT, M_TEXT_NL, M_JSON };

/* Whether the code point is shown as it is in that mode. */
static int
shown(uint32_t cp, int mode)
{
	if (mode == M_JSON)
		return 1;
	if (cp == '\n' || cp == '\t')
		return mode == M_TEXT_NL;
	return !(cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f));
}

/* out (olen bytes) is valid UTF-8 whose every code point is shown in that
 * mode. */
static const char *
valid_out(const char *out, size_t olen, int mode)
{
	const unsigned char *o = (const unsigned char *)out;
	size_t i = 0, l;
	uint32_t cp;

	while (i < olen) {
		if ((l = u8len(o + i, olen - i, &cp)) == 0)
			return "output is not valid UTF-8";
		if (!shown(cp, mode))
			return "output holds a control character";
		i += l;
	}
	return NULL;
}

/*
 * out is in (n bytes; NULs skipped when skip_nul, else the end) with the
 * bytes that cannot be shown as \xNN.  strict: a valid, shown UTF-8
 * sequence is never escaped (fput_sanitized's 256-byte chunks may cut one,
 * whose bytes are then escaped); printable ASCII never is.  prefix: out
 * may stop early, but between two pieces.  Returns the input bytes
 * consumed, or (size_t)-1 and *why.
 */
static size_t
walk(const unsigned char *in, size_t n, const char *out, size_t olen, int mode, int skip_nul,
    int strict, int prefix, const char **why)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, o = 0, l;
	uint32_t cp = 0;

	while (i < n) {
		int show, esc;
		if (prefix && o == olen)
			return i;
		if (in[i] == '\0') {
			if (!skip_nul)
				break;
			i++;
			continue;
		}
		l = u8len(in + i, n - i, &cp);
		show = l > 0 && shown(cp, mode);
		if (show && o + l <= olen && memcmp(out + o, in + i, l) == 0) {
			o += l;
			i += l;
			continue;
		}
		esc = o + 4 <= olen && out[o] == '\\' && out[o + 1] == 'x' &&
		    out[o + 2] == hex[in[i] >> 4] && out[o + 3] == hex[in[i] & 15];
		if (!esc) {
			*why = prefix && o < olen && olen - o < 4 && out[o] == '\\' ?
			    "an escape cut in half" : show && prefix && o < olen ?
			    "a UTF-8 sequence cut in half" : "output is not the input with escapes";
			return (size_t)-1;
		}
		if (show && (strict || l == 1)) {
			*why = "a showable character was escaped";
			return (size_t)-1;
		}
		o += 4;
		i++;
	}
	if (o != olen) {
		*why = "output longer than the input's escapes";
		return (size_t)-1;
	}
	return i;
}

static void
check_text(const uint8_t *d, const unsigned char *s, size_t n, int nl, size_t shortlen)
{
	size_t cap = 4 * n + 1, olen;
	char *full = malloc(cap), *cut = malloc(shortlen + 1);
	const char *why = NULL;
	int mode = nl ? M_TEXT_NL : M_TEXT;

	if (full == NULL || cut == NULL)
		abort();
	sanitize(full, cap, (const char *)s, n, nl);
	olen = strlen(full);
	if ((why = valid_out(full, olen, mode)) != NULL ||
	    walk(s, n, full, olen, mode, 0, 1, 0, &why) == (size_t)-1)
		bad(why, d, n + 1, full);
	/* a short buffer: a prefix of the whole answer, cut between pieces */
	sanitize(cut, shortlen + 1, (const char *)s, n, nl);
	if (strlen(cut) > shortlen || strncmp(cut, full, strlen(cut)) != 0)
		bad("a short buffer is not a prefix of the whole answer", d, n + 1, cut);
	if ((why = valid_out(cut, strlen(cut), mode)) != NULL ||
	    walk(s, n, cut, strlen(cut), mode, 0, 1, 1, &why) == (size_t)-1)
		bad(why, d, n + 1, cut);
	free(full);
	free(cut);
}

static void
check_fput(const uint8_t *d, const unsigned char *s, size_t n, int nl)
{
	char *out = NULL;
	size_t olen = 0;
	const char *why = NULL;
	FILE *f = open_memstream(&out, &olen);

	if (f == NULL)
		abort();
	fput_sanitized(f, (const char *)s, n, nl);
	fclose(f);
	if ((why = valid_out(out, olen, nl ? M_TEXT_NL : M_TEXT)) != NULL ||
	    walk(s, n, out, olen, nl ? M_TEXT_NL : M_TEXT, 1, 0, 0, &why) == (size_t)-1)
		bad(why, d, n + 1, out);
	free(out);
}

static void
check_json(const uint8_t *d, const unsigned char *s, size_t n)
{
	size_t cap = 4 * n + 1, olen;
	char *out = malloc(cap), *text, *z;
	const char *why = NULL;
	json_t *j, *a, *back;
	json_error_t je;
	int ascii;

	if (out == NULL || (z = malloc(n + 1)) == NULL)
		abort();
	sanitize_json(out, cap, (const char *)s, n);
	olen = strlen(out);
	if ((why = valid_out(out, olen, M_JSON)) != NULL ||
	    walk(s, n, out, olen, M_JSON, 0, 1, 0, &why) == (size_t)-1)
		bad(why, d, n + 1, out);
	/* json_dumpstr is sanitize_json's answer as a JSON string */
	memcpy(z, s, n);
	z[n] = '\0';
	j = json_dumpstr(z);
	if (!json_is_string(j) || strcmp(json_string_value(j), out) != 0)
		bad("json_dumpstr differs from sanitize_json", d, n + 1, out);
	for (ascii = 0; ascii < 2; ascii++) {
		a = json_array();
		json_array_append(a, j);
		text = json_dumps(a, ascii ? JSON_ENSURE_ASCII : 0);
		if (text == NULL)
			bad("jansson cannot encode the string", d, n + 1, out);
		if (ascii)
			for (const char *p = text; *p; p++)
				if ((unsigned char)*p >= 0x80)
					bad("JSON_ENSURE_ASCII output holds a non-ASCII byte", d, n + 1, text);
		back = json_loads(text, 0, &je);
		if (!json_is_array(back) || !json_is_string(json_array_get(back, 0)) ||
		    json_string_length(json_array_get(back, 0)) != olen ||
		    memcmp(json_string_value(json_array_get(back, 0)), out, olen) != 0)
			bad("the JSON string does not read back as written", d, n + 1, text);
		json_decref(back);
		free(text);
		json_decref(a);
	}
	json_decref(j);
	free(z);
	free(out);
}

/* csv_field's output read back as one RFC 4180 field. */
static void
check_csv(const uint8_t *d, const char *s, int sanitized)
{
	char *out = NULL, *back;
	size_t olen = 0, i, k = 0;
	FILE *f = open_memstream(&out, &olen);

	if (f == NULL)
		abort();
	csv_field(f, s, false);
	fclose(f);
	if ((back = malloc(olen + 1)) == NULL)
		abort();
	if (olen == 0 || out[0] != ',')
		bad("a field that is not first does not start with a comma", d, strlen(s), out);
	if (olen > 1 && out[1] == '"') {
		for (i = 2; i < olen; i++) {
			if (out[i] == '"') {
				if (i + 1 < olen && out[i + 1] == '"') {
					back[k++] = '"';
					i++;
					continue;
				}
				break;
			}
			back[k++] = out[i];
		}
		if (i != olen - 1)
			bad("a quoted CSV field does not end at its closing quote", d, strlen(s), out);
	} else {
		for (i = 1; i < olen; i++) {
			if (strchr(",\"\r\n", out[i]) != NULL)
				bad("an unquoted CSV field holds a separator", d, strlen(s), out);
			back[k++] = out[i];
		}
	}
	back[k] = '\0';
	if (strcmp(back, s) != 0)
		bad("the CSV field does not read back as the string", d, strlen(s), out);
	if (sanitized)
		for (i = 0; i < olen; i++)
			if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
				bad("a control byte in a sanitized CSV field", d, strlen(s), out);
	free(back);
	free(out);
}

static void
check_emit(const uint8_t *d, const char *z, size_t n)
{
	struct emitter e;
	char *out = NULL;
	size_t olen = 0;
	const char *why;
	FILE *f = open_memstream(&out, &olen);
	json_t *j;
	json_error_t je;

	if (f == NULL)
		abort();
	emit_init(&e, false, f);
	emit_str(&e, "name", "name:", z);
	fflush(f);
	if ((why = valid_out(out, olen, M_TEXT_NL)) != NULL || olen == 0 || out[olen - 1] != '\n' ||
	    memchr(out, '\n', olen) != out + olen - 1)
		bad(why != NULL ? why : "emit_str is not one line", d, n, out);
	fclose(f);
	free(out);
	out = NULL;
	olen = 0;
	if ((f = open_memstream(&out, &olen)) == NULL)
		abort();
	emit_init(&e, true, f);
	emit_str(&e, "name", "name:", z);
	if (emit_finish(&e) != 0)
		bad("emit_finish failed", d, n, NULL);
	fclose(f);
	j = json_loads(out, 0, &je);
	if (!json_is_string(json_object_get(j, "name")))
		bad("emit_str --json: no string back", d, n, out);
	json_decref(j);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *s;
	char *z, *san;
	size_t n, shortlen;
	int nl;

	if (size < 1)
		return 0;
	nl = data[0] & 1;
	shortlen = (size_t)(data[0] >> 1);     /* 0..127 */
	s = data + 1;
	n = size - 1;
	check_text(data, s, n, nl, shortlen);
	check_fput(data, s, n, nl);
	check_json(data, s, n);
	if ((z = malloc(n + 1)) == NULL || (san = malloc(4 * n + 1)) == NULL)
		abort();
	memcpy(z, s, n);
	z[n] = '\0';
	check_csv(data, z, 0);
	sanitize(san, 4 * n + 1, z, strlen(z), false);
	check_csv(data, san, 1);
	check_emit(data, z, n);
	free(san);
	free(z);
	return 0;
}
