/*
 * escape.c - nothing read from a dump reaches the terminal raw.  Names and
 * messages come from memory an attacker (or a bug) may control: escape
 * sequences must be shown, not executed.
 */
#include <string.h>

#include <stdint.h>

#include "escape.h"

/* Length of a valid UTF-8 sequence at s (1..4) that is not a C1 control
 * (unless c1 is true), or 0 if the bytes are not acceptable. */
static size_t
utf8_ok(const unsigned char *s, size_t n, bool c1)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (!c1 && cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

/* keep_ctl: control characters are kept (the JSON encoder escapes them). */
static char *
escape(char *dst, size_t dstlen, const char *src, size_t srclen, bool keep_newlines,
    bool keep_ctl)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0;

	if (dstlen == 0)
		return dst;
	while (i < srclen && s[i] != '\0') {
		size_t n = utf8_ok(s + i, srclen - i, keep_ctl);
		bool ctl = !keep_ctl && (s[i] < 0x20 || s[i] == 0x7f);

		if (keep_newlines && (s[i] == '\n' || s[i] == '\t'))
			ctl = false;
		if (n == 0 || ctl) {
			if (o + 4 >= dstlen)
				break;
			static const char hex[] = "0123456789abcdef";
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[s[i] >> 4];
			dst[o++] = hex[s[i] & 15];
			i++;
			continue;
		}
		if (o + n >= dstlen)
			break;
		memcpy(dst + o, s + i, n);
		o += n;
		i += n;
	}
	dst[o] = '\0';
	return dst;
}

char *
sanitize(char *dst, size_t dstlen, const char *src, size_t srclen, bool keep_newlines)
{
	return escape(dst, dstlen, src, srclen, keep_newlines, false);
}

char *
sanitize_json(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	return escape(dst, dstlen, src, srclen, true, true);
}

void
fput_sanitized(FILE *f, const char *src, size_t len, bool keep_newlines)
{
	char buf[4 * 256 + 1];
	size_t i = 0;

	/* Chunk on input, taking care not to split a UTF-8 sequence badly:
	 * a split sequence is merely shown escaped, never emitted raw. */
	while (i < len) {
		size_t n = len - i > 256 ? 256 : len - i;
		const char *p = memchr(src + i, '\0', n);
		if (p != NULL) {
			/* Skip NULs (message buffers are NUL-padded). */
			size_t k = (size_t)(p - (src + i));
			if (k > 0)
				fputs(sanitize(buf, sizeof(buf), src + i, k, keep_newlines), f);
			i += k + 1;
			continue;
		}
		fputs(sanitize(buf, sizeof(buf), src + i, n, keep_newlines), f);
		i += n;
	}
}
