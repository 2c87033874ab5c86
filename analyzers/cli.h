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
	bool stats;           /* info --stats */
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
	bool demo;            /* --demo: the bundled demo dump */
	bool phys;            /* rd -p */
	bool csv;             /* --csv */
	bool libxo;           /* --json --libxo: FreeBSD vmstat's libxo keys */
	const char *kernel_b; /* diff --kernel-b */
	const char *objects;  /* slab --objects CACHE */
	const char *argv0;
};

/* The "schema" of every JSON document (docs/json.md). */
#define KVS_JSON_SCHEMA "kvmstat/1"

/* A usage error: the reason and the usage (JSON on stdout under --json);
 * returns the exit status 2. */
int usage_error(bool json, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* {"schema", "error": {"code", "message"}} on stdout. */
void json_error(const char *code, const char *msg);

/* A kernel address as JSON: the string "0x..." (never a decimal). */
json_t *json_kaddr(uint64_t addr);
/* A name read from a dump as JSON: control bytes escaped by JSON itself
 * (\u001b), invalid UTF-8 shown as \xNN text (JSON strings are UTF-8). */
json_t *json_dumpstr(const char *s);

/* CSV (RFC 4180): fields joined by commas, quoted when they hold a comma, a
 * quote, CR or LF (quotes doubled); rows end in CRLF. */
void csv_field(FILE *f, const char *s, bool first);
void csv_u64(FILE *f, uint64_t v, bool first);
void csv_i64(FILE *f, int64_t v, bool first);
void csv_end(FILE *f);
/* The first two fields of a row about one memory type: its name (escape
 * bytes shown, not sent) and its kernel address. */
struct memory_type;
void csv_type(FILE *f, const struct memory_type *mt);

/*
 * A partial dump (memstat_get_flags): a row is kept with the figures the
 * dump does not hold marked - "?" in text, null in JSON, an empty CSV
 * field.  row_noname/row_nocount: its name, its counts are not known;
 * row_name: the name to show ("?" when not known).  json_known: v as JSON,
 * or null.  csv_known_u64/_i64: v, or an empty field.  text_known: v as
 * decimal into buf, or "?".  csv_type gives an unknown name as an empty
 * field.
 */
struct memory_type_list;
bool row_noname(const struct memory_type *mt);
bool row_nocount(const struct memory_type *mt);
const char *row_name(const struct memory_type *mt);
json_t *json_known(bool known, int64_t v);
void csv_known_u64(FILE *f, bool known, uint64_t v);
void csv_known_i64(FILE *f, bool known, int64_t v);
const char *text_known(char *buf, size_t len, bool known, int64_t v);
/* After a table of l: if some rows have figures the dump does not hold or
 * a list was cut (memstat_mtl_incomplete), says so on stderr - "kvmstat:
 * CMD: the answer is incomplete: N of M WHAT ..." - after the first
 * warning when `warned` is false (the command has not printed it), and
 * returns 1 (the exit status); else 0. */
int report_incomplete(kvs_t *kd, struct memory_type_list *l, const char *cmd,
    const char *what, bool json, bool warned);
/* The first warning of the last walk on stderr ("kvmstat: warning: ...",
 * "(and more)" when there are others), if any. */
void print_warnings(kvs_t *kd);

/*
 * Counters that are differences (bytes and count in use: allocations less
 * frees) are signed: a type whose frees outnumber its allocations on the
 * CPUs the dump holds is below zero, and every format (text, CSV, JSON,
 * --libxo) shows the same negative figure, never its 64-bit wrap.
 */
int64_t signed_count(uint64_t v);
/* Bytes as kilobytes, rounded up in magnitude with the sign kept (vmstat's
 * MemUse: 1 -> 1, -65216 -> -64). */
int64_t kbytes_signed(int64_t bytes);

struct command;
/* A command of one kernel family run on another: if kd's kernel is not of
 * family `os` ("FreeBSD", "Linux"), says "`cmd` reads <reads>; this is a
 * Linux 6.1 kernel (try <try_>)" on stderr and, under --json, as the error
 * document (code "family"), and returns 1 (the exit status); else 0. */
int wrong_family(kvs_t *kd, const struct opts *o, const char *os, const char *cmd,
    const char *reads, const char *try_);
/* --version under --json: {"schema", "program", "version"}; exit status. */
int emit_version_json(const char *version);
/* help (c NULL: every command of all[0..n)) under --json: {"schema",
 * "usage", "commands": [{"name", "summary", "usage", "formats"}]}. */
int emit_help_json(const struct command *c, const struct command *all, size_t n);
/* What an output file command wrote (gmon -o, rd -o) under --json:
 * {"schema", "command", "path", "bytes", ...extra's keys}; bytes < 0: the
 * file's size (null when it is not a regular file).  extra (may be NULL) is
 * consumed. */
int emit_wrote_json(const char *command, const char *path, int64_t bytes, json_t *extra);

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
int cmd_whatis(kvs_t *kd, const struct opts *o);
int cmd_vmalloc(kvs_t *kd, const struct opts *o);
int cmd_dmesg(kvs_t *kd, const struct opts *o);
int cmd_malloc(kvs_t *kd, const struct opts *o);
int cmd_gmon(kvs_t *kd, const struct opts *o);
int cmd_profile(kvs_t *kd, const struct opts *o);
int cmd_probes(kvs_t *kd, const struct opts *o);
int cmd_zone(kvs_t *kd, const struct opts *o);
int cmd_profil(kvs_t *kd, const struct opts *o);
int cmd_slab(kvs_t *kd, const struct opts *o);
int cmd_type(kvs_t *kd, const struct opts *o);
int cmd_rd(kvs_t *kd, const struct opts *o);
int cmd_diff(kvs_t *kd, const struct opts *o);
int cmd_cache(kvs_t *kd, const struct opts *o);
int cmd_shell(kvs_t *kd, const struct opts *o);
int cmd_mem(kvs_t *kd, const struct opts *o);
int cmd_buddyinfo(kvs_t *kd, const struct opts *o);
int cmd_zoneinfo(kvs_t *kd, const struct opts *o);

#endif
