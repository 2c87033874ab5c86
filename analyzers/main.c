/*
 * main.c - the kvmstat command: option parsing and dispatch.
 *
 *   kvmstat [-M core] [-N kernel] [--raw] [--json] command [options]
 *
 * With neither -M nor -N it reads the running system as vmstat does (the
 * booted kernel and live memory) or says what is missing; --demo opens the
 * bundled demo dump, found beside the program or in its data directory.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include "sysdefault.h"

#ifndef KVS_DEMO_DIR
#define KVS_DEMO_DIR "/usr/local/share/kvmstat/demo"
#endif

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
};

struct command {
	const char *name;
	int (*fn)(kvs_t *, const struct opts *);
	const char *help;
	unsigned accepts;
	const char *formats;       /* --format values, '|'-separated */
	const char *usage;         /* the command's own options */
};

static const struct command commands[] = {
	{ "info", cmd_info, "dump format, kernel version, panic string, CPUs", A_STATS, NULL,
	    "[--stats]" },
	{ "dmesg", cmd_dmesg, "kernel message buffer", 0, NULL, "" },
	{ "malloc", cmd_malloc, "malloc(9) types, as vmstat -m (alias -m)",
	    A_FORMAT | A_SORT | A_PERCPU | A_CSV | A_LIBXO, "5|6|14",
	    "[--format 5|6|14] [--sort name|inuse|memuse|requests] [--percpu] [--csv]\n"
	    "             [--json [--libxo]]" },
	{ "zone", cmd_zone, "UMA zones, as vmstat -z (alias -z)",
	    A_FORMAT | A_PERCPU | A_CSV | A_LIBXO, "12|14|15",
	    "[--format 12|14|15] [--percpu] [--csv] [--json [--libxo]]" },
	{ "gmon", cmd_gmon, "write the kernel gprof data as gmon.out", A_OUTPUT | A_FORCE,
	    NULL, "-o FILE [-f]" },
	{ "profile", cmd_profile, "flat kernel profile and top call arcs", A_TOP | A_CSV,
	    NULL, "[--top N] [--csv]" },
	{ "probes", cmd_probes, "DTrace profile-provider probes", A_ALL, NULL, "[--all]" },
	{ "profil", cmd_profil, "processes with profil(2) enabled", 0, NULL, "" },
	{ "slab", cmd_slab, "Linux SLUB caches, as /proc/slabinfo",
	    A_FORMAT | A_PERCPU | A_CSV, "slabinfo|crash",
	    "[--format slabinfo|crash] [--percpu] [--csv]" },
	{ "type", cmd_type, "layout of kernel types, as gdb's ptype /o (-N only)",
	    A_ARGS | A_KERNEL_ONLY, NULL, "NAME..." },
	{ "rd", cmd_rd, "memory as 8-byte words and ASCII, as crash's rd",
	    A_ARGS | A_PHYS | A_OUTPUT, NULL,
	    "[-p] ADDRESS|SYMBOL[+OFF] [COUNT] [-o FILE]\n"
	    "             (-p physical; COUNT words, default 1; -o writes the raw bytes)" },
	{ "diff", cmd_diff, "what grew between two dumps (or saved --json outputs)",
	    A_ARGS | A_KERNEL_B | A_NO_HANDLE, NULL,
	    "CORE_A CORE_B [--kernel-b KERNEL]  (-N is CORE_A's kernel)" },
	{ "cache", cmd_cache, "the layout cache: where, what it holds",
	    A_CLEAR | A_NO_HANDLE, NULL, "[--clear]" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: kvmstat [-M core] [-N kernel] [--raw] [--json] command [options]\n"
	    "\n"
	    "  -M core      crash dump, raw physical image, or /dev/mem (live)\n"
	    "  -N kernel    kernel ELF with symbols (DWARF inside or in kernel.debug);\n"
	    "               with -M alone: the dump's own kallsyms and BTF (Linux), else\n"
	    "               /boot/kernel/kernel if the dump's version is its own\n"
	    "  --raw        treat the core as a raw physical-memory image\n"
	    "  --no-verify  do not check that the kernel matches the dump\n"
	    "  --json       machine-readable output (schema kvmstat/1, docs/json.md)\n"
	    "  --demo       the bundled demo dump (a FreeBSD 14 minidump)\n"
	    "  -K file.ko   a kernel module whose symbols/types to use (repeatable)\n"
	    "  --module-dir DIR  every loaded module found in DIR\n"
	    "  --no-cache   neither read nor write the layout cache\n"
	    "  With neither -M nor -N: the running system (booted kernel, /dev/mem).\n"
	    "\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s%s%s\n", commands[i].name, commands[i].help,
		    commands[i].usage[0] ? "\n             " : "", commands[i].usage);
	fprintf(f, "  help COMMAND  a command's options\n"
	    "  --version    the version of kvmstat\n");
}

