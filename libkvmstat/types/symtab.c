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
 *
 * Loading only finds the table: the index (150,000 symbols in Debian's
 * vmlinux: ~30 ms of hashing and sorting) is built on the first address
 * lookup or the fifth name lookup.  The first few name lookups - the OS
 * probes' at open - scan the table instead (about a millisecond each), so
 * that a run which only asks types (`kvmstat type`, answered from the
 * layout cache) never pays for the index.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "types.h"

struct sym {
	const char *name;
	uint64_t value, size;
	unsigned char bind, type;
};

struct kvs_symtab {
	Elf *elf;
	Elf_Data *data;         /* the SHT_SYMTAB's */
	size_t link, nraw;      /* its string table; its entries */
	uint64_t *secaddr;      /* modules: where each section was placed */
	size_t nsec;
	bool built;             /* syms, byname and byaddr below are filled */
	char *names;            /* kvs_symtab_from_list: the names it owns */
	unsigned nscan;         /* name lookups answered by a scan */
	struct sym *syms;       /* defined symbols, table order */
	size_t nsyms;
	struct kvs_htab byname; /* name -> index+1 into syms (the winner) */
	uint32_t *byaddr;       /* indexes of FUNC/OBJECT symbols sorted by value */
	size_t naddr;
};

static bool
better(const struct sym *cand, const struct sym *cur)
{
	/* Global/weak beats local; otherwise keep the first seen. */
	return cur->bind == STB_LOCAL && cand->bind != STB_LOCAL;
}

/* Index symbol idx under its name; room was reserved, so this cannot fail. */
static void
hash_insert(struct kvs_symtab *st, uint32_t idx)
{
	const char *name = st->syms[idx].name;
	uint64_t h = kvs_fnv1a(name);
	struct kvs_hprobe p;
	uint32_t v;

	for (v = kvs_htab_first(&st->byname, h, &p); v != 0;
	    v = kvs_htab_next(&st->byname, &p)) {
		if (strcmp(st->syms[v - 1].name, name) == 0) {
			if (better(&st->syms[idx], &st->syms[v - 1]))
				kvs_htab_replace(&st->byname, &p, idx + 1);
			return;
		}
	}
	(void)kvs_htab_add(&st->byname, h, idx + 1);
}

static const struct sym *
hash_find(const struct kvs_symtab *st, const char *name)
{
	uint32_t v = kvs_htab_find_str(&st->byname, name, st->syms, sizeof(*st->syms),
	    offsetof(struct sym, name));

	return v != 0 ? &st->syms[v - 1] : NULL;
}

/* What the address order needs of a symbol, copied out so the comparison
 * is self-contained (no context pointer, no file-scope state) and the sort
 * streams through 16-byte records instead of chasing indexes. */
struct addr_key {
	uint64_t value;
	uint32_t idx;
	bool sized, local;
};

