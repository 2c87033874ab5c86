/*
 * kvs.c - opening a kernel + memory source into a kvs_t, and the public
 * read / symbol / type / kernel-description entry points.
 *
 * Open sequence:
 *   1. kernel ELF (libelf, read-only mmap): its machine picks the
 *      architecture (arch/); symbols now, types (BTF, then DWARF) lazily;
 *   2. memory source: the file is opened O_RDONLY and mapped whole, then the
 *      formats are probed in a fixed order (source/source.c); a character
 *      device is live memory.  Probing reads headers only, so the
 *      cost does not grow with the dump;
 *   3. the kernel families (os/) are probed on the kernel's symbols;
 *   4. translation: what the source carries (a page-table section, a
 *      direct-map window) plus what the OS finds in its kernel (the
 *      page-table root) builds the architecture's translator;
 *   5. the OS checks that kernel and dump belong together, so a dump is
 *      never read through the wrong kernel's layouts.
 * This file names no architecture, OS or kernel symbol.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvs_private.h"

/* kvs_dumpinfo's kernel when there is no kernel file. */
#define KERNEL_FROM_DUMP "(none: symbols and types from the dump)"

/* Public entry points start from a clean error. */
#define ENTER(kd) kerr_clear(&(kd)->err)

static void
errbuf_set(char *errbuf, const struct kvs_error *e)
{
	if (errbuf != NULL)
		snprintf(errbuf, KVS_ERRBUF_SIZE, "%s", e->msg);
}

static bool
elf_has_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name != NULL && strcmp(name, want) == 0)
			return true;
	}
	return false;
}

/*
 * Open a file that must be a regular one (a kernel, a module) read-only.
 * O_NONBLOCK first, so a FIFO or a terminal given by mistake is refused at
 * once instead of blocking the open until a writer comes; cleared after.
 */
int
kvs_open_regular(const char *path, const char *what, struct stat *st, struct kvs_error *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return kerr_errno(e, errno, "%s %s", what, path);
	if (fstat(fd, st) != 0) {
		kerr_errno(e, errno, "%s %s", what, path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return kerr_set(e, KVS_E_FORMAT, "%s %s: not a regular file (%s)", what, path,
		    S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a FIFO" :
		    S_ISCHR(st->st_mode) ? "a character device" :
		    S_ISBLK(st->st_mode) ? "a block device" :
		    S_ISSOCK(st->st_mode) ? "a socket" : "not a plain file");
	}
	(void)fcntl(fd, F_SETFL, 0);
	return fd;
}

static int
open_elf(const char *path, int *fdp, Elf **elfp, const struct kvs_arch_ops **archp,
    struct kvs_error *e)
{
	char names[64];
	GElf_Ehdr eh;
	struct stat st;
	Elf *elf;
	int fd;

	fd = kvs_open_regular(path, "kernel", &st, e);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &eh) == NULL) {
		if (elf != NULL)
			elf_end(elf);
		close(fd);
		return kerr_set(e, KVS_E_FORMAT, "kernel %s: not an ELF file", path);
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || kvs_arch_find(eh.e_machine) == NULL ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		elf_end(elf);
		close(fd);
		kvs_arch_names(names, sizeof(names));
		return kerr_set(e, KVS_E_FORMAT, "kernel %s: not an %s kernel "
		    "executable (class %d, machine %d, type %d)", path, names,
		    eh.e_ident[EI_CLASS], eh.e_machine, eh.e_type);
	}
	*fdp = fd;
	*elfp = elf;
	if (archp != NULL)
		*archp = kvs_arch_find(eh.e_machine);
	return 0;
}

/*
 * Where the system's files are: "" (the root), or $KVS_DEBUG_ROOT, a
 * directory laid out like one (/boot, /usr/lib/debug), which the tests use.
 */
static const char *
system_root(void)
{
	const char *r = getenv("KVS_DEBUG_ROOT");

	return r != NULL ? r : "";
}

/*
 * A stripped kernel keeps its DWARF in kernel.debug: beside it as
 * "<kernel>.debug", or under <root>/usr/lib/debug with the kernel's path
 * below the root (/boot/kernel/kernel ->
 * /usr/lib/debug/boot/kernel/kernel.debug).
 */
static void
find_debug_file(kvs_t *kd)
{
	char cand[2][4096], abs[4096], root[4096] = "";
	const char *rel;
	int i;

	if (elf_has_section(kd->elf, ".debug_info"))
		return;
	snprintf(cand[0], sizeof(cand[0]), "%s.debug", kd->kernel_path);
	/* The kernel's path from the root, so a relative -N works too. */
	if (realpath(kd->kernel_path, abs) == NULL)
		snprintf(abs, sizeof(abs), "%s", kd->kernel_path);
	if (system_root()[0] != '\0' && realpath(system_root(), root) == NULL)
		root[0] = '\0';
	rel = abs;
	if (root[0] != '\0' && strncmp(abs, root, strlen(root)) == 0 &&
	    abs[strlen(root)] == '/')
		rel = abs + strlen(root);
	if (snprintf(cand[1], sizeof(cand[1]), "%s/usr/lib/debug%s.debug", root, rel) >=
	    (int)sizeof(cand[1]))
		cand[1][0] = '\0';
	for (i = 0; i < 2; i++) {
		struct kvs_error tmp;
		int fd;
		Elf *elf;

		kerr_clear(&tmp);
		if (access(cand[i], R_OK) != 0 || open_elf(cand[i], &fd, &elf, NULL, &tmp) != 0)
			continue;
		if (elf_has_section(elf, ".debug_info")) {
			kd->debug_fd = fd;
			kd->debug_elf = elf;
			return;
		}
		elf_end(elf);
		close(fd);
	}
}

