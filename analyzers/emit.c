/* emit.c - text/JSON emitter shared by every kvmstat command. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
csv_end(FILE *f)
{
	fputs("\r\n", f);
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
