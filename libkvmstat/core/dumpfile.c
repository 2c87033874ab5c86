/*
 * dumpfile.c - the dump file: opened O_RDONLY and mapped PROT_READ (or
 * read through a pread view when it cannot be mapped, as /proc/kcore),
 * a memory device told from the devices that only look like memory, the
 * further files of a dump in parts, and the probe of the formats in
 * source/source.c's order.  Also the source that holds nothing, which
 * stands in for a dump with KVS_O_KERNEL_ONLY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_internal.h"


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

int
kvs_open_dump(kvs_t *kd, const char *core, int flags)
{
	struct kvs_open_args a = { .path = core, .flags = flags };
	struct stat st;
	size_t i;
	void *map;
	char first[4096];
	const char *rest = NULL;
	int map_errno;

	/* "FILE@ADDR": a raw image whose first byte is physical ADDR (crash's
	 * spelling; a file whose name has an @ is taken whole). */
	if (strchr(core, '@') != NULL && access(core, F_OK) != 0) {
		const char *at = strrchr(core, '@');
		size_t n = (size_t)(at - core);
		char *end;
		if (n == 0 || n >= sizeof(first))
			return kerr_set(&kd->err, KVS_E_INVAL, "dump %s: no file before '@'", core);
		errno = 0;
		a.phys_start = strtoull(at + 1, &end, 0);
		if (at[1] == '\0' || at[1] == '-' || *end != '\0' || errno != 0 ||
		    a.phys_start % 4096 != 0)
			return kerr_set(&kd->err, KVS_E_INVAL, "dump %s: '%s' after '@' is no "
			    "physical address (a number, a multiple of 4096, as in "
			    "mem.ram@0x40000000)", core, at + 1);
		memcpy(first, core, n);
		first[n] = '\0';
		core = first;
		a.path = core;
		flags |= KVS_O_RAW;
		a.flags = flags;
	}
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
		int rc = a.phys_start != 0 ? KVS_NOTMINE :
		    kvs_source_compressed.open(&a, &kd->src_priv, &kd->err);
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
int
kvs_nomem_read(void *priv, uint64_t addr, void *buf, size_t len, struct kvs_error *e)
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

const struct kvs_source_ops kvs_source_nomem = {
	.name = "none",
	.read_phys = kvs_nomem_read,
	.read_virt = kvs_nomem_read,
	.info = nomem_info,
	.close = nomem_close,
};