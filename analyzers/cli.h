/* cli.h - shared declarations of the kvmstat command. */
#ifndef ANALYZERS_CLI_H
#define ANALYZERS_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "escape.h"
#include "kvmstat.h"

struct opts {
	const char *core, *kernel;
	int open_flags;
	bool json;
	bool percpu;
	bool all;
	bool force;
	const char *format;   /* output format generation (malloc/zone) */
	const char *sort;
	const char *output;   /* gmon -o */
	int top;
	const char *modules[32];
	int nmodules;
	const char *moddir;
	bool clear;           /* cache --clear */
	char **args;          /* positional arguments after the command */
	int nargs;
};

/*
 * One emitter for text and JSON: commands describe records; text mode prints
 * aligned "label: value" lines, JSON mode builds one document printed by
 * emit_finish().  Table-shaped commands format their own text rows but still
 * collect JSON through emit_json_root().
 */
struct emitter {
	bool json;
	FILE *out;
	json_t *root;
};
void emit_init(struct emitter *e, bool json, FILE *out);
void emit_str(struct emitter *e, const char *key, const char *label, const char *val);
void emit_u64(struct emitter *e, const char *key, const char *label, uint64_t v);
void emit_hex(struct emitter *e, const char *key, const char *label, uint64_t v);
json_t *emit_json_root(struct emitter *e);
int emit_finish(struct emitter *e);


/* Open the handle (prints the error on failure). */
kvs_t *open_handle(const struct opts *o);

int cmd_info(kvs_t *kd, const struct opts *o);
int cmd_dmesg(kvs_t *kd, const struct opts *o);
int cmd_malloc(kvs_t *kd, const struct opts *o);
int cmd_gmon(kvs_t *kd, const struct opts *o);
int cmd_profile(kvs_t *kd, const struct opts *o);
int cmd_probes(kvs_t *kd, const struct opts *o);
int cmd_zone(kvs_t *kd, const struct opts *o);
int cmd_profil(kvs_t *kd, const struct opts *o);
int cmd_slab(kvs_t *kd, const struct opts *o);
int cmd_type(kvs_t *kd, const struct opts *o);
int cmd_cache(kvs_t *kd, const struct opts *o);

#endif
