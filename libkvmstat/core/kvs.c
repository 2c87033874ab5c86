/*
 * kvs.c - a handle's life: opening a kernel + memory source into a kvs_t,
 * closing it, and what the handle says of itself (kvs_dumpinfo,
 * kvs_kernel_info, kvs_msgbuf, warnings, walkers' memos).
 *
 * Open sequence:
 *   1. kernel ELF (kernelfile.c: libelf, read-only mmap): its machine picks
 *      the architecture (arch/); symbols now; the types front
 *      (types/types.c) is made, and opens BTF or DWARF on the first type
 *      question;
 *   2. memory source (dumpfile.c): the file is opened O_RDONLY and mapped
 *      whole, then the formats are probed in a fixed order
 *      (source/source.c); a character device is live memory.  Probing reads
 *      headers only, so the cost does not grow with the dump;
 *   3. the kernel families (os/) are probed on the kernel's symbols;
 *   4. translation: what the source carries (a page-table section, a
 *      direct-map window) plus what the OS finds in its kernel (the
 *      page-table root) builds the architecture's translator;
 *   5. the OS checks that kernel and dump belong together, so a dump is
 *      never read through the wrong kernel's layouts.
 * Reads are read.c's; symbols, types and modules image.c's.
 * This file names no architecture, OS or kernel symbol.
 */
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core_internal.h"

/* kvs_dumpinfo's kernel when there is no kernel file. */
#define KERNEL_FROM_DUMP "(none: symbols and types from the dump)"
#define KERNEL_NONE "(none: the dump's bytes alone)"

static void
errbuf_set(char *errbuf, const struct kvs_error *e)
{
	if (errbuf != NULL)
		snprintf(errbuf, KVS_ERRBUF_SIZE, "%s", e->msg);
}

static int
read_phys_cb(void *ctx, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	kvs_t *kd = ctx;

	return kd->src->read_phys(kd->src_priv, pa, buf, len, e);
}

/* KVS_O_KERNEL_ONLY on an ELF file no OS claims (a test object, a
 * userland program): its types still answer; nothing else does. */
static int
noos_ok(kvs_t *kd)
{
	(void)kd;
	return 0;
}

static int
noos_info(kvs_t *kd, struct kvs_kernelinfo *ki)
{
	(void)kd;
	(void)ki;
	return 0;
}

static int
noos_memstat(struct memory_type_list *list, kvs_t *kd)
{
	(void)list;
	return kerr_set(&kd->err, KVS_E_INVAL, "%s: not a kernel of a known "
	    "operating system", kd->kernel_path);
}

static const struct kvs_os_ops os_unknown = {
	.name = "unknown",
	.probe = noos_ok,
	.verify = noos_ok,
	.kernel_info = noos_info,
	.memstat_all = noos_memstat,
};

/* Which kernel family: the first OS whose probe claims the kernel. */
static int
find_os(kvs_t *kd)
{
	size_t i;

	for (i = 0; i < kvs_os_count; i++)
		if (kvs_os_table[i]->probe(kd) == 0) {
			kd->os = kvs_os_table[i];
			return 0;
		}
	return kerr_set(&kd->err, KVS_E_FORMAT, "kernel %s: not a kernel of a known "
	    "operating system", kd->kernel_path);
}

/*
 * No kernel file: the families that can find their kernel in memory alone
 * (os->probe_dump) are asked; the first that claims the dump names the
 * architecture, and will load the symbols when attached.
 */
static int
find_os_in_dump(kvs_t *kd)
{
	unsigned machine = 0;
	char why[256] = "";
	size_t i, n;

	kd->src->info(kd->src_priv, &kd->info);
	for (i = 0; i < kvs_os_count; i++) {
		int rc;
		if (kvs_os_table[i]->probe_dump == NULL)
			continue;
		kd->os = kvs_os_table[i];
		rc = kd->os->probe_dump(kd, &machine);
		if (rc == 0) {
			if ((kd->arch = kvs_arch_find(machine)) != NULL)
				return 0;
			return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: a %s kernel of "
			    "machine %u, which no architecture here reads", kd->core_path,
			    kd->os->name, machine);
		}
		kd->os = NULL;
		if (rc != KVS_NOTMINE)
			return kerr_push(&kd->err, "dump %s", kd->core_path);
		/* the family's reason, if it gave one, joins the message */
		n = strlen(why);
		if (kvs_geterr(kd)[0] != '\0' && n + 3 < sizeof(why))
			snprintf(why + n, sizeof(why) - n, "%s%s", n ? "; " : "", kvs_geterr(kd));
		kerr_clear(&kd->err);
	}
	kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: no kernel file given (-N), and "
	    "the dump does not say which kernel it holds%s%s%s", kd->core_path,
	    why[0] ? " (" : "", why, why[0] ? ")" : "");
	return KVS_NOTMINE;
}