static int
cmp_addr(const void *a, const void *b)
{
	const struct addr_key *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* Prefer sized, global symbols at equal addresses: they sort last so
	 * the binary search (last <= addr) lands on them. */
	if (x->sized != y->sized)
		return x->sized ? 1 : -1;
	if (x->local != y->local)
		return x->local ? -1 : 1;
	/* Table order breaks the remaining ties: a total order, so the result
	 * does not depend on the sort algorithm. */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Fill st->byaddr with the FUNC/OBJECT symbols in address order.  0 or -1
 * (out of memory). */
static int
sort_by_addr(struct kvs_symtab *st)
{
	struct addr_key *k;
	size_t i, n = 0;

	k = malloc((st->nsyms ? st->nsyms : 1) * sizeof(*k));
	if (k == NULL)
		return -1;
	for (i = 0; i < st->nsyms; i++) {
		const struct sym *s = &st->syms[i];
		if (s->type == STT_FUNC || s->type == STT_OBJECT)
			k[n++] = (struct addr_key){ s->value, (uint32_t)i,
			    s->size != 0, s->bind == STB_LOCAL };
	}
	qsort(k, n, sizeof(*k), cmp_addr);
	for (i = 0; i < n; i++)
		st->byaddr[i] = k[i].idx;
	st->naddr = n;
	free(k);
	return 0;
}

int
kvs_symtab_load(struct kvs_symtab **out, struct Elf *elf_, struct kvs_error *e)
{
	return kvs_symtab_load_biased(out, elf_, NULL, 0, e);
}

/* Raw entry i as a symbol, or false when it is not one that counts
 * (undefined, section, file, unnamed, or in a module section not loaded). */
static bool
raw_sym(const struct kvs_symtab *st, size_t i, struct sym *out)
{
	GElf_Sym s;
	const char *name;
	unsigned type;

	if (gelf_getsym(st->data, (int)i, &s) == NULL)
		return false;
	type = GELF_ST_TYPE(s.st_info);
	if (s.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE)
		return false;
	/* A relocatable module's values are section offsets: place them
	 * where the kernel linker put the section. */
	if (st->secaddr != NULL && s.st_shndx < SHN_LORESERVE) {
		if (s.st_shndx >= st->nsec || st->secaddr[s.st_shndx] == 0)
			return false;
		s.st_value += st->secaddr[s.st_shndx];
	}
	name = elf_strptr(st->elf, st->link, s.st_name);
	if (name == NULL || name[0] == '\0')
		return false;
	*out = (struct sym){ name, s.st_value, s.st_size,
	    (unsigned char)GELF_ST_BIND(s.st_info), (unsigned char)type };
	return true;
}

static int index_table(struct kvs_symtab *st);

/* The index: 0 or -1 (out of memory). */
static int
build(struct kvs_symtab *st)
{
	size_t i;

	if (st->built)
		return 0;
	if ((st->syms = calloc(st->nraw ? st->nraw : 1, sizeof(*st->syms))) == NULL)
		return -1;
	for (i = 1; i < st->nraw; i++)
		if (raw_sym(st, i, &st->syms[st->nsyms]))
			st->nsyms++;
	return index_table(st);
}

/* Index what st->syms holds: 0, or -1 (out of memory, the table emptied). */
static int
index_table(struct kvs_symtab *st)
{
	size_t i;

	st->byaddr = calloc(st->nsyms ? st->nsyms : 1, sizeof(*st->byaddr));
	if (kvs_htab_reserve(&st->byname, st->nsyms) != 0 || st->byaddr == NULL ||
	    sort_by_addr(st) != 0) {
		free(st->syms);
		free(st->byaddr);
		kvs_htab_free(&st->byname);
		st->syms = NULL;
		st->byaddr = NULL;
		st->nsyms = st->naddr = 0;
		return -1;
	}
	for (i = 0; i < st->nsyms; i++)
		hash_insert(st, (uint32_t)i);
	st->built = true;
	return 0;
}

/* A name lookup without the index: the winner by the index's rule. */
static bool
scan_find(const struct kvs_symtab *st, const char *name, struct sym *out)
{
	bool found = false;
	size_t i, nstr = 0;
	const Elf64_Sym *raw = NULL;
	const char *str = NULL;
	Elf_Scn *ss;
	Elf_Data *sd;

	/* The native 64-bit table is read in place: a few ns a symbol. */
	/* (a table or string section of type SHT_NOBITS has a size but no
	 * bytes: d_buf NULL; such a table takes the slow path, which finds
	 * no names in it) */
	if (gelf_getclass(st->elf) == ELFCLASS64 && st->data->d_type == ELF_T_SYM &&
	    st->data->d_buf != NULL && st->data->d_size >= st->nraw * sizeof(Elf64_Sym) &&
	    (ss = elf_getscn(st->elf, st->link)) != NULL &&
	    (sd = elf_getdata(ss, NULL)) != NULL && sd->d_buf != NULL && sd->d_size > 0 &&
	    ((const char *)sd->d_buf)[sd->d_size - 1] == '\0') {
		raw = st->data->d_buf;
		str = sd->d_buf;
		nstr = sd->d_size;
	}
	for (i = 1; i < st->nraw; i++) {
		struct sym s;
		GElf_Sym gs;
		const char *nm;

		/* cheap reject on the name before decoding the symbol */
		if (raw != NULL) {
			if (raw[i].st_name >= nstr)
				continue;
			nm = str + raw[i].st_name;
		} else if (gelf_getsym(st->data, (int)i, &gs) == NULL ||
		    (nm = elf_strptr(st->elf, st->link, gs.st_name)) == NULL)
			continue;
		if (nm[0] != name[0] || strcmp(nm, name) != 0 || !raw_sym(st, i, &s))
			continue;
		if (!found || better(&s, out)) {
			*out = s;
			found = true;
		}
	}
	return found;
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
	size_t n;

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
	if (st == NULL)
		return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
	st->elf = elf;
	st->data = data;
	st->link = symshdr.sh_link;
	st->nraw = n;
	if (secaddr != NULL) {
		/* modules are few and small: index them now */
		st->secaddr = malloc((nsec ? nsec : 1) * sizeof(*secaddr));
		if (st->secaddr == NULL) {
			free(st);
			return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
		}
		memcpy(st->secaddr, secaddr, nsec * sizeof(*secaddr));
		st->nsec = nsec;
		if (build(st) != 0) {
			kvs_symtab_free(st);
			return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
		}
	}
	*out = st;
	return 0;
}

void
kvs_symtab_free(struct kvs_symtab *st)
{
	if (st == NULL)
		return;
	free(st->syms);
	kvs_htab_free(&st->byname);
	free(st->byaddr);
	free(st->secaddr);
	free(st->names);
	free(st);
}

/*
 * A table from a list (Linux: kallsyms decoded from memory), taking over
 * `names`, which the defs' names point into.  Indexed at once: there is no
 * ELF table to scan instead.
 */
int
kvs_symtab_from_list(struct kvs_symtab **out, char *names, const struct kvs_symdef *defs,
    size_t n, struct kvs_error *e)
{
	struct kvs_symtab *st;
	size_t i;

	if (n > UINT32_MAX / 2) {
		free(names);
		return kerr_set(e, KVS_E_FORMAT, "absurd symbol count %zu", n);
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL || (st->syms = calloc(n ? n : 1, sizeof(*st->syms))) == NULL) {
		free(st);
		free(names);
		return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
	}
	st->names = names;
	for (i = 0; i < n; i++)
		if (defs[i].name != NULL && defs[i].name[0] != '\0')
			st->syms[st->nsyms++] = (struct sym){ defs[i].name, defs[i].value,
			    defs[i].size, defs[i].bind, defs[i].type };
	if (index_table(st) != 0) {
		kvs_symtab_free(st);
		return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
	}
	*out = st;
	return 0;
}

/* How many symbols in address order have a value <= addr (the index of
 * the first one above it). */
static size_t
count_upto(const struct kvs_symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->naddr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->syms[st->byaddr[mid]].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
kvs_symtab_next(struct kvs_symtab *st, uint64_t addr, uint64_t *next)
{
	size_t lo;

	if (build(st) != 0)
		return -1;
	lo = count_upto(st, addr);
	if (lo == st->naddr)
		return -1;
	*next = st->syms[st->byaddr[lo]].value;
	return 0;
}

int
kvs_symtab_lookup(struct kvs_symtab *st, const char *name, uint64_t *addr,
    uint64_t *size, struct kvs_error *e)
{
	const struct sym *s;
	struct sym tmp;

	if (!st->built && st->nscan < 4) {
		st->nscan++;
		s = scan_find(st, name, &tmp) ? &tmp : NULL;
		if (s == NULL && name[0] == '_' && name[1] != '\0')
			s = scan_find(st, name + 1, &tmp) ? &tmp : NULL;
	} else {
		if (build(st) != 0)
			return kerr_set(e, KVS_E_NOMEM, "symbol table: out of memory");
		s = hash_find(st, name);
		if (s == NULL && name[0] == '_' && name[1] != '\0')
			s = hash_find(st, name + 1);
	}
	if (s == NULL)
		return kerr_set(e, KVS_E_NOSYMBOL, "symbol '%s' not found", name);
	if (addr != NULL)
		*addr = s->value;
	if (size != NULL)
		*size = s->size;
	return 0;
}

const char *
kvs_symtab_at(struct kvs_symtab *st, uint64_t addr, uint64_t *off)
{
	size_t lo;
	const struct sym *s;

	if (build(st) != 0)
		return NULL;
	lo = count_upto(st, addr);      /* the last symbol <= addr is lo - 1 */
	if (lo == 0)
		return NULL;
	s = &st->syms[st->byaddr[lo - 1]];
	if (s->size != 0 && addr >= s->value + s->size)
		return NULL;
	/* an unsized symbol (kallsyms') reaches the next one; the last one
	 * only itself: an address past it (a module's) is in no symbol */
	if (s->size == 0 && lo == st->naddr && addr != s->value)
		return NULL;
	if (off != NULL)
		*off = addr - s->value;
	return s->name;
}