static const struct command *
find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* An error document under --json: {"schema", "error": {"code", "message"}}
 * on stdout. */
void
json_error(const char *code, const char *msg)
{
	char clean[2048];
	json_t *root = json_object(), *e = json_object();
	char *text;

	json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
	json_object_set_new(e, "code", json_string(code));
	json_object_set_new(e, "message", json_string(sanitize(clean, sizeof(clean), msg,
	    strlen(msg), true)));
	json_object_set_new(root, "error", e);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text != NULL)
		printf("%s\n", text);
	free(text);
	json_decref(root);
}

/* A run-time failure before any command ran: the message, exit status 1. */
static int
fail_json(bool json, const char *code, const char *msg)
{
	fprintf(stderr, "kvmstat: %s\n", msg);
	if (json)
		json_error(code, msg);
	return 1;
}

/* A usage error: one line saying why, then the usage; exit status 2.  Under
 * --json the error is a JSON document on stdout as well. */
int
usage_error(bool json, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kvmstat: %s\n", msg);
	if (json)
		json_error("usage", msg);
	else
		usage(stderr);
	return 2;
}

static bool
in_list(const char *v, const char *list)
{
	size_t n = strlen(v);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		if (l == n && strncmp(p, v, n) == 0)
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

/* Options given that the command does not take, and values it would not
 * understand, are errors rather than silently ignored. */
static int
check_options(const struct command *c, const struct opts *o, unsigned given,
    const char *top_arg)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ A_FORMAT, "--format" }, { A_SORT, "--sort" }, { A_PERCPU, "--percpu" },
		{ A_ALL, "--all" }, { A_TOP, "--top" }, { A_OUTPUT, "-o" }, { A_FORCE, "-f" },
		{ A_PHYS, "-p" }, { A_CSV, "--csv" }, { A_LIBXO, "--libxo" },
		{ A_KERNEL_B, "--kernel-b" },
		{ A_CLEAR, "--clear" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((given & names[i].bit) && !(c->accepts & names[i].bit))
			return usage_error(o->json, "%s does not take %s", c->name, names[i].name);
	if (o->format != NULL && !in_list(o->format, c->formats))
		return usage_error(o->json, "%s --format must be one of %s, not '%s'", c->name,
		    c->formats, o->format);
	if (o->sort != NULL && !in_list(o->sort, "name|inuse|count|memuse|requests"))
		return usage_error(o->json, "%s --sort must be one of name, inuse, memuse, "
		    "requests, not '%s'", c->name, o->sort);
	if (top_arg != NULL) {
		char *end;
		long v = strtol(top_arg, &end, 10);
		if (*top_arg == '\0' || *end != '\0' || v <= 0 || v > 1000000)
			return usage_error(o->json, "--top takes a positive number, not '%s'",
			    top_arg);
	}
	if (o->nargs > 0 && !(c->accepts & A_ARGS))
		return usage_error(o->json, "%s takes no argument '%s'", c->name, o->args[0]);
	if (o->csv && o->json)
		return usage_error(o->json, "--csv and --json cannot be combined");
	if (o->libxo && !o->json)
		return usage_error(o->json, "--libxo goes with --json");
	if (o->demo && (o->core != NULL || o->kernel != NULL))
		return usage_error(o->json, "--demo cannot be combined with -M or -N");
	return 0;
}