/* A dump that says its machine must be of the kernel's: each side named. */
static int
machine_check(kvs_t *kd, const char *core)
{
	const struct kvs_arch_ops *da;

	if (kd->info.machine == 0 || kd->arch == NULL ||
	    kd->info.machine == kd->arch->elf_machine)
		return 0;
	da = kvs_arch_find(kd->info.machine);
	return kerr_set(&kd->err, KVS_E_MISMATCH, "dump %s is of %s (machine %u), but the "
	    "kernel %s is of %s (machine %u)", core, da != NULL ? da->name : "another machine",
	    kd->info.machine, kd->kernel_path != NULL ? kd->kernel_path : "found in it",
	    kd->arch->name, kd->arch->elf_machine);
}

/* What the source carries, then what the OS finds in its kernel. */
static int
setup_translation(kvs_t *kd)
{
	struct kvs_xlat_params p = {
		.read_phys = read_phys_cb,
		.ctx = kd,
		.pt = kd->info.pt,
		.pt_entries = kd->info.pt_entries,
		.pt_level = kd->info.pt_level,
		.pt_base = kd->info.pt_base,
	};

	if (kd->info.pt != NULL) {
		p.direct_base = kd->info.direct_base;
		p.direct_end = kd->info.direct_end;
		p.direct_phys = kd->info.direct_phys;
	}
	if (kd->os->xlat_setup(kd, &p) != 0)
		return -1;
	return kd->arch->create(&kd->arch_priv, &p, &kd->err);
}

/*
 * The types front's view of the kernel's memory: where the OS says the
 * kernel keeps its BTF, and reads.  The handle's error is the caller's
 * business: these report to e and leave it as it was.
 */
static int
types_btf_where(void *arg, uint64_t *kva, uint64_t *len, struct kvs_error *e)
{
	kvs_t *kd = arg;
	struct kvs_error saved = kd->err, got;
	int rc;

	if (kd->os == NULL || kd->os->memory_btf == NULL || kd->src == NULL ||
	    kd->src == &kvs_source_nomem)
		return 1;
	rc = kd->os->memory_btf(kd, kva, len);
	got = kd->err;
	kd->err = saved;
	if (rc < 0)
		*e = got;
	return rc;
}

static int
types_read(void *arg, uint64_t kva, void *buf, size_t len, struct kvs_error *e)
{
	kvs_t *kd = arg;
	struct kvs_error saved = kd->err, got;
	int rc = kvs_read(kd, kva, buf, len);

	got = kd->err;
	kd->err = saved;
	if (rc != 0)
		*e = got;
	return rc;
}

/* The handle's types front, once the kernel file (if any) and its
 * kernel.debug are known.  Nothing is read before the first question. */
