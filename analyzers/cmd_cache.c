/*
 * cmd_cache.c - `kvmstat cache [--clear]`: where the layout cache is and
 * what it holds (one line per file: its kernel identity, answers held,
 * size), or remove it.  Needs no kernel.
 *
 * --json: {"schema": "kvmstat/1", "directory", "files": [{"path",
 * "identity", "entries", "size", "valid"}], "removed"?}
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct clist {
	bool json;
	json_t *files;
	unsigned n, entries;
	uint64_t bytes;
	char clean[4 * 4096];
};

static int
one_file(void *arg, const struct kvs_cache_file *f)
{
	struct clist *l = arg;

	l->n++;
	l->bytes += f->size;
	l->entries += f->valid ? f->entries : 0;
	if (l->json) {
		/* Paths and identities as any name: not UTF-8 shows as \xNN
		 * (json_pack would drop the whole entry). */
		json_t *j = json_object();
		json_object_set_new(j, "path", json_dumpstr(f->path));
		json_object_set_new(j, "identity", json_dumpstr(f->identity));
		json_object_set_new(j, "entries", json_integer((json_int_t)f->entries));
		json_object_set_new(j, "size", json_integer((json_int_t)f->size));
		json_object_set_new(j, "valid", json_boolean(f->valid));
		json_array_append_new(l->files, j);
		return 0;
	}
	printf("%s\n", sanitize(l->clean, sizeof(l->clean), f->path,
	    strlen(f->path), false));
	printf("  %s%s\n", f->valid ? "" : "INVALID: ", sanitize(l->clean,
	    sizeof(l->clean), f->identity, strlen(f->identity), false));
	printf("  %u answers, %" PRIu64 " bytes\n", f->entries, f->size);
	return 0;
}

int
cmd_cache(kvs_t *kd, const struct opts *o)
{
	char dir[4096];
	struct clist *l;
	unsigned removed = 0;
	int rc = 0;

	(void)kd;
	if (kvs_cache_dir(dir, sizeof(dir)) != 0) {
		const char *msg = "cache: neither XDG_CACHE_HOME nor HOME says where the "
		    "cache is";
		fprintf(stderr, "kvmstat: %s\n", msg);
		if (o->json)
			json_error("open", msg);
		return 1;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return 1;
	l->json = o->json;
	if (o->clear && kvs_cache_clear(&removed) != 0) {
		fprintf(stderr, "kvmstat: cache: cannot clear %s\n", dir);
		rc = 1;
	}
	if (o->json)
		l->files = json_array();
	else if (o->clear)
		printf("removed %u cache file%s from %s\n", removed,
		    removed == 1 ? "" : "s", dir);
	else
		printf("layout cache: %s\n", dir);
	if (kvs_cache_list(one_file, l) != 0) {
		fprintf(stderr, "kvmstat: cache: cannot read %s\n", dir);
		rc = 1;
	}
	if (o->json) {
		json_t *root = json_object();
		json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
		json_object_set_new(root, "directory", json_dumpstr(dir));
		json_object_set_new(root, "files", l->files);
		if (o->clear)
			json_object_set_new(root, "removed", json_integer(removed));
		if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
			rc = 1;
		putchar('\n');
		json_decref(root);
	} else if (!o->clear || l->n > 0)
		printf("%u file%s, %u answers, %" PRIu64 " bytes\n", l->n,
		    l->n == 1 ? "" : "s", l->entries, l->bytes);
	free(l);
	return rc;
}
