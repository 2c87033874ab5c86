/*
 * module.c - kernel modules: where the kernel linker loaded a .ko, and its
 * symbols and types relocated there.
 *
 * A FreeBSD amd64 module is an ELF relocatable object.  The kernel linker
 * copies its allocated sections one after another, each aligned to its
 * sh_addralign, into one block whose address and size the module's
 * struct linker_file records; the files are on the kernel's linker_files
 * TAILQ.  Module-local symbols (st_value = section offset) then live at
 * block + section offset + st_value.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kread.h"

#define LF "struct linker_file"
#define MAX_FILES 4096

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Find the linker_file whose filename matches; 0 with base/size, 1 if not
 * loaded, -1 on error. */
static int
find_loaded(kvs_t *kd, const char *name, uint64_t *base, uint64_t *size)
{
	struct kfield next, fname, addr, sz;
	uint64_t head, p;
	struct kwalk w;
	uint8_t buf[512];
	struct kvs_typeinfo ti;

	if (kvs_symbol(kd, "linker_files", &head, NULL) != 0)
		return kerr_push(&kd->err, "finding loaded modules");
	if (kvs_type(kd, LF, &ti) != 0 || ti.size > sizeof(buf) ||
	    kfield(kd, LF, "link.tqe_next", &next, true) != 0 ||
	    kfield(kd, LF, "filename", &fname, true) != 0 ||
	    kfield(kd, LF, "address", &addr, true) != 0 ||
	    kfield(kd, LF, "size", &sz, true) != 0)
		return kerr_push(&kd->err, "struct linker_file layout");
	if (kread_u64(kd, head, &p) != 0)          /* tqh_first */
		return kerr_push(&kd->err, "reading linker_files");
	kwalk_init(&w, MAX_FILES);
	for (; p != 0; p = kfield_get(buf, ti.size, &next)) {
		char fn[256];
		if (kwalk_step(kd, &w, p, "linker_files") != 0)
			return -1;
		if (kvs_read(kd, p, buf, ti.size) != 0)
			return kerr_push(&kd->err, "linker_file at 0x%llx", (unsigned long long)p);
		if (kvs_read_string(kd, kfield_get(buf, ti.size, &fname), fn, sizeof(fn), NULL) < 0)
			return kerr_push(&kd->err, "name of linker_file at 0x%llx", (unsigned long long)p);
		if (strcmp(base_name(fn), name) == 0) {
			*base = kfield_get(buf, ti.size, &addr);
			*size = kfield_get(buf, ti.size, &sz);
			return 0;
		}
	}
	return 1;
}

int
kvs_add_module(kvs_t *kd, const char *path)
{
	struct kvs_module *m;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	uint64_t *secaddr = NULL, off = 0, base = 0, size = 0;
	size_t nsec;
	int rc;

	kerr_clear(&kd->err);
	if (kd->nmods == KVS_MAX_MODULES)
		return kerr_set(&kd->err, KVS_E_INVAL, "too many modules (%d)", KVS_MAX_MODULES);
	rc = find_loaded(kd, base_name(path), &base, &size);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "module %s is not loaded in this dump",
		    base_name(path));
	m = &kd->mods[kd->nmods];
	memset(m, 0, sizeof(*m));
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return kerr_errno(&kd->err, errno, "module %s", path);
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (m->elf == NULL || gelf_getehdr(m->elf, &eh) == NULL || eh.e_type != ET_REL ||
	    eh.e_machine != EM_X86_64 || elf_getshdrnum(m->elf, &nsec) != 0) {
		kerr_set(&kd->err, KVS_E_FORMAT, "module %s: not an amd64 relocatable ELF (.ko)", path);
		goto fail;
	}
	secaddr = calloc(nsec ? nsec : 1, sizeof(*secaddr));
	if (secaddr == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		goto fail;
	}
	while ((scn = elf_nextscn(m->elf, scn)) != NULL) {
		GElf_Shdr sh;
		uint64_t al;
		if (gelf_getshdr(scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
			continue;
		al = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
		off = (off + al - 1) & ~(al - 1);
		secaddr[elf_ndxscn(scn)] = base + off;
		off += sh.sh_size;
	}
	if (off > size) {
		kerr_set(&kd->err, KVS_E_MISMATCH, "module %s needs %llu bytes but was loaded in %llu: "
		    "not the file that was loaded", path, (unsigned long long)off,
		    (unsigned long long)size);
		goto fail;
	}
	if (kvs_symtab_load_biased(&m->syms, m->elf, secaddr, nsec, &kd->err) != 0) {
		kerr_push(&kd->err, "module %s", path);
		goto fail;
	}
	free(secaddr);
	m->path = strdup(path);
	m->base = base;
	m->size = size;
	kd->nmods++;
	return 1;
fail:
	free(secaddr);
	if (m->elf != NULL)
		elf_end(m->elf);
	close(m->fd);
	memset(m, 0, sizeof(*m));
	return -1;
}

int
kvs_add_module_dir(kvs_t *kd, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	kerr_clear(&kd->err);
	if (d == NULL)
		return kerr_errno(&kd->err, errno, "module directory %s", dir);
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		size_t l = strlen(de->d_name);
		if (l < 4 || strcmp(de->d_name + l - 3, ".ko") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (kvs_add_module(kd, path) == 1)
			n++;
		else if (kvs_errstatus(kd) != KVS_E_NOSYMBOL) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	kerr_clear(&kd->err);
	return n;
}

void
kvs_modules_close(kvs_t *kd)
{
	unsigned i;

	for (i = 0; i < kd->nmods; i++) {
		struct kvs_module *m = &kd->mods[i];
		if (m->dwarf != NULL)
			kvs_dwarf_close(m->dwarf);
		kvs_symtab_free(m->syms);
		elf_end(m->elf);
		close(m->fd);
		free(m->path);
	}
	kd->nmods = 0;
}
