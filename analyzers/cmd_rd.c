/*
 * cmd_rd.c - `kvmstat rd [-p] ADDRESS|SYMBOL[+OFF] [COUNT] [-o FILE]`: memory
 * the way crash's rd shows it: COUNT 8-byte words (default 1), two to a line
 * after the line's address, then the line's bytes as ASCII ('.' for what is
 * not printable).  Virtual addresses by default, physical with -p.  ADDRESS
 * is hexadecimal, with or without 0x, as in crash.
 *
 * A word that cannot be read is skipped with the rest of its page and the
 * dump goes on at the next page; each run of consecutive unreadable pages
 * is reported once on stderr (its first and last address, its page count,
 * why its first page could not be read), and the exit status is 1.
 * -o FILE writes the raw bytes instead: to a new file, or with -f over a
 * regular one (atomically: a temporary file renamed into place, and nothing
 * when any byte is unreadable); a FIFO or character device is written in
 * place, '-' is standard output.  --json: {"schema", "space", "address", "words":
 * [{"address", "value"}], "errors": [{"address", "message"}]}.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"

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

/*
 * Unreadable memory is said once per run of consecutive unreadable pages:
 * its first and last byte, how many pages, and why the first could not be
 * read (a range of 100000000 words over memory the dump lacks is one line,
 * not one per page).
 */
struct badrun {
	uint64_t start, end;        /* [start, end), end == start: none */
	uint64_t pages;
	char why[4 * KVS_ERRBUF_SIZE];
};

static void
run_flush(const struct opts *o, json_t *errs, struct badrun *r)
{
	char msg[sizeof(r->why) + 128];

	if (r->end == r->start)
		return;
	snprintf(msg, sizeof(msg), "0x%016" PRIx64 "-0x%016" PRIx64 ": not read, %" PRIu64
	    " page%s (%" PRIu64 " bytes): %s", r->start, r->end - 1, r->pages,
	    r->pages == 1 ? "" : "s", r->end - r->start, r->why);
	fprintf(stderr, "kvmstat: rd: %s%s\n", o->phys ? "physical " : "", msg);
	if (errs != NULL) {
		json_t *j = json_object();
		json_object_set_new(j, "address", json_kaddr(r->start));
		json_object_set_new(j, "message", json_string(msg));
		json_array_append_new(errs, j);
	}
	r->start = r->end = 0;
	r->pages = 0;
}

/* [a, a + len) could not be read (kvs_geterr says why): a new run, or the
 * current one extended. */
static void
run_add(kvs_t *kd, const struct opts *o, json_t *errs, struct badrun *r, uint64_t a,
    uint64_t len)
{
	const char *e = kvs_geterr(kd);

	if (r->end != r->start && r->end != a)
		run_flush(o, errs, r);
	if (r->end == r->start) {
		r->start = a;
		sanitize(r->why, sizeof(r->why), e, strlen(e), false);
	}
	r->end = a + len;
	r->pages++;
}

static const char *
kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket" :
	    S_ISBLK(m) ? "a block device" : "not a regular file";
}

bool
output_refused(const char *cmd, const char *path, bool force)
{
	struct stat st, lst;

	if (stat(path, &st) != 0) {
		if (errno == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			fprintf(stderr, "kvmstat: %s: %s is a symbolic link to a missing file; "
			    "not written\n", cmd, path);
			return true;
		}
		if (errno == ENOENT)
			return false;
		fprintf(stderr, "kvmstat: %s: %s: %s\n", cmd, path, strerror(errno));
		return true;
	}
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		return false;           /* written in place */
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "kvmstat: %s: %s is %s; not written (-o takes a new or regular "
		    "file, a FIFO, a character device or -)\n", cmd, path, kind_of(st.st_mode));
		return true;
	}
	if (!force) {
		fprintf(stderr, "kvmstat: %s: %s exists (use -f to replace it)\n", cmd, path);
		return true;
	}
	return false;
}

/*
 * Where -o's bytes go: standard output ('-'), a FIFO or character device
 * opened in place, or a temporary file beside the target (the file a
 * symbolic link names), renamed onto it once every byte is written.
 */
struct outfile {
	FILE *f;
	char *tmp;                  /* NULL: written in place */
	char *final;
	bool noclobber;             /* link(2), not rename(2): no file there */
};