kvs_t *
open_handle(const struct opts *o)
{
	char errbuf[KVS_ERRBUF_SIZE], clean[4 * KVS_ERRBUF_SIZE];
	kvs_t *kd;

	kd = kvs_open(o->kernel, o->core, o->open_flags, errbuf);
	if (kd == NULL) {
		fprintf(stderr, "kvmstat: %s\n", sanitize(clean, sizeof(clean), errbuf,
		    strlen(errbuf), false));
		if (o->json)
			json_error("open", errbuf);
	}
	return kd;
}

/*
 * Modules named with -K, or every loaded one in --module-dir.  For `probes`
 * with neither, the kernel's own directory is tried, as /boot/kernel holds
 * both the kernel and its modules.
 */
static int
add_modules(kvs_t *kd, const struct opts *o, bool want)
{
	char dir[4096], clean[4 * KVS_ERRBUF_SIZE];
	int i;

	for (i = 0; i < o->nmodules; i++)
		if (kvs_add_module(kd, o->modules[i]) < 0)
			goto fail;
	if (o->moddir != NULL) {
		if (kvs_add_module_dir(kd, o->moddir) < 0)
			goto fail;
	} else if (want && o->nmodules == 0) {
		struct kvs_dumpinfo di;
		const char *k = o->kernel, *slash;
		if (k == NULL && kvs_dumpinfo(kd, &di) == 0)
			k = di.kernel;          /* the installed kernel, taken by default */
		slash = k != NULL ? strrchr(k, '/') : NULL;
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - k) : 1,
		    slash ? k : ".");
		(void)kvs_add_module_dir(kd, dir);
	}
	return 0;
fail:
	fprintf(stderr, "kvmstat: %s\n", sanitize(clean, sizeof(clean), kvs_geterr(kd),
	    strlen(kvs_geterr(kd)), false));
	return -1;
}