static int
make_types(kvs_t *kd)
{
	struct kvs_types_config c = {
		.kelf = kd->elf, .kfd = kd->kernel_fd, .kernel_path = kd->kernel_path,
		.delf = kd->debug_elf, .dfd = kd->debug_fd,
		.file_mapped = true,    /* kvs_open_elf maps with ELF_C_READ_MMAP */
		.progress = (kd->flags & KVS_O_PROGRESS) != 0,
		.no_cache = (kd->flags & KVS_O_NO_CACHE) != 0,
		.note = &kd->note,
		.btf_where = types_btf_where, .read = types_read, .arg = kd,
	};

	if ((kd->types = kvs_types_new(&c)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	return 0;
}

/*
 * A dump without a kernel: the kernels each OS family installs (os/) are
 * tried, and one is taken when the dump's version string is its own, which
 * the OS's verify checks; its DWARF then comes from /usr/lib/debug as for
 * any kernel.  Without verification (KVS_O_NOVERIFY) nothing says which
 * kernel a dump is of.
 */
static kvs_t *
open_installed(const char *core, int flags, char *errbuf, kvs_status_t *status)
{
	char path[4096], first[4096] = "", why[KVS_ERRBUF_SIZE] = "", err[KVS_ERRBUF_SIZE];
	kvs_status_t st;
	size_t i, k;

	if (flags & KVS_O_NOVERIFY) {
		*status = KVS_E_INVAL;
		if (errbuf != NULL)
			snprintf(errbuf, KVS_ERRBUF_SIZE, "no kernel file given (-N) for dump %.600s: the "
			    "installed one is taken only when it is checked against the dump "
			    "(give the kernel, or do not skip the check)", core);
		return NULL;
	}
	for (k = 0; k < kvs_os_count; k++)
		for (i = 0; kvs_os_table[k]->installed != NULL &&
		    kvs_os_table[k]->installed[i] != NULL; i++) {
			kvs_t *kd;

			snprintf(path, sizeof(path), "%s%s", kvs_system_root(),
			    kvs_os_table[k]->installed[i]);
			if (first[0] == '\0')
				snprintf(first, sizeof(first), "%s", path);
			if (access(path, F_OK) != 0)
				continue;
			if ((kd = kvs_open_status(path, core, flags, err, &st)) != NULL)
				return kd;
			if (why[0] == '\0') {
				snprintf(why, sizeof(why), "%s", err);
				*status = st;
			}
		}
	if (errbuf != NULL) {
		snprintf(path, sizeof(path), "%s", first);
		if (why[0] != '\0')
			snprintf(errbuf, KVS_ERRBUF_SIZE, "no kernel file given (-N) for dump %.300s, and "
			    "the installed one does not fit it: %.600s", core, why);
		else
			snprintf(errbuf, KVS_ERRBUF_SIZE, "no kernel file given (-N) for dump %.300s, and "
			    "none is installed (%.600s)", core, path);
	}
	return NULL;
}

kvs_t *
kvs_open(const char *kernel, const char *core, int flags, char *errbuf)
{
	return kvs_open_status(kernel, core, flags, errbuf, NULL);
}

kvs_t *
kvs_open_status(const char *kernel, const char *core, int flags, char *errbuf,
    kvs_status_t *statusp)
{
	bool core_defaulted = false, tried_default = false, try_installed = false;
	kvs_status_t dummy;
	kvs_t *kd, *ikd;
	int rc;

	if (statusp == NULL)
		statusp = &dummy;
	*statusp = KVS_OK;
	if (errbuf != NULL)
		errbuf[0] = '\0';
	if (kernel == NULL && (flags & KVS_O_KERNEL_ONLY)) {
		*statusp = KVS_E_INVAL;
		if (errbuf != NULL)
			snprintf(errbuf, KVS_ERRBUF_SIZE, "no kernel given");
		return NULL;
	}
	if (flags & KVS_O_KERNEL_ONLY)
		core = "(no dump)";
	else if (core == NULL) {
		core = "/dev/mem";
		core_defaulted = true;
	}
	kd = calloc(1, sizeof(*kd));
	if (kd == NULL) {
		*statusp = KVS_E_NOMEM;
		if (errbuf != NULL)
			snprintf(errbuf, KVS_ERRBUF_SIZE, "out of memory");
		return NULL;
	}
	kd->kernel_fd = kd->core_fd = kd->debug_fd = -1;
	kd->flags = flags;
	kd->kernel_path = strdup(kernel != NULL ? kernel : (flags & KVS_O_FORMAT_ONLY) ?
	    KERNEL_NONE : KERNEL_FROM_DUMP);
	kd->core_path = strdup(core);
	if (kd->kernel_path == NULL || kd->core_path == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		goto fail;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		kerr_set(&kd->err, KVS_E_DWARF, "libelf: %s", elf_errmsg(-1));
		goto fail;
	}
	if (flags & KVS_O_FORMAT_ONLY) {
		/* The dump's bytes alone: no kernel, no architecture. */
		if (kernel != NULL) {
			kerr_set(&kd->err, KVS_E_INVAL, "a format-only open (KVS_O_FORMAT_ONLY, "
			    "--no-kernel) takes no kernel file (%s given)", kernel);
			goto fail;
		}
		if (make_types(kd) != 0 || kvs_open_dump(kd, core, flags) != 0)
			goto fail;
		kd->os = &os_unknown;
		kd->src->info(kd->src_priv, &kd->info);
		return kd;
	}
	if (kernel == NULL) {
		if (make_types(kd) != 0 || kvs_open_dump(kd, core, flags) != 0)
			goto fail;
		/* A dump that does not name its kernel (FreeBSD's): the
		 * installed kernel, as vmstat takes it, if the dump verifies. */
		if ((rc = find_os_in_dump(kd)) != 0) {
			try_installed = rc == KVS_NOTMINE;
			goto fail;
		}
		goto opened;
	}
	if (kvs_open_elf(kernel, &kd->kernel_fd, &kd->elf, &kd->arch, &kd->err) != 0)
		goto fail;
	if (kvs_symtab_load(&kd->syms, kd->elf, &kd->err) != 0) {
		kerr_push(&kd->err, "kernel %s", kernel);
		goto fail;
	}
	kvs_find_debug_file(kd);
	if (make_types(kd) != 0)
		goto fail;
	if (flags & KVS_O_KERNEL_ONLY) {
		if (find_os(kd) != 0) {
			kerr_clear(&kd->err);
			kd->os = &os_unknown;
		}
		kd->src = &kvs_source_nomem;
		kd->src_priv = kd;
		kd->src->info(kd->src_priv, &kd->info);
		return kd;
	}
	if (find_os(kd) != 0)
		goto fail;
	tried_default = core_defaulted;
	if (kvs_open_dump(kd, core, flags) != 0)
		goto fail;
	kd->src->info(kd->src_priv, &kd->info);
opened:
	if (machine_check(kd, core) != 0)
		goto fail;
	if (kd->os->attach != NULL && kd->os->attach(kd) != 0) {
		kerr_push(&kd->err, "dump %s", core);
		goto fail;
	}
	if (kd->info.virtual_only && kd->src->read_virt == NULL) {
		kerr_set(&kd->err, KVS_E_FORMAT, "dump %s holds no physical memory", core);
		goto fail;
	}
	if (!kd->info.virtual_only && setup_translation(kd) != 0) {
		kerr_push(&kd->err, "dump %s", core);
		goto fail;
	}
	if (!(flags & KVS_O_NOVERIFY) && kd->os->verify(kd) != 0) {
		if (kd->err.status != KVS_E_MISMATCH)
			kd->err.status = KVS_E_MISMATCH;
		kerr_push(&kd->err, "%s with %s", core, kernel);
		goto fail;
	}
	return kd;
fail:
	if (tried_default)
		kerr_push(&kd->err, "no dump given (-M), so live memory, %s, was tried", core);
	errbuf_set(errbuf, &kd->err);
	*statusp = kd->err.status != KVS_OK ? kd->err.status : KVS_E_INVAL;
	kvs_close(kd);
	if (!try_installed)
		return NULL;
	if ((ikd = open_installed(core, flags, errbuf, statusp)) != NULL)
		*statusp = KVS_OK;
	return ikd;
}

void
kvs_close(kvs_t *kd)
{
	if (kd == NULL)
		return;
	kvs_types_free(kd->types, true);     /* before the modules it asks */
	kvs_modules_close(kd);
	if (kd->os != NULL && kd->os->close != NULL)
		kd->os->close(kd);
	if (kd->arch_priv != NULL)
		kd->arch->destroy(kd->arch_priv);
	if (kd->src != NULL)
		kd->src->close(kd->src_priv);
	if (kd->map != NULL)
		munmap((void *)kd->map, kd->map_len);
	for (unsigned i = 0; i < kd->nparts; i++) {
		if (kd->parts[i].map != NULL)
			munmap((void *)kd->parts[i].map, kd->parts[i].len);
		close(kd->parts[i].fd);
	}
	if (kd->core_fd >= 0)
		close(kd->core_fd);
	kvs_symtab_free(kd->syms);
	for (unsigned i = 0; i < KVS_NMEMO; i++) {
		if (kd->memo[i].p != NULL && kd->memo[i].fini != NULL)
			kd->memo[i].fini(kd->memo[i].p);
		free(kd->memo[i].p);
	}
	if (kd->debug_elf != NULL)
		elf_end(kd->debug_elf);
	if (kd->debug_fd >= 0)
		close(kd->debug_fd);
	if (kd->elf != NULL)
		elf_end(kd->elf);
	if (kd->kernel_fd >= 0)
		close(kd->kernel_fd);
	free(kd->kernel_path);
	free(kd->core_path);
	free(kd);
}

/*
 * How many distinct nodes of node_size bytes a dump can hold: a list walk
 * that allocates per node stops there (and at cap), so a corrupt list costs
 * memory in proportion to the dump, not to what its pointers claim.  Live
 * memory has no such size: cap.
 */
uint64_t
kvs_dump_bound(const kvs_t *kd, uint64_t node_size, uint64_t cap)
{
	uint64_t bytes = kd->info.source_bytes, b;

	if (kd->info.dumped_pages > bytes / (kd->info.page_size ? kd->info.page_size : 4096))
		bytes = kd->info.dumped_pages * (kd->info.page_size ? kd->info.page_size : 4096);
	if (kd->info.live || bytes == 0 || node_size == 0)
		return cap;
	b = bytes / node_size + 1;
	return b < cap ? b : cap;
}

void *
kvs_memo(kvs_t *kd, const void *tag, size_t size)
{
	unsigned i;

	for (i = 0; i < KVS_NMEMO && kd->memo[i].tag != NULL; i++)
		if (kd->memo[i].tag == tag)
			return kd->memo[i].p;
	if (i == KVS_NMEMO || (kd->memo[i].p = calloc(1, size ? size : 1)) == NULL)
		return NULL;
	kd->memo[i].tag = tag;
	return kd->memo[i].p;
}

void *
kvs_memo_fini(kvs_t *kd, const void *tag, size_t size, void (*fini)(void *p))
{
	void *p = kvs_memo(kd, tag, size);
	unsigned i;

	for (i = 0; p != NULL && i < KVS_NMEMO; i++)
		if (kd->memo[i].tag == tag)
			kd->memo[i].fini = fini;
	return p;
}

/* --------------------------------------------------------------- info */

int
kvs_dumpinfo(kvs_t *kd, struct kvs_dumpinfo *di)
{
	ENTER(kd);
	memset(di, 0, sizeof(*di));
	di->format = kd->info.format;
	di->format_version = kd->info.format_version;
	di->page_size = kd->info.page_size;
	kvs_check_shrunk(kd);    /* counting may read the dump's mapped bitmap */
	di->dumped_pages = kd->src->dumped_pages != NULL && !kd->shrunk ?
	    kd->src->dumped_pages(kd->src_priv) : kd->info.dumped_pages;
	di->source_bytes = kd->info.source_bytes;
	di->live = kd->info.live;
	di->path = kd->core_path;
	di->kernel = kd->kernel_path;
	di->dwarf_version = kvs_types_dwarf_version(kd->types);
	kerr_clear(&kd->err);
	return 0;
}

int
kvs_dump_cache_stats(kvs_t *kd, uint64_t *hits, uint64_t *misses)
{
	struct kvs_src_info si;

	ENTER(kd);
	kd->src->info(kd->src_priv, &si);
	*hits = si.cache_hits;
	*misses = si.cache_misses;
	return 0;
}

int
kvs_kernel_info(kvs_t *kd, struct kvs_kernelinfo *ki)
{
	ENTER(kd);
	memset(ki, 0, sizeof(*ki));
	ki->ncpus = ki->maxid = -1;
	ki->os = kd->os->name;
	ki->arch = kd->arch != NULL ? kd->arch->name : NULL;
	return kd->os->kernel_info(kd, ki);
}

int
kvs_msgbuf(kvs_t *kd, char **text, size_t *len)
{
	ENTER(kd);
	*text = NULL;
	*len = 0;
	if (kd->os->msgbuf == NULL)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no message buffer for %s kernels",
		    kd->os->name);
	kvs_check_shrunk(kd);    /* the buffer may be the dump's own copy, mapped */
	if (kd->shrunk)
		return kvs_shrunk_error(kd);
	return kd->os->msgbuf(kd, text, len);
}

/* ----------------------------------------------------------- warnings */

void
kvs_warn(kvs_t *kd, const char *fmt, ...)
{
	va_list ap;

	if (kd->nwarn++ == 0) {
		va_start(ap, fmt);
		vsnprintf(kd->warn, sizeof(kd->warn), fmt, ap);
		va_end(ap);
		kd->warn_lost = false;
	}
}

void
kvs_warn_lost(kvs_t *kd, const char *fmt, ...)
{
	va_list ap;

	if (kd->nwarn++ == 0 || !kd->warn_lost) {
		va_start(ap, fmt);
		vsnprintf(kd->warn, sizeof(kd->warn), fmt, ap);
		va_end(ap);
		kd->warn_lost = true;
	}
}

void
kvs_set_notify(kvs_t *kd, kvs_notify_fn fn, void *arg)
{
	kd->note.fn = fn;
	kd->note.arg = arg;
	kd->note.custom = true;
}

unsigned
kvs_warnings(const kvs_t *kd, const char **first)
{
	if (first != NULL)
		*first = kd->nwarn ? kd->warn : NULL;
	return kd->nwarn;
}