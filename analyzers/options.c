/*
 * options.c - the kvmstat command line: the commands, their options, the
 * usage, and the parser (cli_parse) that main.c runs before dispatching.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

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
	    NULL, "[-o FILE] [-f]" },
	{ "profile", cmd_profile, "flat kernel profile and top call arcs", A_TOP | A_CSV,
	    NULL, "[--top N] [--csv]" },
	{ "probes", cmd_probes, "DTrace profile-provider probes", A_ALL, NULL, "[--all]" },
	{ "profil", cmd_profil, "processes with profil(2) enabled", 0, NULL, "" },
	{ "slab", cmd_slab, "Linux SLUB caches, as /proc/slabinfo",
	    A_FORMAT | A_PERCPU | A_CSV | A_OBJECTS, "slabinfo|crash",
	    "[--format slabinfo|crash] [--percpu] [--csv] [--objects CACHE]" },
	{ "mem", cmd_mem, "the kernel's memory summary, as /proc/meminfo (FreeBSD: vmstat -s)",
	    A_CSV, NULL, "[--csv]" },
	{ "buddyinfo", cmd_buddyinfo, "the page allocator's free blocks per order, as "
	    "/proc/buddyinfo", A_CSV, NULL, "[--csv]" },
	{ "zoneinfo", cmd_zoneinfo, "the page allocator's zones, as /proc/zoneinfo",
	    A_CSV, NULL, "[--csv]" },
	{ "whatis", cmd_whatis, "what holds each address: slab object (FreeBSD: UMA "
	    "item), page, vmalloc, symbol, stack", A_ARGS, NULL, "ADDR...|-" },
	{ "vmalloc", cmd_vmalloc, "the kernel's vmalloc areas, as /proc/vmallocinfo (Linux)",
	    A_CSV, NULL, "[--csv]" },
	{ "type", cmd_type, "layout of kernel types, as gdb's ptype /o (-N only)",
	    A_ARGS | A_KERNEL_ONLY, NULL, "NAME..." },
	{ "rd", cmd_rd, "memory as 8-byte words and ASCII, as crash's rd",
	    A_ARGS | A_PHYS | A_OUTPUT | A_FORCE, NULL,
	    "[-p] ADDRESS|SYMBOL[+OFF] [COUNT] [-o FILE [-f]]\n"
	    "             (-p physical; COUNT words, default 1; -o writes the raw bytes,\n"
	    "             - for stdout, -f replaces a file)" },
	{ "diff", cmd_diff, "what grew between two dumps (or saved --json outputs)",
	    A_ARGS | A_KERNEL_B | A_NO_HANDLE, NULL,
	    "CORE_A CORE_B [--kernel-b KERNEL]  (-N is CORE_A's kernel)" },
	{ "cache", cmd_cache, "the layout cache: where, what it holds",
	    A_CLEAR | A_NO_HANDLE, NULL, "[--clear]" },
	{ "shell", cmd_shell, "Python with prog bound to the kernel and its helpers, as drgn",
	    A_ARGS | A_NO_HANDLE, NULL, "[SCRIPT [ARG...]]" },
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
	    "  --no-kernel  open the dump for its bytes alone, whatever its kernel: info\n"
	    "               and rd -p work (they fall back to it when -M has no known kernel)\n"
	    "  With neither -M nor -N: the running system (booted kernel, /dev/mem).\n"
	    "\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s%s%s\n", commands[i].name, commands[i].help,
		    commands[i].usage[0] ? "\n             " : "", commands[i].usage);
	fprintf(f, "  help COMMAND  a command's options\n"
	    "  --version    the version of kvmstat\n");
}

const struct command *
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

/* The command being parsed, for usage_error's pointer to its help (set by
 * cli_parse once the command is known; the commands' own usage errors come
 * after it). */
static const struct command *usage_command;

/* A usage error: one line saying why, then one line saying where the usage
 * is (the command's help, or --help); exit status 2.  Under --json the error
 * is a JSON document on stdout as well. */
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
	else if (usage_command != NULL)
		fprintf(stderr, "try 'kvmstat help %s' for its usage\n", usage_command->name);
	else
		fprintf(stderr, "try 'kvmstat --help' for the usage\n");
	return 2;
}