enum { OPT_JSON = 256, OPT_RAW, OPT_NOVERIFY, OPT_FORMAT, OPT_SORT, OPT_PERCPU,
	OPT_ALL, OPT_TOP, OPT_MODDIR, OPT_VERSION, OPT_DEMO, OPT_CSV, OPT_LIBXO,
	OPT_KERNEL_B, OPT_STATS, OPT_NOCACHE, OPT_CLEAR };

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "no-verify", no_argument, NULL, OPT_NOVERIFY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "percpu", no_argument, NULL, OPT_PERCPU },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "module-dir", required_argument, NULL, OPT_MODDIR },
		{ "no-cache", no_argument, NULL, OPT_NOCACHE },
		{ "clear", no_argument, NULL, OPT_CLEAR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "demo", no_argument, NULL, OPT_DEMO },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "libxo", no_argument, NULL, OPT_LIBXO },
		{ "kernel-b", required_argument, NULL, OPT_KERNEL_B },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .top = 20 };
	char demo_kernel[4096], demo_core[4096], sys_kernel[4096];
	const char *cmd = NULL, *top_arg = NULL;
	const struct command *c = NULL;
	unsigned given = 0;
	kvs_t *kd;
	int ch, rc;

	/* Usage errors are JSON too when --json is anywhere on the line. */
	for (ch = 1; ch < argc; ch++)
		if (strcmp(argv[ch], "--json") == 0)
			o.json = true;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":M:N:mzo:fK:hp", longopts, NULL)) != -1) {
		switch (ch) {
		case 'M':
			/* -M repeated: the parts of one dump (a split kdump). */
			if (o.core != NULL) {
				size_t n = strlen(o.core) + strlen(optarg) + 2;
				char *j = malloc(n);
				if (j == NULL)
					return usage_error(o.json, "out of memory");
				snprintf(j, n, "%s,%s", o.core, optarg);
				o.core = j;     /* lives as long as the process */
			} else
				o.core = optarg;
			break;
		case 'N': o.kernel = optarg; break;
		case 'm':
		case 'z':
			if (cmd != NULL && strcmp(cmd, ch == 'm' ? "malloc" : "zone") != 0)
				return usage_error(o.json, "-m and -z cannot be combined: run "
				    "kvmstat once for each");
			cmd = ch == 'm' ? "malloc" : "zone";
			break;
		case 'o': o.output = optarg; given |= A_OUTPUT; break;
		case 'f': o.force = true; given |= A_FORCE; break;
		case 'p': o.phys = true; given |= A_PHYS; break;
		case OPT_DEMO: o.demo = true; break;
		case OPT_CSV: o.csv = true; given |= A_CSV; break;
		case OPT_LIBXO: o.libxo = true; given |= A_LIBXO; break;
		case OPT_KERNEL_B: o.kernel_b = optarg; given |= A_KERNEL_B; break;
		case 'K':
			if (o.nmodules < (int)(sizeof(o.modules) / sizeof(o.modules[0])))
				o.modules[o.nmodules++] = optarg;
			break;
		case OPT_JSON: o.json = true; break;
		case OPT_RAW: o.open_flags |= KVS_O_RAW; break;
		case OPT_NOVERIFY: o.open_flags |= KVS_O_NOVERIFY; break;
		case OPT_FORMAT: o.format = optarg; given |= A_FORMAT; break;
		case OPT_SORT: o.sort = optarg; given |= A_SORT; break;
		case OPT_PERCPU: o.percpu = true; given |= A_PERCPU; break;
		case OPT_ALL: o.all = true; given |= A_ALL; break;
		case OPT_TOP: top_arg = optarg; o.top = atoi(optarg); given |= A_TOP; break;
		case OPT_MODDIR: o.moddir = optarg; break;
		case OPT_STATS: o.stats = true; given |= A_STATS; break;
		case OPT_NOCACHE: o.open_flags |= KVS_O_NO_CACHE; break;
		case OPT_CLEAR: o.clear = true; given |= A_CLEAR; break;
		case OPT_VERSION: printf("kvmstat %s\n", KVS_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		case ':':
			return usage_error(o.json, "%s needs a value", argv[optind - 1]);
		default:
			if (optopt != 0)
				return usage_error(o.json, "unknown option -%c", optopt);
			return usage_error(o.json, "unknown option %s", argv[optind - 1]);
		}
	}
	if (cmd == NULL && optind < argc)
		cmd = argv[optind++];
	if (cmd == NULL)
		cmd = "info";
	o.argv0 = argv[0];
	o.args = argv + optind;
	o.nargs = argc - optind;
	if (strcmp(cmd, "help") == 0) {
		if (o.nargs == 0) {
			usage(stdout);
			return 0;
		}
		if ((c = find_command(o.args[0])) == NULL)
			return usage_error(o.json, "unknown command '%s'", o.args[0]);
		printf("usage: kvmstat [-M core] [-N kernel] [--raw] [--no-verify] [--json] %s %s\n"
		    "  %s\n", c->name, c->usage, c->help);
		return 0;
	}
	c = find_command(cmd);
	if (c == NULL)
		return usage_error(o.json, "unknown command '%s'", cmd);
	if ((rc = check_options(c, &o, given, top_arg)) != 0)
		return rc;
	if (c->accepts & A_NO_HANDLE)
		return c->fn(NULL, &o);
	o.open_flags |= KVS_O_PROGRESS;
	if (o.demo) {
		if (sys_demo_paths(argv[0], KVS_DEMO_DIR, demo_kernel, demo_core,
		    sizeof(demo_kernel)) != 0)
			return fail_json(o.json, "demo", demo_kernel);
		o.kernel = demo_kernel;
		o.core = demo_core;
	} else if (o.kernel == NULL && o.core == NULL) {
		/* As vmstat: the booted kernel and the live memory device (the
		 * library's default core).  -M alone keeps no kernel: the library
		 * takes the dump's own symbols and types where it has them (Linux),
		 * else the installed kernel if the dump verifies against it. */
		if (sys_default_kernel(sys_kernel, sizeof(sys_kernel)) != 0)
			return fail_json(o.json, "open", sys_kernel);
		o.kernel = sys_kernel;
	}
	/* -M alone: the dump's own symbols and types (a Linux dump with
	 * VMCOREINFO); a kernel-only command then reads them from the dump. */
	if ((c->accepts & A_KERNEL_ONLY) && o.kernel != NULL)
		o.open_flags |= KVS_O_KERNEL_ONLY;
	kd = open_handle(&o);
	if (kd == NULL)
		return 1;
	if (add_modules(kd, &o, strcmp(c->name, "probes") == 0) != 0) {
		kvs_close(kd);
		return 1;
	}
	rc = c->fn(kd, &o);
	kvs_close(kd);
	return rc;
}
