/*
 * kernelfile.c - the kernel file: opening it (read-only, refusing what is
 * not a regular file or not a kernel executable of an architecture here),
 * finding its separate kernel.debug, and reading the initialised data it
 * holds.  Its symbols and types are the types layer's (types/).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_internal.h"


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

int
kvs_open_elf(const char *path, int *fdp, Elf **elfp, const struct kvs_arch_ops **archp,
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
const char *
kvs_system_root(void)
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
void
kvs_find_debug_file(kvs_t *kd)
{
	char cand[2][4096], abs[4096], root[4096] = "";
	const char *rel;
	int i;

	if (kvs_elf_has_section(kd->elf, ".debug_info"))
		return;
	snprintf(cand[0], sizeof(cand[0]), "%s.debug", kd->kernel_path);
	/* The kernel's path from the root, so a relative -N works too. */
	if (realpath(kd->kernel_path, abs) == NULL)
		snprintf(abs, sizeof(abs), "%s", kd->kernel_path);
	if (kvs_system_root()[0] != '\0' && realpath(kvs_system_root(), root) == NULL)
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
		if (access(cand[i], R_OK) != 0 || kvs_open_elf(cand[i], &fd, &elf, NULL, &tmp) != 0)
			continue;
		if (kvs_elf_has_section(elf, ".debug_info")) {
			kd->debug_fd = fd;
			kd->debug_elf = elf;
			return;
		}
		elf_end(elf);
		close(fd);
	}
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