/*
 * symtab.c - kernel ELF symbol table: name -> address and address -> name.
 *
 * FreeBSD's interesting variables are often file-local statics
 * (kmemstatistics, uma_kegs), so the full SHT_SYMTAB is indexed, locals
 * included.  When a name is defined more than once, a global definition wins
 * over a local one; among locals the first in table order wins, as kvm_nlist
 * does.  Callers may pass a.out-style names with one leading '_'.
 *
 * Names are borrowed from libelf's string table data, which lives as long as
 * the Elf handle (owned by kvs.c and released after this table).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"

struct sym {
	const char *name;
	uint64_t value, size;
	unsigned char bind, type;
};

struct kvs_symtab {
	struct sym *syms;       /* defined symbols, table order */
	size_t nsyms;
	uint32_t *hash;         /* open addressing: index+1 into syms, 0 = empty */
	size_t hmask;
	uint32_t *byaddr;       /* indexes of FUNC/OBJECT symbols sorted by value */
	size_t naddr;
};

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;   /* FNV-1a */

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static bool
better(const struct sym *cand, const struct sym *cur)
{
	/* Global/weak beats local; otherwise keep the first seen. */
	return cur->bind == STB_LOCAL && cand->bind != STB_LOCAL;
}

static void
hash_insert(struct kvs_symtab *st, uint32_t idx)
{
	size_t i = name_hash(st->syms[idx].name) & st->hmask;

	for (;; i = (i + 1) & st->hmask) {
		uint32_t cur = st->hash[i];
		if (cur == 0) {
			st->hash[i] = idx + 1;
			return;
		}
		if (strcmp(st->syms[cur - 1].name, st->syms[idx].name) == 0) {
			if (better(&st->syms[idx], &st->syms[cur - 1]))
				st->hash[i] = idx + 1;
			return;
		}
	}
}

static const struct sym *
hash_find(const struct kvs_symtab *st, const char *name)
{
	size_t i = name_hash(name) & st->hmask;

	for (;; i = (i + 1) & st->hmask) {
		uint32_t cur = st->hash[i];
		if (cur == 0)
			return NULL;
		if (strcmp(st->syms[cur - 1].name, name) == 0)
			return &st->syms[cur - 1];
	}
}

static const struct kvs_symtab *sort_ctx;

static int
cmp_addr(const void *a, const void *b)
{
	const struct sym *x = &sort_ctx->syms[*(const uint32_t *)a];
	const struct sym *y = &sort_ctx->syms[*(const uint32_t *)b];

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* Prefer sized, global symbols at equal addresses: they sort last so
	 * the binary search (last <= addr) lands on them. */
	if ((x->size != 0) != (y->size != 0))
		return x->size != 0 ? 1 : -1;
	if ((x->bind == STB_LOCAL) != (y->bind == STB_LOCAL))
		return x->bind == STB_LOCAL ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

int
kvs_symtab_load(struct kvs_symtab **out, struct Elf *elf_, struct kvs_error *e)
{
	return kvs_symtab_load_biased(out, elf_, NULL, 0, e);
}

int
kvs_symtab_load_biased(struct kvs_symtab **out, struct Elf *elf_, const uint64_t *secaddr,
    size_t nsec, struct kvs_error *e)
{
	Elf *elf = (Elf *)elf_;
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr shdr, symshdr;
	struct kvs_symtab *st;
	Elf_Data *data;
	size_t n, i, hsize;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == SHT_SYMTAB) {
			symscn = scn;
			symshdr = shdr;
			break;
		}
	}
	if (symscn == NULL)
		return kerr_set(e, KVS_E_NOSYMBOL, "no symbol table (SHT_SYMTAB); "
		    "the kernel was stripped");
	data = elf_getdata(symscn, NULL);
	if (data == NULL || symshdr.sh_entsize == 0)
		return kerr_set(e, KVS_E_FORMAT, "unreadable symbol table: %s",
		    elf_errmsg(-1));
	n = symshdr.sh_size / symshdr.sh_entsize;
	if (n > UINT32_MAX / 2)
		return kerr_set(e, KVS_E_FORMAT, "absurd symbol count %zu", n);

	st = calloc(1, sizeof(*st));
	if (st == NULL || (st->syms = calloc(n ? n : 1, sizeof(*st->syms))) == NULL) {
		free(st);
		return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
	}
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;

		if (gelf_getsym(data, (int)i, &s) == NULL)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE)
			continue;
		/* A relocatable module's values are section offsets: place them
		 * where the kernel linker put the section. */
		if (secaddr != NULL && s.st_shndx < SHN_LORESERVE) {
			if (s.st_shndx >= nsec || secaddr[s.st_shndx] == 0)
				continue;
			s.st_value += secaddr[s.st_shndx];
		}
		name = elf_strptr(elf, symshdr.sh_link, s.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		st->syms[st->nsyms++] = (struct sym){ name, s.st_value, s.st_size,
		    (unsigned char)GELF_ST_BIND(s.st_info), (unsigned char)type };
	}

	for (hsize = 16; hsize < st->nsyms * 2; hsize <<= 1)
		;
	st->hmask = hsize - 1;
	st->hash = calloc(hsize, sizeof(*st->hash));
	st->byaddr = calloc(st->nsyms ? st->nsyms : 1, sizeof(*st->byaddr));
	if (st->hash == NULL || st->byaddr == NULL) {
		kvs_symtab_free(st);
		return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
	}
	for (i = 0; i < st->nsyms; i++) {
		hash_insert(st, (uint32_t)i);
		if (st->syms[i].type == STT_FUNC || st->syms[i].type == STT_OBJECT)
			st->byaddr[st->naddr++] = (uint32_t)i;
	}
	sort_ctx = st;
	qsort(st->byaddr, st->naddr, sizeof(*st->byaddr), cmp_addr);
	sort_ctx = NULL;
	*out = st;
	return 0;
}

void
kvs_symtab_free(struct kvs_symtab *st)
{
	if (st == NULL)
		return;
	free(st->syms);
	free(st->hash);
	free(st->byaddr);
	free(st);
}

int
kvs_symtab_lookup(const struct kvs_symtab *st, const char *name, uint64_t *addr,
    uint64_t *size, struct kvs_error *e)
{
	const struct sym *s = hash_find(st, name);

	if (s == NULL && name[0] == '_' && name[1] != '\0')
		s = hash_find(st, name + 1);
	if (s == NULL)
		return kerr_set(e, KVS_E_NOSYMBOL, "symbol '%s' not found", name);
	if (addr != NULL)
		*addr = s->value;
	if (size != NULL)
		*size = s->size;
	return 0;
}

const char *
kvs_symtab_at(const struct kvs_symtab *st, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = st->naddr;
	const struct sym *s;

	/* Last symbol with value <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->syms[st->byaddr[mid]].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &st->syms[st->byaddr[lo - 1]];
	if (s->size != 0 && addr >= s->value + s->size)
		return NULL;
	if (off != NULL)
		*off = addr - s->value;
	return s->name;
}