static int
read_phys_cb(void *ctx, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	kvs_t *kd = ctx;

	return kd->src->read_phys(kd->src_priv, pa, buf, len, e);
}

/*
 * A character device is read as live physical memory, but the ones that
 * only look like files are no memory: /dev/null reads nothing, /dev/zero
 * zeros everywhere (a page-table root of 0, blamed on the kernel).  They
 * are told apart by their device numbers, asked of the host's own nodes.
 */
static int
not_memory_device(kvs_t *kd, const struct stat *st, const char *core)
{
	static const char *const nodes[] = {
		"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
		"/dev/tty", "/dev/console", "/dev/ptmx",
	};
	struct stat ns;
	size_t i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (stat(nodes[i], &ns) == 0 && S_ISCHR(ns.st_mode) && ns.st_rdev == st->st_rdev)
			return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: is the device %s, "
			    "not memory (live memory is /dev/mem)", core, nodes[i]);
	return 0;
}

/*
 * The further files of a dump given in parts ("a,b,c", as a split kdump's
 * files are): each opened and mapped as the first, then handed to the
 * source, which must know how to join them.
 */
static int
open_parts(kvs_t *kd, const char *list, int flags)
{
	const char *p = list;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		struct kvs_open_args a = { .flags = flags };
		struct kvs_part *pt;
		struct stat st;
		char path[4096];
		void *map;

		if (n == 0 || n >= sizeof(path))
			return kerr_set(&kd->err, KVS_E_INVAL, "dump %s: an empty or overlong "
			    "name in the list of parts", list);
		memcpy(path, p, n);
		path[n] = '\0';
		p += n + (p[n] == ',');
		if (kd->src->add_part == NULL)
			return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: a %s dump is one file, "
			    "not parts (%s)", list, kd->src->name, path);
		if (kd->nparts == KVS_MAX_PARTS)
			return kerr_set(&kd->err, KVS_E_INVAL, "dump %s: more than %d parts", list,
			    KVS_MAX_PARTS);
		pt = &kd->parts[kd->nparts];
		pt->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (pt->fd < 0)
			return kerr_errno(&kd->err, errno, "dump part %s", path);
		kd->nparts++;
		if (fstat(pt->fd, &st) != 0)
			return kerr_errno(&kd->err, errno, "dump part %s", path);
		if (!S_ISREG(st.st_mode) || st.st_size == 0)
			return kerr_set(&kd->err, KVS_E_FORMAT, "dump part %s: not a regular file, "
			    "or empty", path);
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, pt->fd, 0);
		if (map == MAP_FAILED)
			return kerr_errno(&kd->err, errno, "dump part %s: mmap", path);
		pt->map = map;
		pt->len = (uint64_t)st.st_size;
		a.path = path;
		a.fd = pt->fd;
		a.st = &st;
		a.map = pt->map;
		a.map_len = pt->len;
		if (kd->src->add_part(kd->src_priv, &a, &kd->err) != 0)
			return kerr_push(&kd->err, "dump part %s", path);
	}
	return 0;
}

/* The view of a file that cannot be mapped: pread, all of len or an error
 * naming the offset. */
