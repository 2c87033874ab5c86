/*
 * cmd_dmesg.c - `kvmstat dmesg`: the kernel message buffer, oldest first, as
 * the library's OS layer linearises it (kvs_msgbuf).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int
cmd_dmesg(kvs_t *kd, const struct opts *o)
{
	char *text;
	size_t n;

	if (kvs_msgbuf(kd, &text, &n) != 0) {
		fprintf(stderr, "kvmstat: dmesg: %s\n", kvs_geterr(kd));
		if (o->json)
			json_error("read", kvs_geterr(kd));
		return 1;
	}
	if (o->json) {
		struct emitter e;
		char *clean = malloc(4 * n + 1);
		json_t *lines = json_array();
		char *p, *save = NULL;

		emit_init(&e, true, stdout);
		if (clean == NULL) {
			free(text);
			return 1;
		}
		sanitize_json(clean, 4 * n + 1, text, n);
		json_object_set_new(emit_json_root(&e), "text", json_string(clean));
		for (p = strtok_r(clean, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
			json_array_append_new(lines, json_string(p));
		json_object_set_new(emit_json_root(&e), "lines", lines);
		free(clean);
		free(text);
		return emit_finish(&e);
	}
	fput_sanitized(stdout, text, n, true);
	if (n > 0 && text[n - 1] != '\n')
		putchar('\n');
	free(text);
	return fflush(stdout) == 0 ? 0 : 1;
}