static int
out_open(struct outfile *of, const struct opts *o)
{
	const char *path = o->output;
	struct stat st;
	bool exists;
	int fd = -1;
	size_t n;

	memset(of, 0, sizeof(*of));
	if (strcmp(path, "-") == 0) {
		of->f = stdout;
		return 0;
	}
	if (output_refused("rd", path, o->force))
		return -1;
	exists = stat(path, &st) == 0;
	if (exists && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		if ((fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0 ||
		    (of->f = fdopen(fd, "wb")) == NULL)
			goto err;
		return 0;
	}
	/* A regular file (its real name: a symbolic link is followed) or none. */
	of->noclobber = !exists;
	of->final = of->noclobber ? strdup(path) : realpath(path, NULL);
	if (of->final == NULL)
		goto err;
	n = strlen(of->final) + 16;
	if ((of->tmp = malloc(n)) == NULL)
		goto err;
	snprintf(of->tmp, n, "%s.XXXXXX", of->final);
	if ((fd = mkstemp(of->tmp)) < 0) {
		free(of->tmp);
		of->tmp = NULL;
		goto err;
	}
	/* mkstemp's 0600 would outlive the rename: the umask's mode instead,
	 * or a replaced file's own, as cp leaves it. */
	if (exists)
		(void)fchmod(fd, st.st_mode & 07777);
	else {
		mode_t um = umask(0);
		umask(um);
		(void)fchmod(fd, 0666 & ~um);
	}
	if ((of->f = fdopen(fd, "wb")) == NULL)
		goto err;
	return 0;
err:
	fprintf(stderr, "kvmstat: rd: %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (of->tmp != NULL)
		unlink(of->tmp);
	free(of->tmp);
	free(of->final);
	return -1;
}

/* ok: every byte was written to of->f; commit (rename into place), else
 * drop the temporary file.  0, or -1 said. */
static int
out_close(struct outfile *of, const struct opts *o, bool ok)
{
	int rc = 0;

	if (of->f == stdout) {
		/* A write error is said once, by main's check of stdout. */
		if (fflush(stdout) != 0)
			rc = -1;
		return ok ? rc : -1;
	}
	if (ok && (fflush(of->f) != 0 || (of->tmp != NULL && fsync(fileno(of->f)) != 0)))
		rc = -1;
	if (fclose(of->f) != 0)
		rc = -1;
	if (ok && rc == 0 && of->tmp != NULL) {
		if (of->noclobber) {
			/* link() fails if the name appeared meanwhile: never clobber. */
			if (link(of->tmp, of->final) != 0)
				rc = -1;
		} else if (rename(of->tmp, of->final) != 0)
			rc = -1;
	}
	if (ok && rc != 0)
		fprintf(stderr, "kvmstat: rd: writing %s: %s\n", o->output, strerror(errno));
	if (of->tmp != NULL)
		unlink(of->tmp);
	free(of->tmp);
	free(of->final);
	return ok ? rc : -1;
}

/* -o FILE: every byte or none, written to a temporary file renamed into
 * place; to standard output, a FIFO or a device the bytes go as they are
 * read and stop at the first unreadable page. */
static int
write_raw(kvs_t *kd, const struct opts *o, uint64_t addr, uint64_t len)
{
	struct outfile of;
	struct badrun run = { 0 };
	char buf[RD_PAGE];
	uint64_t done = 0;
	bool ok = true;

	if (out_open(&of, o) != 0)
		return 1;
	while (done < len) {
		uint64_t a = addr + done, n = RD_PAGE - a % RD_PAGE;
		if (n > len - done)
			n = len - done;
		if (rd_read(kd, o->phys, a, buf, (size_t)n) != 0) {
			run_add(kd, o, NULL, &run, a, n);
			run_flush(o, NULL, &run);
			if (of.tmp != NULL)
				fprintf(stderr, "kvmstat: rd: %s not written\n", o->output);
			ok = false;
			break;
		}
		if (fwrite(buf, 1, (size_t)n, of.f) != n) {
			if (of.f != stdout)   /* stdout: said by main */
				fprintf(stderr, "kvmstat: rd: writing %s: %s\n", o->output,
				    strerror(errno));
			ok = false;
			break;
		}
		done += n;
	}
	bool to_stdout = of.f == stdout;
	if (out_close(&of, o, ok) != 0)
		return 1;
	if (o->json && !to_stdout)     /* what was written, as a document */
		return emit_wrote_json("rd", o->output, (int64_t)len, json_pack("{s:s,s:o}",
		    "space", o->phys ? "physical" : "virtual", "address", json_kaddr(addr)));
	return 0;
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
	struct badrun run = { 0 };
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
			run_add(kd, o, errs, &run, a, skip);
			bad = 1;
			i = nskip - 1;
			continue;
		}
		run_flush(o, errs, &run);
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
	run_flush(o, errs, &run);
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