static int
pread_view(void *priv, uint64_t off, void *buf, size_t len, struct kvs_error *e)
{
	kvs_t *kd = priv;
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(kd->core_fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return kerr_errno(e, n == 0 ? EIO : errno, "reading offset 0x%llx",
			    (unsigned long long)off);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int
open_source(kvs_t *kd, const char *core, int flags)
{
	struct kvs_open_args a = { .path = core, .flags = flags };
	struct stat st;
	size_t i;
	void *map;
	char first[4096];
	const char *rest = NULL;
	int map_errno;

	/* "a,b,c": the parts of one dump (a file whose name has commas is
	 * taken whole). */
	if (strchr(core, ',') != NULL && access(core, F_OK) != 0) {
		size_t n = strcspn(core, ",");
		if (n == 0 || n >= sizeof(first))
			return kerr_set(&kd->err, KVS_E_INVAL, "dump %s: an empty or overlong "
			    "name in the list of parts", core);
		memcpy(first, core, n);
		first[n] = '\0';
		rest = core + n + 1;
		core = first;
		a.path = core;
	}

	kd->core_fd = open(core, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (kd->core_fd < 0)
		return kerr_errno(&kd->err, errno, "dump %s", core);
	if (fstat(kd->core_fd, &st) != 0)
		return kerr_errno(&kd->err, errno, "dump %s", core);
	a.fd = kd->core_fd;
	a.st = &st;
	if (S_ISDIR(st.st_mode))
		return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: is a directory", core);
	if (S_ISCHR(st.st_mode)) {
		if (not_memory_device(kd, &st, core) != 0)
			return -1;
		kd->src = &kvs_source_devmem;
		if (kd->src->open(&a, &kd->src_priv, &kd->err) != 0) {
			kd->src = NULL;
			return kerr_push(&kd->err, "dump %s", core);
		}
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: not a regular file "
		    "or memory device (FIFO, socket or block device)", core);
	if (st.st_size == 0)
		return kerr_set(&kd->err, KVS_E_TRUNCATED, "dump %s: empty file", core);
	/* Clear O_NONBLOCK now that we know it is a plain file. */
	(void)fcntl(kd->core_fd, F_SETFL, 0);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, kd->core_fd, 0);
	/* A file that cannot be mapped (/proc/kcore: no mmap, and a size past
	 * the address space) goes to the formats that read with pread (map
	 * NULL, map_len its size). */
	map_errno = map == MAP_FAILED ? errno : 0;
	kd->map = map == MAP_FAILED ? NULL : map;
	kd->map_len = kd->map != NULL ? (uint64_t)st.st_size : 0;
	a.map = kd->map;
	a.map_len = kd->map_len;
	if (kd->map == NULL) {
		/* Read through a view instead, live: such files (procfs) are. */
		kd->fileview = (struct kvs_view){ .priv = kd, .size = (uint64_t)st.st_size,
		    .layer = "pread", .live = true, .read = pread_view };
		a.view = &kd->fileview;
	}

	if ((flags & KVS_O_RAW) && kd->map == NULL)
		return kerr_errno(&kd->err, map_errno, "dump %s: mmap", core);
	if (flags & KVS_O_RAW) {
		/* A compressed raw image: the layer opens raw inside. */
		int rc = kvs_source_compressed.open(&a, &kd->src_priv, &kd->err);
		if (rc != KVS_NOTMINE) {
			if (rc != 0)
				return kerr_push(&kd->err, "dump %s", core);
			kd->src = &kvs_source_compressed;
			return 0;
		}
		/* A dump format read as raw memory gives errors about page tables
		 * and the kernel, none about the real cause: say it. */
		for (i = 0; i < kvs_source_count; i++) {
			void *priv;
			struct kvs_error tmp;

			kerr_clear(&tmp);
			if (kvs_source_table[i] == &kvs_source_raw ||
			    kvs_source_table[i]->open(&a, &priv, &tmp) != 0)
				continue;
			kvs_source_table[i]->close(priv);
			return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s is in the %s dump format, "
			    "not a raw memory image: open it without --raw (KVS_O_RAW)", core,
			    kvs_source_table[i]->name);
		}
		kd->src = &kvs_source_raw;
		if (kd->src->open(&a, &kd->src_priv, &kd->err) != 0) {
			kd->src = NULL;
			return kerr_push(&kd->err, "dump %s", core);
		}
		return 0;
	}
	for (i = 0; i < kvs_source_count; i++) {
		int rc = kvs_source_table[i]->open(&a, &kd->src_priv, &kd->err);
		if (rc == KVS_NOTMINE)
			continue;
		if (rc != 0 && kvs_source_table[i] == &kvs_source_raw)
			return kerr_push(&kd->err, "dump %s", core);  /* the last resort's no */
		if (rc != 0)
			return kerr_push(&kd->err, "dump %s (%s)", core, kvs_source_table[i]->name);
		kd->src = kvs_source_table[i];
		return rest != NULL ? open_parts(kd, rest, flags) : 0;
	}
	if (map_errno != 0)
		return kerr_errno(&kd->err, map_errno, "dump %s: mmap (only ELF cores are read "
		    "without it)", core);
	return kerr_set(&kd->err, KVS_E_FORMAT, "dump %s: unrecognised format", core);
}

/*
 * KVS_O_KERNEL_ONLY: no dump.  A source that holds nothing stands in for
 * one, so that every read path (kvs_read, kvs_read_phys, the OS layer's
 * own reads) fails with the same message instead of meeting a NULL source.
 */
static int
nomem_read(void *priv, uint64_t addr, void *buf, size_t len, struct kvs_error *e)
{
	const kvs_t *kd = priv;

	(void)buf;
	(void)len;
	e->fault_valid = true;
	e->fault_addr = addr;
	return kerr_set(e, KVS_E_INVAL, "no memory: kernel %s opened without a "
	    "dump (KVS_O_KERNEL_ONLY)", kd->kernel_path);
}

static void
nomem_info(void *priv, struct kvs_src_info *out)
{
	(void)priv;
	memset(out, 0, sizeof(*out));
	out->format = "none";
	out->page_size = 4096;
	out->virtual_only = true;
}

static void
nomem_close(void *priv)
{
	(void)priv;
}

static const struct kvs_source_ops source_nomem = {
	.name = "none",
	.read_phys = nomem_read,
	.read_virt = nomem_read,
	.info = nomem_info,
	.close = nomem_close,
};

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
	}
	if (kd->os->xlat_setup(kd, &p) != 0)
		return -1;
	return kd->arch->create(&kd->arch_priv, &p, &kd->err);
}

/* A NUL-terminated string of the kernel file's initialised data at addr
 * (what the image holds before it runs).  0, or -1 if addr is not in an
 * allocated PROGBITS section. */
int
kvs_kernel_file_string(kvs_t *kd, uint64_t addr, char *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (kd->elf == NULL)
		return -1;
	while ((scn = elf_nextscn(kd->elf, scn)) != NULL) {
		Elf_Data *d;
		uint64_t off;
		size_t n;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || addr < sh.sh_addr ||
		    addr >= sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		off = addr - sh.sh_addr;
		if (d == NULL || d->d_buf == NULL || off >= d->d_size)
			return -1;
		n = d->d_size - off < len - 1 ? d->d_size - off : len - 1;
		memcpy(buf, (const char *)d->d_buf + off, n);
		buf[n] = '\0';
		return 0;
	}
	return -1;
}

/*
 * A dump without a kernel: the kernels each OS family installs (os/) are
 * tried, and one is taken when the dump's version string is its own, which
 * the OS's verify checks; its DWARF then comes from /usr/lib/debug as for
 * any kernel.  Without verification (KVS_O_NOVERIFY) nothing says which
 * kernel a dump is of.
 */
