/*
 * options.h - the kvmstat command's option parser, callable without
 * running a command (main.c runs what it answers; fuzz/fuzz_cli.c calls it
 * on arbitrary command lines).
 */
#ifndef ANALYZERS_OPTIONS_H
#define ANALYZERS_OPTIONS_H

#include "cli.h"

/* Options a command accepts beyond the global ones (-M -N -K --raw
 * --no-verify --json --module-dir). */
enum {
	A_FORMAT = 1 << 0, A_SORT = 1 << 1, A_PERCPU = 1 << 2, A_ALL = 1 << 3,
	A_TOP = 1 << 4, A_OUTPUT = 1 << 5, A_FORCE = 1 << 6,
	A_ARGS = 1 << 7,            /* positional arguments (type NAME...) */
	/* Not an option: the command needs -N only, and the kernel is opened
	 * alone (KVS_O_KERNEL_ONLY), -M or not. */
	A_KERNEL_ONLY = 1 << 8,
	A_PHYS = 1 << 9,            /* rd -p */
	A_CSV = 1 << 10,            /* --csv */
	A_LIBXO = 1 << 11,          /* --libxo */
	A_KERNEL_B = 1 << 12,       /* diff --kernel-b */
	/* Not an option: the command opens its own handles (diff). */
	A_NO_HANDLE = 1 << 13,
	A_STATS = 1 << 14,          /* info --stats */
	A_CLEAR = 1 << 15,          /* cache --clear */
	A_OBJECTS = 1 << 16,        /* slab --objects CACHE */
};

struct command {
	const char *name;
	int (*fn)(kvs_t *, const struct opts *);
	const char *help;
	unsigned accepts;
	const char *formats;       /* --format values, '|'-separated */
	const char *usage;         /* the command's own options */
};

/* What a command line asks for. */
struct cli {
	struct opts o;
	const struct command *c;   /* the command to run */
	char *core_joined;         /* -M given more than once: "a,b,c" (o.core) */
};

/* Parse argv (getopt_long: argv is permuted; optind is reset by the
 * caller when parsing again in one process: optind = 0).  -1: run cl->c with
 * cl->o; else the exit status of a line that is answered here (--version,
 * --help, help COMMAND: 0; a usage error: 2, said on stderr and, under
 * --json, as a JSON document on stdout). */
int cli_parse(int argc, char **argv, struct cli *cl);
/* -o FILE's rules (rd, gmon; in cmd_rd.c), checked before anything is
 * read: true, with the reason said on stderr, when path cannot be written:
 * an existing regular file without force, a directory, a socket or block
 * device, a symbolic link to nothing.  A FIFO or character device is
 * written in place; a regular file is replaced atomically (a symbolic
 * link's target, not the link). */
bool output_refused(const char *cmd, const char *path, bool force);

/* What cli_parse allocated. */
void cli_free(struct cli *cl);
/* The command of that name, or NULL. */
const struct command *find_command(const char *name);

#endif
