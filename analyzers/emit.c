/* emit.c - text/JSON emitter shared by every kvmstat command. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "memstat.h"
#include "options.h"

void
emit_init(struct emitter *e, bool json, FILE *out)
{
	e->json = json;
	e->out = out;
	e->root = json ? json_object() : NULL;
	if (e->root != NULL)
		json_object_set_new(e->root, "schema", json_string(KVS_JSON_SCHEMA));
}

json_t *
json_kaddr(uint64_t addr)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%016" PRIx64, addr);
	return json_string(buf);
}

json_t *
json_dumpstr(const char *s)
{
	size_t n, cap;
	char *buf;
	json_t *j;

	if (s == NULL)
		return json_null();
	n = strlen(s);
	cap = 4 * n + 1;
	if ((buf = malloc(cap)) == NULL)
		return json_null();
	j = json_string(sanitize_json(buf, cap, s, n));
	free(buf);
	return j;
}

void
csv_field(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void
csv_u64(FILE *f, uint64_t v, bool first)
{
	fprintf(f, "%s%" PRIu64, first ? "" : ",", v);
}

void
csv_i64(FILE *f, int64_t v, bool first)
{
	fprintf(f, "%s%" PRId64, first ? "" : ",", v);
}

int64_t
signed_count(uint64_t v)
{
	return (int64_t)v;
}

int64_t
kbytes_signed(int64_t bytes)
{
	/* |bytes| / 1024 rounded up, the sign kept: vmstat's "(bytes + 1023) /
	 * 1024" for a positive figure, -64 for -65216. */
	uint64_t mag = bytes < 0 ? 0 - (uint64_t)bytes : (uint64_t)bytes;
	int64_t k = (int64_t)((mag + 1023) / 1024);

	return bytes < 0 ? -k : k;
}

void
csv_end(FILE *f)
{
	fputs("\r\n", f);
}

bool
row_noname(const struct memory_type *mt)
{
	return (memstat_get_flags(mt) & MEMSTAT_NAME_UNREADABLE) != 0;
}

bool
row_nocount(const struct memory_type *mt)
{
	return (memstat_get_flags(mt) & MEMSTAT_COUNTS_UNREADABLE) != 0;
}

const char *
row_name(const struct memory_type *mt)
{
	return row_noname(mt) ? "?" : memstat_get_name(mt);
}

json_t *
json_known(bool known, int64_t v)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

void
csv_known_u64(FILE *f, bool known, uint64_t v)
{
	if (known)
		csv_u64(f, v, false);
	else
		csv_field(f, "", false);
}

void
csv_known_i64(FILE *f, bool known, int64_t v)
{
	if (known)
		csv_i64(f, v, false);
	else
		csv_field(f, "", false);
}

const char *
text_known(char *buf, size_t len, bool known, int64_t v)
{
	if (known)
		snprintf(buf, len, "%" PRId64, v);
	else
		snprintf(buf, len, "?");
	return buf;
}

void
print_warnings(kvs_t *kd)
{
	const char *w;
	unsigned nw = kvs_warnings(kd, &w);
	char clean[4 * KVS_ERRBUF_SIZE];

	if (nw > 0)
		fprintf(stderr, "kvmstat: warning: %s%s\n", sanitize(clean, sizeof(clean), w,
		    strlen(w), false), nw > 1 ? " (and more)" : "");
}

int
report_incomplete(kvs_t *kd, struct memory_type_list *l, const char *cmd, const char *what,
    bool json, bool warned)
{
	struct memory_type *mt;
	size_t bad = 0, n = 0;
	bool cut = memstat_mtl_incomplete(l) != 0;

	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt), n++)
		if (row_noname(mt) || row_nocount(mt))
			bad++;
	if (bad == 0 && !cut)
		return 0;
	if (!warned)
		print_warnings(kd);
	fprintf(stderr, "kvmstat: %s: the answer is incomplete: ", cmd);
	if (bad > 0)
		fprintf(stderr, "%zu of %zu %s have figures the dump does not hold (shown as ?%s)%s",
		    bad, n, what, json ? ", null in JSON" : "", cut ? "; " : "");
	if (cut)
		fprintf(stderr, "a kernel list is cut where the dump lacks a page: the %s past "
		    "the cut are missing", what);
	fputc('\n', stderr);
	return 1;
}

void
csv_type(FILE *f, const struct memory_type *mt)
{
	char name[4 * MEMTYPE_MAXNAME + 1], addr[24];
	const char *nm = row_noname(mt) ? "" : memstat_get_name(mt);

	snprintf(addr, sizeof(addr), "0x%016" PRIx64, memstat_get_kaddr(mt));
	csv_field(f, sanitize(name, sizeof(name), nm, strlen(nm), false), true);
	csv_field(f, addr, false);
}

json_t *
emit_json_root(struct emitter *e)
{
	return e->root;
}

void
emit_str(struct emitter *e, const char *key, const char *label, const char *val)
{
	char buf[2048];

	if (e->json) {
		/* JSON escaping is jansson's job; invalid UTF-8 is shown as
		 * text first because jansson rejects it. */
		json_object_set_new(e->root, key, json_dumpstr(val));
		return;
	}
	fprintf(e->out, "%-14s %s\n", label, val ? sanitize(buf, sizeof(buf), val,
	    strlen(val), false) : "-");
}