static kvs_t *
open_installed(const char *core, int flags, char *errbuf)
{
	char path[4096], first[4096] = "", why[KVS_ERRBUF_SIZE] = "", err[KVS_ERRBUF_SIZE];
	size_t i, k;

	if (flags & KVS_O_NOVERIFY) {
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

			snprintf(path, sizeof(path), "%s%s", system_root(),
			    kvs_os_table[k]->installed[i]);
			if (first[0] == '\0')
				snprintf(first, sizeof(first), "%s", path);
			if (access(path, F_OK) != 0)
				continue;
			if ((kd = kvs_open(path, core, flags, err)) != NULL)
				return kd;
			if (why[0] == '\0')
				snprintf(why, sizeof(why), "%s", err);
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
	bool core_defaulted = false, tried_default = false, try_installed = false;
	kvs_t *kd;
	int rc;

	if (errbuf != NULL)
		errbuf[0] = '\0';
	if (kernel == NULL && (flags & KVS_O_KERNEL_ONLY)) {
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
		if (errbuf != NULL)
			snprintf(errbuf, KVS_ERRBUF_SIZE, "out of memory");
		return NULL;
	}
	kd->kernel_fd = kd->core_fd = kd->debug_fd = -1;
	kd->flags = flags;
	kd->kernel_path = strdup(kernel != NULL ? kernel : KERNEL_FROM_DUMP);
	kd->core_path = strdup(core);
	if (kd->kernel_path == NULL || kd->core_path == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		goto fail;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		kerr_set(&kd->err, KVS_E_DWARF, "libelf: %s", elf_errmsg(-1));
		goto fail;
	}
	if (kernel == NULL) {
		if (open_source(kd, core, flags) != 0)
			goto fail;
		/* A dump that does not name its kernel (FreeBSD's): the
		 * installed kernel, as vmstat takes it, if the dump verifies. */
		if ((rc = find_os_in_dump(kd)) != 0) {
			try_installed = rc == KVS_NOTMINE;
			goto fail;
		}
		goto opened;
	}
	if (open_elf(kernel, &kd->kernel_fd, &kd->elf, &kd->arch, &kd->err) != 0)
		goto fail;
	if (kvs_symtab_load(&kd->syms, kd->elf, &kd->err) != 0) {
		kerr_push(&kd->err, "kernel %s", kernel);
		goto fail;
	}
	find_debug_file(kd);
	if (flags & KVS_O_KERNEL_ONLY) {
		if (find_os(kd) != 0) {
			kerr_clear(&kd->err);
			kd->os = &os_unknown;
		}
		kd->src = &source_nomem;
		kd->src_priv = kd;
		kd->src->info(kd->src_priv, &kd->info);
		return kd;
	}
	if (find_os(kd) != 0)
		goto fail;
	tried_default = core_defaulted;
	if (open_source(kd, core, flags) != 0)
		goto fail;
	kd->src->info(kd->src_priv, &kd->info);
opened:
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
	kvs_close(kd);
	return try_installed ? open_installed(core, flags, errbuf) : NULL;
}

void
kvs_close(kvs_t *kd)
{
	if (kd == NULL)
		return;
	kvs_lcache_close(kd->lcache, true);
	if (kd->dwarf != NULL)
		kvs_dwarf_close(kd->dwarf);
	kvs_btf_close(kd->btf);
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
	for (unsigned i = 0; i < KVS_NMEMO; i++)
		free(kd->memo[i].p);
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

/* ------------------------------------------------------------ reading */

/*
 * A dump file cut short while a handle has it mapped (a copy being
 * rewritten, a full disk's cleanup): every page past the new end raises
 * SIGBUS when touched.  One fstat per walk (and per message-buffer read)
 * notices it; a source that can read what is left says so by having a
 * refresh op (raw), the others then read nothing more and each read fails
 * with shrunk_error, which the walkers turn into a failed refresh over the
 * last good values.  A file cut in the middle of a walk is not covered.
 */
static void
check_shrunk(kvs_t *kd)
{
	struct stat st;

	if (kd->map == NULL || kd->src == NULL || kd->src->refresh != NULL ||
	    fstat(kd->core_fd, &st) != 0 || st.st_size < 0)
		return;
	kd->shrunk = (uint64_t)st.st_size < kd->map_len;
	kd->shrunk_to = (uint64_t)st.st_size;
	if (kd->shrunk)
		kd->peek_host = NULL;
}

static int
shrunk_error(kvs_t *kd)
{
	return kerr_set(&kd->err, KVS_E_TRUNCATED, "dump %s: the file shrank from "
	    "%llu to %llu bytes while open; nothing more is read from it",
	    kd->core_path, (unsigned long long)kd->map_len,
	    (unsigned long long)kd->shrunk_to);
}

int
kvs_kvtop(kvs_t *kd, uint64_t kva, uint64_t *pa)
{
	ENTER(kd);
	if (kd->src == &source_nomem)
		return nomem_read(kd, kva, NULL, 0, &kd->err);
	if (kd->shrunk)
		return shrunk_error(kd);
	if (kd->arch_priv == NULL)
		return kerr_set(&kd->err, KVS_E_UNMAPPED, "dump %s holds virtual addresses "
		    "only: no physical address for 0x%llx", kd->core_path, (unsigned long long)kva);
	return kd->arch->kvtop(kd->arch_priv, kva, pa, NULL, NULL, &kd->err);
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

void
kvs_tlb_flush(kvs_t *kd)
{
	memset(kd->tlb, 0, sizeof(kd->tlb));
	kd->peek_host = NULL;
	if (kd->src->refresh != NULL)
		kd->src->refresh(kd->src_priv);
	check_shrunk(kd);
}

/* A translation the cache does not hold: the architecture walks the page
 * tables, and the page found fills its slot (a large page the one for its
 * 1 GiB frame).  Out of line, so that the hits below stay small. */
static __attribute__((noinline)) int
translate_miss(kvs_t *kd, uint64_t va, uint64_t *pa, uint64_t *run)
{
	uint64_t sz = 0;

	if (kd->arch->kvtop(kd->arch_priv, va, pa, run, &sz, &kd->err) != 0)
		return -1;
	if (sz != 0) {
		struct kvs_tlbe *e = sz >= (1ULL << 21) ? &kd->tlb[(va >> 30) & 63] :
		    &kd->tlb[(va >> 12 ^ va >> 21) & 63];
		e->va = va & ~(sz - 1);
		e->pa = *pa - (va & (sz - 1));
		e->size = sz;
	}
	return 0;
}

/* Translate through the cache; a large page fills one entry for all of it.
 * The slot is chosen by the 2 MiB frame so 4 KiB neighbours spread out and
 * a 1 GiB page sits in one slot.  An empty slot (size 0) matches nothing. */
static inline int
translate(kvs_t *kd, uint64_t va, uint64_t *pa, uint64_t *run)
{
	const struct kvs_tlbe *t = &kd->tlb[(va >> 12 ^ va >> 21) & 63];

	if (va - t->va >= t->size) {
		t = &kd->tlb[(va >> 30) & 63];
		if (t->size < (1ULL << 21) || va - t->va >= t->size)
			return translate_miss(kd, va, pa, run);
	}
	*pa = t->pa + (va - t->va);
	*run = t->size - (va - t->va);
	return 0;
}

/* Read without clearing the error first (for internal callers too). */
static int
read_kva(kvs_t *kd, uint64_t kva, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t va = kva;
	size_t total = len;

	if (kd->shrunk)
		return shrunk_error(kd);
	if (kd->info.virtual_only) {
		if (kd->src->read_virt(kd->src_priv, kva, buf, len, &kd->err) == 0)
			return 0;
		return kerr_push(&kd->err, "reading %zu bytes at 0x%llx", total,
		    (unsigned long long)kva);
	}
	while (len > 0) {
		uint64_t pa, run;
		size_t n;

		if (translate(kd, va, &pa, &run) != 0 ||
		    kd->src->read_phys(kd->src_priv, pa, p, n = (size_t)(len < run ? len : run),
		    &kd->err) != 0) {
			/* Report the virtual address that faulted. */
			kd->err.fault_valid = true;
			kd->err.fault_addr = va;
			return kerr_push(&kd->err, "reading %zu bytes at 0x%llx", total,
			    (unsigned long long)kva);
		}
		p += n;
		va += n;
		len -= n;
	}
	return 0;
}

/* A peek that is not within the last page peeked: translated, and its
 * page remembered when the whole of it lies in the mapping (walkers peek
 * neighbouring objects one after another). */
static __attribute__((noinline)) const void *
peek_miss(kvs_t *kd, uint64_t kva, size_t len)
{
	uint64_t pa, run, off = kva & 4095;
	const uint8_t *page;

	if (kd->shrunk || kd->info.virtual_only || kd->src->map_phys == NULL ||
	    translate(kd, kva, &pa, &run) != 0) {
		kerr_clear(&kd->err);
		return NULL;
	}
	if (run >= 4096 - off && (page = kd->src->map_phys(kd->src_priv, pa - off, 4096)) != NULL) {
		kd->peek_vpn = kva >> 12;
		kd->peek_host = page;
		if (len <= 4096 - off)
			return page + off;
	}
	return len <= run ? kd->src->map_phys(kd->src_priv, pa, len) : NULL;
}

const void *
kvs_peek(kvs_t *kd, uint64_t kva, size_t len)
{
	if (kd->peek_host != NULL && kva >> 12 == kd->peek_vpn && len <= 4096 - (kva & 4095))
		return kd->peek_host + (kva & 4095);
	return peek_miss(kd, kva, len);
}

int
kvs_read(kvs_t *kd, uint64_t kva, void *buf, size_t len)
{
	ENTER(kd);
	return read_kva(kd, kva, buf, len);
}

int
kvs_phys_read(kvs_t *kd, uint64_t pa, void *buf, size_t len)
{
	if (kd->shrunk)
		return shrunk_error(kd);
	return kd->src->read_phys(kd->src_priv, pa, buf, len, &kd->err);
}

int
kvs_read_phys(kvs_t *kd, uint64_t pa, void *buf, size_t len)
{
	ENTER(kd);
	if (kd->shrunk)
		return shrunk_error(kd);
	if (kd->src->read_phys(kd->src_priv, pa, buf, len, &kd->err) != 0)
		return kerr_push(&kd->err, "reading %zu bytes at physical 0x%llx", len,
		    (unsigned long long)pa);
	return 0;
}

ssize_t
kvs_read_string(kvs_t *kd, uint64_t kva, char *buf, size_t maxlen, int *truncated)
{
	size_t got = 0;

	ENTER(kd);
	if (truncated != NULL)
		*truncated = 0;
	if (maxlen == 0)
		return kerr_set(&kd->err, KVS_E_INVAL, "string buffer of size 0");
	/* Page-sized steps: never touch the page after the terminator. */
	while (got < maxlen - 1) {
		uint64_t va = kva + got;
		uint64_t pg = kd->arch->page_size;
		size_t chunk = (size_t)(pg - (va & (pg - 1)));
		char *nul;

		if (chunk > maxlen - 1 - got)
			chunk = maxlen - 1 - got;
		if (read_kva(kd, va, buf + got, chunk) != 0) {
			buf[got] = '\0';
			return kerr_push(&kd->err, "reading string at 0x%llx",
			    (unsigned long long)kva);
		}
		nul = memchr(buf + got, '\0', chunk);
		if (nul != NULL)
			return nul - buf;
		got += chunk;
	}
	buf[maxlen - 1] = '\0';
	if (truncated != NULL)
		*truncated = 1;
	return (ssize_t)(maxlen - 1);
}

/* ------------------------------------------------------------- errors */

const char *
kvs_geterr(const kvs_t *kd)
{
	return kd->err.msg;
}

kvs_status_t
kvs_errstatus(const kvs_t *kd)
{
	return kd->err.status;
}

uint64_t
kvs_fault_addr(const kvs_t *kd, int *valid)
{
	if (valid != NULL)
		*valid = kd->err.fault_valid;
	return kd->err.fault_valid ? kd->err.fault_addr : 0;
}

/* ------------------------------------------------------------ symbols */

int
kvs_symbol(kvs_t *kd, const char *name, uint64_t *addr, uint64_t *size)
{
	unsigned i;

	ENTER(kd);
	if (kvs_symtab_lookup(kd->syms, name, addr, size, &kd->err) == 0) {
		if (addr != NULL)
			*addr = kvs_slide(kd, *addr);
		return 0;
	}
	/* Then the modules, in the order they were added. */
	for (i = 0; i < kd->nmods; i++)
		if (kvs_symtab_lookup(kd->mods[i].syms, name, addr, size, &kd->err) == 0) {
			kerr_clear(&kd->err);
			return 0;
		}
	return -1;
}

int
kvs_symbol_next(kvs_t *kd, uint64_t addr, uint64_t *next)
{
	if (kd->slide != 0 && addr - kd->slide >= kd->slide_min &&
	    kvs_symtab_next(kd->syms, addr - kd->slide, next) == 0) {
		*next += kd->slide;
		return 0;
	}
	return kvs_symtab_next(kd->syms, addr, next);
}

const char *
kvs_symbol_at(kvs_t *kd, uint64_t addr, uint64_t *off)
{
	const char *s;
	unsigned i;

	ENTER(kd);
	if (kd->slide != 0 && addr - kd->slide >= kd->slide_min &&
	    (s = kvs_symtab_at(kd->syms, addr - kd->slide, off)) != NULL)
		return s;
	if ((s = kvs_symtab_at(kd->syms, addr, off)) != NULL)
		return s;
	for (i = 0; i < kd->nmods; i++)
		if (addr - kd->mods[i].base < kd->mods[i].size)
			return kvs_symtab_at(kd->mods[i].syms, addr, off);
	return NULL;
}

/* -------------------------------------------------------------- types */

/*
 * The kernel file's BTF (or its kernel.debug's), opened on first use: NULL
 * if there is none (kernels built without BTF), if it cannot be parsed (DWARF then
 * answers everything, as before), or if the environment says KVS_TYPES=dwarf
 * (DWARF alone: to compare the two, or to sidestep a BTF problem).
 */
static bool
dwarf_only(kvs_t *kd)
{
	if (kd->types_mode == 0) {
		const char *env = getenv("KVS_TYPES");
		kd->types_mode = env != NULL && strcmp(env, "dwarf") == 0 ? 2 : 1;
	}
	return kd->types_mode == 2;
}

static struct kvs_btf *
need_btf(kvs_t *kd)
{
	struct kvs_error e;

	if (kd->btf_tried)
		return kd->btf;
	kd->btf_tried = true;
	if (dwarf_only(kd))
		return NULL;
	kerr_clear(&e);
	if (kd->elf != NULL && kvs_btf_open_elf(&kd->btf, kd->elf, &e) == 1 &&
	    kd->debug_elf != NULL)
		(void)kvs_btf_open_elf(&kd->btf, kd->debug_elf, &e);
	/* No kernel file, or one with no types at all: the memory's own. */
	if (kd->btf == NULL && kd->os != NULL && kd->os->memory_btf != NULL &&
	    kd->src != NULL && kd->src != &source_nomem && (kd->elf == NULL ||
	    (kd->debug_elf == NULL && !elf_has_section(kd->elf, ".debug_info")))) {
		struct kvs_error saved = kd->err;
		if (kd->os->memory_btf(kd, &kd->btf) != 0)
			kd->btf = NULL;
		kd->err = saved;
	}
	return kd->btf;
}

static int
need_dwarf(kvs_t *kd)
{
	if (kd->dwarf != NULL)
		return 0;
	if (kd->dwarf_tried)
		return kerr_set(&kd->err, KVS_E_DWARF, "no usable DWARF for kernel %s",
		    kd->kernel_path);
	kd->dwarf_tried = true;
	if (kd->elf == NULL)
		return kerr_set(&kd->err, KVS_E_DWARF, "no DWARF: no kernel file given (-N), "
		    "and the dump's own types (BTF) do not have this");
	if (kvs_dwarf_open(&kd->dwarf, kd->debug_elf ? kd->debug_elf : kd->elf,
	    &kd->err) != 0) {
		kd->dwarf = NULL;
		return kerr_push(&kd->err, "kernel %s", kd->kernel_path);
	}
	/* both ELF handles are ELF_C_READ_MMAP (open_elf) */
	kvs_dwarf_set_opts(kd->dwarf, true, (kd->flags & KVS_O_PROGRESS) != 0);
	return 0;
}

/*
 * Type queries: the kernel's BTF first when it has one (milliseconds, where
 * indexing a vmlinux's DWARF takes seconds), then the kernel's DWARF, then
 * each module's (a module's private structures, dtrace_probe_t say, exist
 * only in its own debug information).  Only "not found" falls through to
 * the next source.  BTF and DWARF give the same answers (types/btf.c); BTF
 * lacks most variables, which DWARF then answers.
 */
enum tq { TQ_TYPE, TQ_MEMBER, TQ_VARIABLE };

/* One question to BTF (bt) or, when bt is NULL, to DWARF (d). */
static int
one_query(struct kvs_btf *bt, struct kvs_dwarf *d, enum tq q, const char *a,
    const char *b, struct kvs_typeinfo *ti, struct kvs_error *e)
{
	switch (q) {
	case TQ_TYPE:
		return bt != NULL ? kvs_btf_type(bt, a, ti, e) : kvs_dwarf_type(d, a, ti, e);
	case TQ_MEMBER:
		return bt != NULL ? kvs_btf_member(bt, a, b, ti, e) :
		    kvs_dwarf_member(d, a, b, ti, e);
	default:
		return bt != NULL ? kvs_btf_variable(bt, a, ti, e) :
		    kvs_dwarf_variable(d, a, ti, e);
	}
}

/*
 * The layout cache, opened on the first type question: NULL when the
 * caller or the environment turned it off (KVS_O_NO_CACHE, KVS_NO_CACHE=1)
 * or there is no cache directory.  It stands before the kernel's own BTF
 * and DWARF only: modules' types are never cached.
 */
static struct kvs_lcache *
need_cache(kvs_t *kd)
{
	const char *env;

	if (kd->lcache_tried)
		return kd->lcache;
	kd->lcache_tried = true;
	env = getenv("KVS_NO_CACHE");
	if ((kd->flags & KVS_O_NO_CACHE) || (env != NULL && strcmp(env, "0") != 0 &&
	    env[0] != '\0'))
		return NULL;
	kd->lcache = kvs_lcache_open(kd->elf, kd->kernel_fd, kd->debug_elf,
	    kd->debug_fd, dwarf_only(kd) ? "dwarf" : "btf", &kd->note);
	return kd->lcache;
}

/* The kernel's own types: BTF, then DWARF. */
static int
kernel_query(kvs_t *kd, enum tq q, const char *a, const char *b,
    struct kvs_typeinfo *ti)
{
	struct kvs_btf *bt = need_btf(kd);
	struct kvs_error be;

	if (bt != NULL) {
		struct kvs_typeinfo t2;
		struct kvs_error e2;

		kerr_clear(&be);
		if (one_query(bt, NULL, q, a, b, ti, &be) == 0)
			return 0;
		/* A member missing from a type BTF has is missing from the
		 * kernel (BTF is made from the same DWARF): feature probes
		 * (kvs_has_member) must not cost a DWARF index. */
		kerr_clear(&e2);
		if (q == TQ_MEMBER && be.status == KVS_E_NOTYPE &&
		    kvs_btf_type(bt, a, &t2, &e2) == 0) {
			kd->err = be;
			return -1;
		}
	}
	if (need_dwarf(kd) != 0) {
		if (bt != NULL)
			kd->err = be; /* BTF's answer says more than "no DWARF" */
		return -1;
	}
	return one_query(NULL, kd->dwarf, q, a, b, ti, &kd->err);
}

static int
type_query(kvs_t *kd, enum tq q, const char *a, const char *b, struct kvs_typeinfo *ti)
{
	static const char qc[] = { 'T', 'M', 'V' };
	struct kvs_lcache *c = need_cache(kd);
	const char *nf = NULL;
	unsigned i;

	if (a == NULL || (q == TQ_MEMBER && b == NULL))
		return kerr_set(&kd->err, KVS_E_INVAL, "no type, member or "
		    "variable name");
	if (c != NULL && kvs_lcache_get(c, qc[q], a, q == TQ_MEMBER ? b : NULL,
	    ti, &nf) == 1) {
		if (nf == NULL)
			return 0;
		kerr_set(&kd->err, KVS_E_NOTYPE, "%s", nf);
	} else if (kernel_query(kd, q, a, b, ti) == 0) {
		if (c != NULL)
			kvs_lcache_put(c, qc[q], a, q == TQ_MEMBER ? b : NULL, ti, NULL);
		return 0;
	} else if (c != NULL && kd->err.status == KVS_E_NOTYPE)
		kvs_lcache_put(c, qc[q], a, q == TQ_MEMBER ? b : NULL, NULL,
		    kd->err.msg);
	for (i = 0; i < kd->nmods && kd->err.status == KVS_E_NOTYPE; i++) {
		struct kvs_module *m = &kd->mods[i];
		struct kvs_error e2;

		kerr_clear(&e2);
		if (m->dwarf == NULL && !m->dwarf_tried) {
			m->dwarf_tried = true;
			if (kvs_dwarf_open(&m->dwarf, m->elf, &e2) != 0)
				m->dwarf = NULL;
		}
		if (m->dwarf != NULL && one_query(NULL, m->dwarf, q, a, b, ti, &e2) == 0) {
			kerr_clear(&kd->err);
			return 0;
		}
	}
	return -1;
}

int
kvs_type(kvs_t *kd, const char *type, struct kvs_typeinfo *ti)
{
	ENTER(kd);
	return type_query(kd, TQ_TYPE, type, NULL, ti);
}

int
kvs_member(kvs_t *kd, const char *type, const char *path, struct kvs_typeinfo *ti)
{
	ENTER(kd);
	return type_query(kd, TQ_MEMBER, type, path, ti);
}

int
kvs_has_member(kvs_t *kd, const char *type, const char *path)
{
	struct kvs_typeinfo ti;

	ENTER(kd);
	if (type_query(kd, TQ_MEMBER, type, path, &ti) == 0)
		return 1;
	if (kd->err.status == KVS_E_NOTYPE) {
		kerr_clear(&kd->err);
		return 0;
	}
	return -1;
}

int
kvs_variable(kvs_t *kd, const char *var, struct kvs_typeinfo *ti)
{
	ENTER(kd);
	return type_query(kd, TQ_VARIABLE, var, NULL, ti);
}

/*
 * Members of a struct or union: BTF first, then DWARF, then the modules'
 * DWARF, as type_query; only "not found" falls through (a walk the
 * callback stopped, or an error met half-way, is the answer).
 */
/* The kernel's own members of type: BTF, then DWARF. */
static int
kernel_members(kvs_t *kd, const char *type,
    int (*cb)(void *arg, const struct kvs_member_info *m), void *arg)
{
	struct kvs_btf *bt;
	struct kvs_error be;
	int rc;

	if ((bt = need_btf(kd)) != NULL) {
		kerr_clear(&be);
		rc = kvs_btf_members(bt, type, cb, arg, &be);
		if (rc != -1 || be.status != KVS_E_NOTYPE) {
			kd->err = be;
			return rc;
		}
	}
	if (need_dwarf(kd) != 0) {
		if (bt != NULL)
			kd->err = be;
		return -1;
	}
	return kvs_dwarf_members(kd->dwarf, type, cb, arg, &kd->err);
}

/* Members copied out for the cache (the strings stay the handle's). */
struct mcollect {
	struct kvs_member_info *m;
	size_t n, cap;
	bool nomem;
};

static int
mcollect_cb(void *arg, const struct kvs_member_info *m)
{
	struct mcollect *mc = arg;

	if (mc->n == mc->cap) {
		size_t nc = mc->cap ? mc->cap * 2 : 32;
		struct kvs_member_info *n = realloc(mc->m, nc * sizeof(*n));
		if (n == NULL) {
			mc->nomem = true;
			return 1;
		}
		mc->m = n;
		mc->cap = nc;
	}
	mc->m[mc->n++] = *m;
	return 0;
}

/*
 * Members of a struct or union: the layout cache, then BTF, then DWARF,
 * then the modules' DWARF, as type_query; only "not found" falls through (a
 * walk the callback stopped, or an error met half-way, is the answer).
 * With the cache the kernel's list is read whole, kept, and then given to
 * cb from the cache's copy.
 */
int
kvs_type_members(kvs_t *kd, const char *type,
    int (*cb)(void *arg, const struct kvs_member_info *m), void *arg)
{
	struct kvs_lcache *c;
	const struct kvs_member_info *cm = NULL;
	const char *nf = NULL;
	size_t cn = 0, j;
	unsigned i;
	int rc;

	ENTER(kd);
	if (type == NULL || cb == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "no type name or callback");
	if ((c = need_cache(kd)) == NULL)
		rc = kernel_members(kd, type, cb, arg);
	else {
		if (kvs_lcache_members_get(c, type, &cm, &cn, &nf) != 1) {
			struct mcollect mc = { NULL, 0, 0, false };
			rc = kernel_members(kd, type, mcollect_cb, &mc);
			if (mc.nomem) {
				free(mc.m);
				return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
			}
			if (rc == 0)
				kvs_lcache_members_put(c, type, mc.m, mc.n, NULL);
			else if (kd->err.status == KVS_E_NOTYPE)
				kvs_lcache_members_put(c, type, NULL, 0, kd->err.msg);
			if (rc != 0 || kvs_lcache_members_get(c, type, &cm, &cn, &nf) != 1) {
				/* not kept (an error, or the cache could not take
				 * it): give what was read */
				for (j = 0; j < mc.n; j++) {
					int crc = cb(arg, &mc.m[j]);
					if (crc != 0) {
						free(mc.m);
						return crc;
					}
				}
				free(mc.m);
				goto modules;
			}
			free(mc.m);
		}
		if (nf != NULL) {
			rc = kerr_set(&kd->err, KVS_E_NOTYPE, "%s", nf);
			goto modules;
		}
		for (j = 0; j < cn; j++)
			if ((rc = cb(arg, &cm[j])) != 0)
				return rc;
		return 0;
	}
modules:
	for (i = 0; i < kd->nmods && rc == -1 && kd->err.status == KVS_E_NOTYPE; i++) {
		struct kvs_module *m = &kd->mods[i];
		struct kvs_error e2;

		kerr_clear(&e2);
		if (m->dwarf == NULL && !m->dwarf_tried) {
			m->dwarf_tried = true;
			if (kvs_dwarf_open(&m->dwarf, m->elf, &e2) != 0)
				m->dwarf = NULL;
		}
		if (m->dwarf == NULL)
			continue;
		rc = kvs_dwarf_members(m->dwarf, type, cb, arg, &e2);
		if (rc != -1 || e2.status != KVS_E_NOTYPE) {
			kd->err = e2;
			return rc;
		}
	}
	return rc;
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
	check_shrunk(kd);    /* counting may read the dump's mapped bitmap */
	di->dumped_pages = kd->src->dumped_pages != NULL && !kd->shrunk ?
	    kd->src->dumped_pages(kd->src_priv) : kd->info.dumped_pages;
	di->source_bytes = kd->info.source_bytes;
	di->live = kd->info.live;
	di->path = kd->core_path;
	di->kernel = kd->kernel_path;
	/* Not worth a DWARF load when BTF answers the types: DWARF's version
	 * is reported when DWARF is, or was, in use. */
	if ((need_btf(kd) == NULL || kd->dwarf != NULL) && need_dwarf(kd) == 0)
		di->dwarf_version = kvs_dwarf_version(kd->dwarf);
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
	check_shrunk(kd);    /* the buffer may be the dump's own copy, mapped */
	if (kd->shrunk)
		return shrunk_error(kd);
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
