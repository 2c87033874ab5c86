/* emit.c - text/JSON emitter shared by every kvmstat command. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

void
emit_init(struct emitter *e, bool json, FILE *out)
{
	e->json = json;
	e->out = out;
	e->root = json ? json_object() : NULL;
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
		/* JSON escaping is jansson's job; invalid UTF-8 is sanitized
		 * first because jansson rejects it. */
		json_object_set_new(e->root, key, val ? json_string(sanitize(buf, sizeof(buf),
		    val, strlen(val), true)) : json_null());
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
