/*
 * cmd_rd.c - `kvmstat rd [-p] ADDRESS|SYMBOL[+OFF] [COUNT] [-o FILE]`: memory
 * the way crash's rd shows it: COUNT 8-byte words (default 1), two to a line
 * after the line's address, then the line's bytes as ASCII ('.' for what is
 * not printable).  Virtual addresses by default, physical with -p.  ADDRESS
 * is hexadecimal, with or without 0x, as in crash.
 *
 * A word that cannot be read is reported on stderr at its address with the
 * reason; the rest of its page is skipped and the dump goes on at the next
 * page, and the exit status is 1.  -o FILE writes the raw bytes instead
 * (atomically: a temporary file renamed into place, and nothing when any
 * byte is unreadable).  --json: {"schema", "space", "address", "words":
 * [{"address", "value"}], "errors": [{"address", "message"}]}.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define RD_PAGE 4096ULL
#define RD_MAXCOUNT (1ULL << 27)   /* 1 GiB of words */

static int
parse_hex(const char *s, uint64_t *v)
{
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (*s == '\0' || strspn(s, "0123456789abcdefABCDEF") != strlen(s) ||
	    strlen(s) > 16)
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 16);
	return errno == 0 && *end == '\0' ? 0 : -1;
}

/* ADDRESS, SYMBOL or SYMBOL+OFF (OFF hex with 0x, else decimal). */
static int
parse_where(kvs_t *kd, const struct opts *o, const char *arg, uint64_t *addr)
{
	char name[256];
	const char *plus = strchr(arg, '+');
	uint64_t off = 0, size;
	size_t n = plus != NULL ? (size_t)(plus - arg) : strlen(arg);

	if (parse_hex(arg, addr) == 0)
		return 0;
	if (o->phys)
		return usage_error(o->json, "rd -p takes a hexadecimal physical address, "
		    "not '%s'", arg);
	if (plus != NULL) {
		char *end;
		errno = 0;
		off = strtoull(plus + 1, &end, 0);
		if (plus[1] == '\0' || *end != '\0' || errno != 0 || plus[1] == '-')
			return usage_error(o->json, "rd: bad offset in '%s'", arg);
	}
	if (n == 0 || n >= sizeof(name))
		return usage_error(o->json, "rd: '%s' is neither an address nor a symbol", arg);
	memcpy(name, arg, n);
	name[n] = '\0';
	if (kvs_symbol(kd, name, addr, &size) != 0) {
		char clean[1024];
		fprintf(stderr, "kvmstat: rd: no symbol '%s' in the kernel\n",
		    sanitize(clean, sizeof(clean), name, n, false));
		if (o->json) {
			char msg[1400];
			snprintf(msg, sizeof(msg), "rd: no symbol '%s' in the kernel", clean);
			json_error("symbol", msg);
		}
		return 1;
	}
	*addr += off;
	return 0;
}

static int
rd_read(kvs_t *kd, bool phys, uint64_t a, void *buf, size_t len)
{
	return phys ? kvs_read_phys(kd, a, buf, len) : kvs_read(kd, a, buf, len);
}

static void
report(kvs_t *kd, const struct opts *o, json_t *errs, uint64_t a, uint64_t skipped)
{
	char clean[4 * KVS_ERRBUF_SIZE], where[24];
	const char *e = kvs_geterr(kd);

	sanitize(clean, sizeof(clean), e, strlen(e), false);
	snprintf(where, sizeof(where), "%016" PRIx64, a);
	fprintf(stderr, "kvmstat: rd: %s%s: cannot read (%s); skipped %" PRIu64 " bytes, "
	    "to the end of the page\n", o->phys ? "physical " : "", where, clean, skipped);
	if (errs != NULL) {
		json_t *r = json_object();
		json_object_set_new(r, "address", json_kaddr(a));
		json_object_set_new(r, "message", json_string(clean));
		json_array_append_new(errs, r);
	}
}

/* -o FILE: every byte or none, written to a temporary file renamed into
 * place. */
