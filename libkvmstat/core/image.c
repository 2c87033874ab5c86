/*
 * image.c - what the kernel image answers through the handle: symbols
 * (the kernel's table, moved by the handle's slide, then the modules'),
 * types (asked of the types front, types/types.c, which the core only
 * calls), and kernel modules: a .ko's symbols and types, placed where the
 * kernel's linker loaded it.  Where that is, and how the linker lays out a
 * module's sections, is the OS layer's to say (module_find, module_place).
 */
#include <dirent.h>
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

/* ------------------------------------------------------------ symbols */

int
kvs_symbol(kvs_t *kd, const char *name, uint64_t *addr, uint64_t *size)
{
	unsigned i;

	ENTER(kd);
	if (kd->syms == NULL)     /* a format-only open */
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no symbols: dump %s was opened "
		    "for its bytes alone (no kernel)", kd->core_path);
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
	if (kd->syms == NULL)
		return -1;
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
	if (kd->syms == NULL)
		return NULL;
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

int
kvs_type(kvs_t *kd, const char *type, struct kvs_typeinfo *ti)
{
	ENTER(kd);
	return kvs_types_query(kd->types, KVS_TQ_TYPE, type, NULL, ti, &kd->err);
}

int
kvs_member(kvs_t *kd, const char *type, const char *path, struct kvs_typeinfo *ti)
{
	ENTER(kd);
	return kvs_types_query(kd->types, KVS_TQ_MEMBER, type, path, ti, &kd->err);
}

int
kvs_has_member(kvs_t *kd, const char *type, const char *path)
{
	struct kvs_typeinfo ti;

	ENTER(kd);
	if (kvs_types_query(kd->types, KVS_TQ_MEMBER, type, path, &ti, &kd->err) == 0)
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
	return kvs_types_query(kd->types, KVS_TQ_VARIABLE, var, NULL, ti, &kd->err);
}

int
kvs_type_members(kvs_t *kd, const char *type,
    int (*cb)(void *arg, const struct kvs_member_info *m), void *arg)
{
	ENTER(kd);
	return kvs_types_members(kd->types, type, cb, arg, &kd->err);
}

int
kvs_type_peel(kvs_t *kd, const char *type, struct kvs_typepeel *p)
{
	ENTER(kd);
	if (type == NULL || p == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "no type name, or no place for the answer");
	return kvs_types_peel(kd->types, type, p, &kd->err);
}

int
kvs_type_enumerators(kvs_t *kd, const char *type,
    int (*cb)(void *arg, const char *name, int64_t value), void *arg)
{
	ENTER(kd);
	if (type == NULL || cb == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "no type name or callback");
	return kvs_types_enumerators(kd->types, type, cb, arg, &kd->err);
}

int
kvs_type_constant(kvs_t *kd, const char *name, int64_t *value, const char **enum_type)
{
	ENTER(kd);
	return kvs_types_constant(kd->types, name, value, enum_type, &kd->err);
}

/* ------------------------------------------------------------ modules */

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int
kvs_add_module(kvs_t *kd, const char *path)
{
	struct kvs_module *m;
	struct stat st;
	GElf_Ehdr eh;
	uint64_t *secaddr = NULL, off = 0, base = 0, size = 0;
	size_t nsec;
	int rc;

	kerr_clear(&kd->err);
	if (kd->nmods == KVS_MAX_MODULES)
		return kerr_set(&kd->err, KVS_E_INVAL, "too many modules (%d)", KVS_MAX_MODULES);
	if (kd->os->module_find == NULL || kd->os->module_place == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "modules of %s kernels are not supported",
		    kd->os->name);
	rc = kd->os->module_find(kd, base_name(path), &base, &size);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "module %s is not loaded in this dump",
		    base_name(path));
	m = &kd->mods[kd->nmods];
	memset(m, 0, sizeof(*m));
	m->fd = kvs_open_regular(path, "module", &st, &kd->err);
	if (m->fd < 0)
		return -1;
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (m->elf == NULL || gelf_getehdr(m->elf, &eh) == NULL || eh.e_type != ET_REL ||
	    eh.e_machine != kd->arch->elf_machine || elf_getshdrnum(m->elf, &nsec) != 0) {
		kerr_set(&kd->err, KVS_E_FORMAT, "module %s: not an %s relocatable ELF (.ko)", path,
		    kd->arch->name);
		goto fail;
	}
	secaddr = calloc(nsec ? nsec : 1, sizeof(*secaddr));
	if (secaddr == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		goto fail;
	}
	if (kd->os->module_place(kd, m->elf, base, secaddr, nsec, &off) != 0)
		goto fail;
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
	/* its types are asked after the kernel's */
	if (kvs_types_add_module(kd->types, m->elf, &kd->err) != 0) {
		kvs_symtab_free(m->syms);
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
		kvs_symtab_free(m->syms);
		elf_end(m->elf);
		close(m->fd);
		free(m->path);
	}
	kd->nmods = 0;
}
