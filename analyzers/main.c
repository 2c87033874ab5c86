/*
 * main.c - the kvmstat command: dispatch (the options: options.c).
 *
 *   kvmstat [-M core] [-N kernel] [--raw] [--json] command [options]
 *
 * With neither -M nor -N it reads the running system as vmstat does (the
 * booted kernel and live memory) or says what is missing; --demo opens the
 * bundled demo dump, found beside the program or in its data directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

#include "sysdefault.h"

#ifndef KVS_DEMO_DIR
#define KVS_DEMO_DIR "/usr/local/share/kvmstat/demo"
#endif

/* A run-time failure before any command ran: the message, exit status 1. */
static int
fail_json(bool json, const char *code, const char *msg)
{
	fprintf(stderr, "kvmstat: %s\n", msg);
	if (json)
		json_error(code, msg);
	return 1;
}

kvs_t *
open_handle(const struct opts *o)
{
	char errbuf[KVS_ERRBUF_SIZE], clean[4 * KVS_ERRBUF_SIZE];
	kvs_t *kd;

	kd = kvs_open(o->kernel, o->core, o->open_flags, errbuf);
	if (kd == NULL) {
		/* The library names its open flags, "(KVS_O_RAW)": the command's
		 * user knows the option (--raw) the message names already. */
		char *flag;
		while ((flag = strstr(errbuf, " (KVS_O_")) != NULL) {
			char *close = strchr(flag, ')');
			if (close == NULL)
				break;
			memmove(flag, close + 1, strlen(close + 1) + 1);
		}
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

/*
 * Every command's output goes to stdout through stdio: a write that failed
 * (a full disk, /dev/full, a closed pipe's EPIPE) is said here, once, and
 * the exit status is 1.  werrno is errno as the command left it: the commands
 * end with fflush(stdout), so when stdout's error flag is already set it is
 * that flush's reason.
 */
static int
check_stdout(int rc, int werrno)
{
	if (fflush(stdout) != 0)
		werrno = errno;
	else if (!ferror(stdout))
		return rc;
	if (werrno != 0)
		fprintf(stderr, "kvmstat: writing standard output: %s\n", strerror(werrno));
	else
		fprintf(stderr, "kvmstat: writing standard output failed\n");
	return rc != 0 ? rc : 1;
}

static int run(int argc, char **argv);

int
main(int argc, char **argv)
{
	int rc;

	errno = 0;
	rc = run(argc, argv);
	return check_stdout(rc, errno);
}

static int
run(int argc, char **argv)
{
	struct cli cl;
	struct opts o;
	char demo_kernel[4096], demo_core[4096], sys_kernel[4096];
	const struct command *c;
	kvs_t *kd;
	int rc, werrno;

	/* cl.core_joined (a repeated -M) lives as long as the process. */
	if ((rc = cli_parse(argc, argv, &cl)) >= 0)
		return rc;
	o = cl.o;
	c = cl.c;
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
	/* info and rd -p need no kernel: a dump whose kernel is not known (no
	 * -N, none found in it or installed) is opened for its bytes alone. */
	if (o.kernel == NULL && o.core != NULL && !(o.open_flags & KVS_O_FORMAT_ONLY) &&
	    (strcmp(c->name, "info") == 0 || (strcmp(c->name, "rd") == 0 && o.phys))) {
		char errbuf[KVS_ERRBUF_SIZE], clean[4 * KVS_ERRBUF_SIZE];
		if ((kd = kvs_open(NULL, o.core, o.open_flags, errbuf)) == NULL &&
		    (kd = kvs_open(NULL, o.core, o.open_flags | KVS_O_FORMAT_ONLY,
		    NULL)) != NULL)
			fprintf(stderr, "kvmstat: no kernel for this dump (%s): its bytes "
			    "alone are read\n", sanitize(clean, sizeof(clean), errbuf,
			    strlen(errbuf), false));
	} else
		kd = NULL;
	if (kd == NULL && (kd = open_handle(&o)) == NULL)
		return 1;
	if (add_modules(kd, &o, strcmp(c->name, "probes") == 0) != 0) {
		kvs_close(kd);
		return 1;
	}
	rc = c->fn(kd, &o);
	werrno = errno;             /* for check_stdout: kvs_close may set errno */
	kvs_close(kd);
	errno = werrno;
	return rc;
}