static int
write_raw(kvs_t *kd, const struct opts *o, uint64_t addr, uint64_t len)
{
	size_t plen = strlen(o->output);
	char *tmp = malloc(plen + 16), buf[RD_PAGE];
	uint64_t done = 0;
	FILE *f;
	int fd;

	if (tmp == NULL)
		return 1;
	snprintf(tmp, plen + 16, "%s.XXXXXX", o->output);
	if ((fd = mkstemp(tmp)) < 0 || (f = fdopen(fd, "wb")) == NULL) {
		fprintf(stderr, "kvmstat: rd: %s: %s\n", o->output, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return 1;
	}
	while (done < len) {
		uint64_t a = addr + done, n = RD_PAGE - a % RD_PAGE;
		if (n > len - done)
			n = len - done;
		if (rd_read(kd, o->phys, a, buf, (size_t)n) != 0) {
			report(kd, o, NULL, a, n);
			fprintf(stderr, "kvmstat: rd: %s not written\n", o->output);
			goto fail;
		}
		if (fwrite(buf, 1, (size_t)n, f) != n)
			goto ioerr;
		done += n;
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		goto ioerr;
	if (fclose(f) != 0) {
		f = NULL;
		goto ioerr;
	}
	if (rename(tmp, o->output) != 0) {
		f = NULL;
		goto ioerr;
	}
	free(tmp);
	return 0;
ioerr:
	fprintf(stderr, "kvmstat: rd: writing %s: %s\n", o->output, strerror(errno));
fail:
	if (f != NULL)
		fclose(f);
	unlink(tmp);
	free(tmp);
	return 1;
}

static void
flush_line(uint64_t la, const unsigned char *b, unsigned nw)
{
	unsigned i;
	uint64_t w;

	printf("%016" PRIx64 ":  ", la);
	for (i = 0; i < 2; i++) {
		if (i < nw) {
			memcpy(&w, b + 8 * i, 8);
			printf("%016" PRIx64 " ", w);
		} else
			printf("%16s ", "");
	}
	printf("  ");
	for (i = 0; i < 8 * nw; i++)
		putchar(b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '.');
	putchar('\n');
}

int
cmd_rd(kvs_t *kd, const struct opts *o)
{
	uint64_t addr, count = 1, i;
	unsigned char line[16];
	unsigned nw = 0;
	uint64_t la = 0;
	json_t *words = NULL, *errs = NULL;
	struct emitter e;
	int rc, bad = 0;

	if (o->nargs < 1 || o->nargs > 2)
		return usage_error(o->json, "rd takes ADDRESS|SYMBOL and an optional COUNT");
	if (o->nargs == 2) {
		char *end;
		errno = 0;
		count = strtoull(o->args[1], &end, 10);
		if (o->args[1][0] == '-' || *end != '\0' || errno != 0 || count == 0 ||
		    count > RD_MAXCOUNT)
			return usage_error(o->json, "rd COUNT takes a positive number of words, "
			    "not '%s'", o->args[1]);
	}
	if ((rc = parse_where(kd, o, o->args[0], &addr)) != 0)
		return rc;
	if (addr + 8 * count < addr)
		return usage_error(o->json, "rd: %" PRIu64 " words from 0x%" PRIx64
		    " wrap around", count, addr);
	if (o->output != NULL)
		return write_raw(kd, o, addr, 8 * count);
	if (o->json) {
		emit_init(&e, true, stdout);
		words = json_array();
		errs = json_array();
		json_object_set_new(emit_json_root(&e), "space",
		    json_string(o->phys ? "physical" : "virtual"));
		json_object_set_new(emit_json_root(&e), "address", json_kaddr(addr));
	}
	for (i = 0; i < count; i++) {
		uint64_t a = addr + 8 * i;
		unsigned char w[8];

		if (rd_read(kd, o->phys, a, w, 8) != 0) {
			/* Skip to the first word of the next page. */
			uint64_t next = (a / RD_PAGE + 1) * RD_PAGE, skip;
			uint64_t nskip = (next - addr + 7) / 8;
			if (nskip > count)
				nskip = count;
			skip = (nskip - i) * 8;
			if (!o->json && nw > 0)
				flush_line(la, line, nw);
			nw = 0;
			report(kd, o, errs, a, skip);
			bad = 1;
			i = nskip - 1;
			continue;
		}
		if (o->json) {
			uint64_t v;
			json_t *r = json_object();
			memcpy(&v, w, 8);
			json_object_set_new(r, "address", json_kaddr(a));
			json_object_set_new(r, "value", json_kaddr(v));
			json_array_append_new(words, r);
			continue;
		}
		if (nw == 0)
			la = a;
		memcpy(line + 8 * nw, w, 8);
		if (++nw == 2) {
			flush_line(la, line, nw);
			nw = 0;
		}
	}
	if (o->json) {
		json_object_set_new(emit_json_root(&e), "words", words);
		json_object_set_new(emit_json_root(&e), "errors", errs);
		rc = emit_finish(&e);
		return rc != 0 ? rc : bad;
	}
	if (nw > 0)
		flush_line(la, line, nw);
	return fflush(stdout) == 0 ? bad : 1;
}