/* `help COMMAND`, `COMMAND --help`: the command's options. */
static void
command_help(const struct command *c)
{
	printf("usage: kvmstat [-M core] [-N kernel] [--raw] [--no-verify] [--json] %s %s\n"
	    "  %s\n", c->name, c->usage, c->help);
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
		{ A_CLEAR, "--clear" }, { A_OBJECTS, "--objects" },
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

/* For a usage error found before the command is known (an unknown option
 * after it: kvmstat malloc --bogus): the command the line names, its
 * options' values skipped, or NULL. */
static const struct command *
named_command(int argc, char **argv, const struct option *longopts)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1 < argc ? find_command(argv[i + 1]) : NULL;
		if (strcmp(a, "-m") == 0 || strcmp(a, "-z") == 0)
			return find_command(a[1] == 'm' ? "malloc" : "zone");
		if (a[0] != '-' || a[1] == '\0')
			return find_command(a);
		if (a[1] == '-') {
			const struct option *lo;
			for (lo = longopts; lo->name != NULL; lo++)
				if (strcmp(a + 2, lo->name) == 0 && lo->has_arg == required_argument)
					i++;            /* --format 14: skip its value */
		} else if (strchr("MNoK", a[1]) != NULL && a[2] == '\0')
			i++;                            /* -M core */
	}
	return NULL;
}

/* `shell SCRIPT ARG...`: where the script's own arguments start (they are
 * the script's, not kvmstat's options), or argc. */
static int
shell_args_start(int argc, char **argv, const struct option *longopts)
{
	int i, cmd = -1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (cmd < 0) {
				if (strcmp(a, "shell") != 0)
					return argc;
				cmd = i;
				continue;
			}
			return i + 1;                   /* the script */
		}
		if (a[1] == '-') {
			const struct option *lo;
			for (lo = longopts; lo->name != NULL; lo++)
				if (strcmp(a + 2, lo->name) == 0 && lo->has_arg == required_argument)
					i++;
		} else if (strchr("MNoK", a[1]) != NULL && a[2] == '\0')
			i++;
	}
	/* after "--": the command word, then the script */
	if (cmd < 0 && i < argc && strcmp(argv[i], "shell") == 0)
		cmd = i++;
	return cmd >= 0 && i < argc ? i + 1 : argc;
}

enum { OPT_JSON = 256, OPT_RAW, OPT_NOVERIFY, OPT_FORMAT, OPT_SORT, OPT_PERCPU,
	OPT_ALL, OPT_TOP, OPT_MODDIR, OPT_VERSION, OPT_DEMO, OPT_CSV, OPT_LIBXO,
	OPT_KERNEL_B, OPT_STATS, OPT_NOCACHE, OPT_CLEAR, OPT_NOKERNEL, OPT_OBJECTS };