void
emit_u64(struct emitter *e, const char *key, const char *label, uint64_t v)
{
	if (e->json)
		json_object_set_new(e->root, key, json_integer((json_int_t)v));
	else
		fprintf(e->out, "%-14s %" PRIu64 "\n", label, v);
}

void
emit_hex(struct emitter *e, const char *key, const char *label, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	if (e->json)
		json_object_set_new(e->root, key, json_string(buf));
	else
		fprintf(e->out, "%-14s %s\n", label, buf);
}

int
emit_finish(struct emitter *e)
{
	int rc = 0;

	if (e->json) {
		rc = json_dumpf(e->root, e->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', e->out);
		json_decref(e->root);
		e->root = NULL;
	}
	return rc == 0 && fflush(e->out) == 0 ? 0 : 1;
}

/* "14.1" from "FreeBSD 14.1-RELEASE ...", "6.1" from "Linux version 6.1.0-...":
 * the first word that starts with a digit, up to its second number. */
static void
kernel_release(const char *v, char *buf, size_t len)
{
	const char *p;
	size_t n;

	buf[0] = '\0';
	for (p = v; p != NULL && *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p) || (p > v && p[-1] != ' '))
			continue;
		n = strspn(p, "0123456789");
		if (p[n] == '.' && isdigit((unsigned char)p[n + 1]))
			n += 1 + strspn(p + n + 1, "0123456789");
		snprintf(buf, len, " %.*s", (int)(n < 32 ? n : 32), p);
		return;
	}
}

int
wrong_family(kvs_t *kd, const struct opts *o, const char *os, const char *cmd,
    const char *reads, const char *try_)
{
	struct kvs_kernelinfo ki;
	char rel[40], msg[512];

	if (kvs_kernel_info(kd, &ki) != 0 || ki.os == NULL || strcmp(ki.os, os) == 0)
		return 0;
	kernel_release(ki.version, rel, sizeof(rel));
	if (strcmp(ki.os, "unknown") == 0)   /* a format-only open, or no known OS */
		snprintf(msg, sizeof(msg), "`%s` reads %s; no kernel is known for this dump "
		    "(give it with -N)", cmd, reads);
	else
		snprintf(msg, sizeof(msg), "`%s` reads %s; this is a %s%s kernel (try %s)", cmd,
		    reads, ki.os, rel, try_);
	fprintf(stderr, "kvmstat: %s\n", msg);
	if (o->json)
		json_error("family", msg);
	return 1;
}

/* A document printed on stdout; its exit status. */
static int
print_doc(json_t *root)
{
	int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	putchar('\n');
	json_decref(root);
	return rc == 0 && fflush(stdout) == 0 ? 0 : 1;
}

static json_t *
doc_new(void)
{
	json_t *root = json_object();

	json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
	return root;
}

int
emit_version_json(const char *version)
{
	json_t *root = doc_new();

	json_object_set_new(root, "program", json_string("kvmstat"));
	json_object_set_new(root, "version", json_string(version));
	return print_doc(root);
}

static json_t *
command_json(const struct command *c)
{
	json_t *j = json_object(), *fm = json_array();
	const char *p = c->formats;

	json_object_set_new(j, "name", json_string(c->name));
	json_object_set_new(j, "summary", json_string(c->help));
	/* The text usage's line breaks (and their indentation) as one space. */
	{
		char u[512];
		size_t n = 0;
		const char *q;
		for (q = c->usage; *q != '\0' && n + 1 < sizeof(u); q++) {
			if (*q == '\n') {
				while (q[1] == ' ')
					q++;
				u[n++] = ' ';
			} else
				u[n++] = *q;
		}
		u[n] = '\0';
		json_object_set_new(j, "usage", json_string(u));
	}
	while (p != NULL && *p != '\0') {
		size_t n = strcspn(p, "|");
		json_array_append_new(fm, json_stringn(p, n));
		p += n + (p[n] == '|');
	}
	json_object_set_new(j, "formats", fm);
	return j;
}

int
emit_help_json(const struct command *c, const struct command *all, size_t n)
{
	json_t *root = doc_new(), *cmds = json_array();
	size_t i;

	json_object_set_new(root, "usage", json_string("kvmstat [-M core] [-N kernel] [--raw] "
	    "[--no-verify] [--json] command [options]"));
	if (c != NULL)
		json_array_append_new(cmds, command_json(c));
	else
		for (i = 0; i < n; i++)
			json_array_append_new(cmds, command_json(&all[i]));
	json_object_set_new(root, "commands", cmds);
	return print_doc(root);
}

int
emit_wrote_json(const char *command, const char *path, int64_t bytes, json_t *extra)
{
	json_t *root = doc_new();
	struct stat st;

	if (bytes < 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		bytes = (int64_t)st.st_size;
	json_object_set_new(root, "command", json_string(command));
	json_object_set_new(root, "path", json_dumpstr(path));
	json_object_set_new(root, "bytes", bytes >= 0 ? json_integer(bytes) : json_null());
	if (extra != NULL) {
		json_object_update(root, extra);
		json_decref(extra);
	}
	return print_doc(root);
}