int
cli_parse(int argc, char **argv, struct cli *cl)
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
		{ "no-kernel", no_argument, NULL, OPT_NOKERNEL },
		{ "clear", no_argument, NULL, OPT_CLEAR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "demo", no_argument, NULL, OPT_DEMO },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "libxo", no_argument, NULL, OPT_LIBXO },
		{ "kernel-b", required_argument, NULL, OPT_KERNEL_B },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "objects", required_argument, NULL, OPT_OBJECTS },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = NULL, *top_arg = NULL;
	const struct command *c = NULL;
	unsigned given = 0;
	bool help = false, version = false;
	int ch, rc, all_argc = argc;

	usage_command = NULL;
	cl->o = (struct opts){ .top = 20 };
	cl->c = NULL;
	cl->core_joined = NULL;
	/* kvmstat shell SCRIPT ARG...: options after the script are its own. */
	argc = shell_args_start(argc, argv, longopts);
	/* Usage errors are JSON too when --json is anywhere on the line. */
	for (ch = 1; ch < argc; ch++)
		if (strcmp(argv[ch], "--json") == 0)
			cl->o.json = true;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":M:N:mzo:fK:hp", longopts, NULL)) != -1) {
		switch (ch) {
		case 'M':
			/* -M repeated: the parts of one dump (a split kdump). */
			if (cl->o.core != NULL) {
				size_t n = strlen(cl->o.core) + strlen(optarg) + 2;
				char *j = malloc(n);
				if (j == NULL)
					return usage_error(cl->o.json, "out of memory");
				snprintf(j, n, "%s,%s", cl->o.core, optarg);
				free(cl->core_joined);
				cl->o.core = cl->core_joined = j;
			} else
				cl->o.core = optarg;
			break;
		case 'N': cl->o.kernel = optarg; break;
		case 'm':
		case 'z':
			if (cmd != NULL && strcmp(cmd, ch == 'm' ? "malloc" : "zone") != 0)
				return usage_error(cl->o.json, "-m and -z cannot be combined: run "
				    "kvmstat once for each");
			cmd = ch == 'm' ? "malloc" : "zone";
			break;
		case 'o': cl->o.output = optarg; given |= A_OUTPUT; break;
		case 'f': cl->o.force = true; given |= A_FORCE; break;
		case 'p': cl->o.phys = true; given |= A_PHYS; break;
		case OPT_DEMO: cl->o.demo = true; break;
		case OPT_CSV: cl->o.csv = true; given |= A_CSV; break;
		case OPT_LIBXO: cl->o.libxo = true; given |= A_LIBXO; break;
		case OPT_KERNEL_B: cl->o.kernel_b = optarg; given |= A_KERNEL_B; break;
		case 'K':
			if (cl->o.nmodules < (int)(sizeof(cl->o.modules) / sizeof(cl->o.modules[0])))
				cl->o.modules[cl->o.nmodules++] = optarg;
			break;
		case OPT_JSON: cl->o.json = true; break;
		case OPT_RAW: cl->o.open_flags |= KVS_O_RAW; break;
		case OPT_NOVERIFY: cl->o.open_flags |= KVS_O_NOVERIFY; break;
		case OPT_FORMAT: cl->o.format = optarg; given |= A_FORMAT; break;
		case OPT_SORT: cl->o.sort = optarg; given |= A_SORT; break;
		case OPT_PERCPU: cl->o.percpu = true; given |= A_PERCPU; break;
		case OPT_ALL: cl->o.all = true; given |= A_ALL; break;
		case OPT_TOP: top_arg = optarg; cl->o.top = atoi(optarg); given |= A_TOP; break;
		case OPT_MODDIR: cl->o.moddir = optarg; break;
		case OPT_STATS: cl->o.stats = true; given |= A_STATS; break;
		case OPT_NOCACHE: cl->o.open_flags |= KVS_O_NO_CACHE; break;
		case OPT_NOKERNEL: cl->o.open_flags |= KVS_O_FORMAT_ONLY; break;
		case OPT_CLEAR: cl->o.clear = true; given |= A_CLEAR; break;
		case OPT_OBJECTS: cl->o.objects = optarg; given |= A_OBJECTS; break;
		case OPT_VERSION: version = true; break;
		case 'h': help = true; break;
		case ':':
			usage_command = named_command(argc, argv, longopts);
			return usage_error(cl->o.json, "%s needs a value", argv[optind - 1]);
		default:
			usage_command = named_command(argc, argv, longopts);
			if (optopt != 0)
				return usage_error(cl->o.json, "unknown option -%c", optopt);
			return usage_error(cl->o.json, "unknown option %s", argv[optind - 1]);
		}
	}
	/* --version (after the loop: --json may come after it). */
	if (version) {
		if (cl->o.json)
			return emit_version_json(KVS_VERSION);
		printf("kvmstat %s\n", KVS_VERSION);
		return 0;
	}
	if (cmd == NULL && optind < argc)
		cmd = argv[optind++];
	cl->o.argv0 = argv[0];
	cl->o.args = argv + optind;
	cl->o.nargs = all_argc - optind;
	if (cmd != NULL && strcmp(cmd, "help") == 0) {
		if (cl->o.nargs == 0) {
			if (cl->o.json)
				return emit_help_json(NULL, commands, NCOMMANDS);
			usage(stdout);
			return 0;
		}
		if ((c = find_command(cl->o.args[0])) == NULL)
			return usage_error(cl->o.json, "unknown command '%s'", cl->o.args[0]);
		if (cl->o.json)
			return emit_help_json(c, commands, NCOMMANDS);
		command_help(c);
		return 0;
	}
	/* --help: the command's help when one is named (kvmstat malloc --help). */
	if (help) {
		c = cmd != NULL ? find_command(cmd) : NULL;
		if (cl->o.json)
			return emit_help_json(c, commands, NCOMMANDS);
		if (c != NULL)
			command_help(c);
		else
			usage(stdout);
		return 0;
	}
	if (cmd == NULL) {
		/* Nothing to read and nothing to do: the usage, as a usage error.
		 * Given a dump (-M, -N, --demo), info is the default command. */
		if (cl->o.core == NULL && cl->o.kernel == NULL && !cl->o.demo) {
			if (cl->o.json)
				return usage_error(true, "no command given");
			usage(stderr);
			return 2;
		}
		cmd = "info";
	}
	c = find_command(cmd);
	if (c == NULL)
		return usage_error(cl->o.json, "unknown command '%s'", cmd);
	usage_command = c;
	if ((rc = check_options(c, &cl->o, given, top_arg)) != 0)
		return rc;
	if ((cl->o.open_flags & KVS_O_FORMAT_ONLY) &&
	    (cl->o.kernel != NULL || cl->o.demo || cl->o.core == NULL))
		return usage_error(cl->o.json, "--no-kernel opens a dump (-M) for its bytes "
		    "alone: it takes no kernel (-N, --demo)");
	cl->c = c;
	return -1;
}

void
cli_free(struct cli *cl)
{
	free(cl->core_joined);
	cl->core_joined = NULL;
}
