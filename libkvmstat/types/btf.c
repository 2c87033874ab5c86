/*
 * btf.c - struct layouts and variable types from the kernel's BTF.
 *
 * Design story.  A Linux kernel built with CONFIG_DEBUG_INFO_BTF carries a
 * .BTF section: every type of its DWARF, deduplicated by pahole, in a few
 * MB (Debian 12's vmlinux: 4.4 MB of .BTF, 100,750 types, beside 174 MB of
 * .debug_info).  libbpf parses it in 20-100 ms (the range is the machine's
 * load) and 20 MB, where indexing the DWARF takes seconds and 270 MB.  So
 * the handle asks BTF first and DWARF only for what BTF cannot say
 * (core/kvs.c: type_query).  Measured on that kernel: `kvmstat slab`
 * 0.2-0.3 s and 33 MB peak RSS instead of 3.9-5 s and 275 MB; a type's
 * first query ~0.3 ms (libbpf finds a name by scanning every type), later
 * ones ~1 us.
 *
 * The answers are those of dwarf.c for the same type: the same
 * kvs_typeinfo (typedefs and qualifiers peeled, multi-dimensional arrays
 * flattened, bit-fields as the byte holding the lowest bit plus a bit
 * offset within it), the same C spelling in type_name, anonymous struct
 * and union members found through their parents, dotted paths, and
 * KVS_E_NOTYPE for "not found".  Names resolve as in dwarf.c: "struct x",
 * "union x", "enum x", or a bare name tried as typedef, base type, struct,
 * union, enum; a forward declaration (BTF_KIND_FWD) is replaced by the
 * definition of the same name when there is one, first definition wins.
 *
 * What BTF cannot say, and dwarf.c can:
 *   - variables: BTF describes only per-CPU variables (pahole emits VAR only
 *     for .data..percpu); kvs_btf_variable answers KVS_E_NOTYPE for the
 *     others, and callers fall back to DWARF or to ELF symbol sizes;
 *   - a zero-length array "x[0]" and a flexible array "x[]" are both
 *     nelems 0 in BTF: both read as "[]" (count 0, size 0 either way);
 *   - array dimensions are spelled as the encoder kept them: pahole writes
 *     "int a[3][5]" as one dimension ("int [15]"), gcc 12's -gbtf nests
 *     them in reverse ("int [5][3]"); count, size and element are right;
 *   - a function type without parameters is "(void)" (BTF does not record
 *     whether it was prototyped; the kernel's are).
 *
 * Parsing is libbpf's (btf__new, which copies the bytes and validates the
 * header, string and type sections).  Type ids inside the types are not all
 * checked by libbpf 1.1, so every btf__type_by_id here is checked, and type
 * chains are bounded (MAX_TYPE_DEPTH) against cycles.  libbpf reports a
 * malformed section on stderr ("libbpf: BTF type [50] is malformed"): its
 * print callback is process-wide, so a library must leave it alone.
 * type_name strings are interned in the handle and live until
 * kvs_btf_close; each (kind, name) lookup is remembered, found or not.
 *
 * Jobs: this file opens the BTF, resolves names and type chains, and
 * describes a type (kvs_typeinfo, its C spelling), answering kvs_btf_type
 * and kvs_btf_variable; member paths (kvs_btf_member) and members lists
 * (kvs_btf_members) are btf_members.c's, built on bt_find_type, bt_peel
 * and bt_describe.
 */
#include <bpf/btf.h>
#include <gelf.h>
#include <libelf.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf_internal.h"
#include "tname.h"

#define TNAME_MAX 512

static int
nomem(struct kvs_error *e)
{
	return kerr_errno(e, ENOMEM, "BTF");
}

/* ------------------------------------------------------------ string map */

/* The entry for key, or NULL. */
static struct sent *
sm_find(const struct smap *m, const char *key)
{
	uint32_t v = kvs_htab_find_str(&m->tab, key, m->ent, sizeof(*m->ent),
	    offsetof(struct sent, key));

	return v != 0 ? &m->ent[v - 1] : NULL;
}

/* The entry for key, made (zeroed, key copied) if absent; NULL: ENOMEM.
 * The pointer is valid until the next sm_get on the map. */
static struct sent *
sm_get(struct smap *m, const char *key)
{
	struct sent *se = sm_find(m, key);
	char *k;

	if (se != NULL)
		return se;
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct sent *n = realloc(m->ent, ncap * sizeof(*n));
		if (n == NULL)
			return NULL;
		m->ent = n;
		m->cap = ncap;
	}
	if ((k = strdup(key)) == NULL)
		return NULL;
	if (kvs_htab_add(&m->tab, kvs_fnv1a(key), (uint32_t)(m->n + 1)) != 0) {
		free(k);
		return NULL;
	}
	se = &m->ent[m->n++];
	se->key = k;
	se->id = 0;
	return se;
}

static void
sm_free(struct smap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->ent[i].key);
	free(m->ent);
	kvs_htab_free(&m->tab);
	memset(m, 0, sizeof(*m));
}

/* The handle's copy of s (one per spelling), or NULL (ENOMEM). */
static const char *
intern(struct kvs_btf *b, const char *s)
{
	struct sent *se = sm_get(&b->strs, s);

	return se != NULL ? se->key : NULL;
}

/* ---------------------------------------------------------- open, close */

int
kvs_btf_open_mem(struct kvs_btf **out, const void *buf, size_t len,
    struct kvs_error *e)
{
	struct kvs_btf *b;
	size_t psz;

	*out = NULL;
	if (buf == NULL || len == 0)
		return kerr_set(e, KVS_E_INVAL, "no BTF data");
	if (len > UINT32_MAX)
		return kerr_set(e, KVS_E_FORMAT, "BTF of %zu bytes: too large", len);
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return nomem(e);
	errno = 0;
	b->btf = btf__new(buf, (uint32_t)len);
	if (b->btf == NULL) {
		int err = errno != 0 ? errno : EINVAL;
		free(b);
		if (err == ENOMEM)
			return nomem(e);
		return kerr_set(e, KVS_E_DWARF, "cannot parse BTF (%zu bytes): "
		    "libbpf: %s", len, strerror(err));
	}
	/* libbpf guesses from the size of "long" (0 if there is none). */
	psz = btf__pointer_size(b->btf);
	b->ptr_size = psz != 0 ? psz : 8;
	*out = b;
	return 0;
}

/* The .BTF section of elf: 1 with its data, 0 if there is none. */
static int
find_btf_section(Elf *elf, Elf_Data **data, struct kvs_error *e)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*data = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return kerr_set(e, KVS_E_FORMAT, "reading section names: libelf: %s",
		    elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *nm;
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm == NULL || strcmp(nm, ".BTF") != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			return 0;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return kerr_set(e, KVS_E_FORMAT, ".BTF: cannot decompress: "
			    "libelf: %s", elf_errmsg(-1));
		*data = elf_getdata(scn, NULL);
		if (*data == NULL || (*data)->d_buf == NULL || (*data)->d_size == 0)
			return kerr_set(e, KVS_E_FORMAT, ".BTF: cannot read section "
			    "data: libelf: %s", elf_errmsg(-1));
		return 1;
	}
	return 0;
}

int
kvs_btf_open_elf(struct kvs_btf **out, struct Elf *elf, struct kvs_error *e)
{
	Elf_Data *d;
	GElf_Ehdr eh;
	int rc;

	*out = NULL;
	if (elf == NULL)
		return kerr_set(e, KVS_E_INVAL, "no ELF handle for BTF");
	if ((rc = find_btf_section(elf, &d, e)) <= 0)
		return rc < 0 ? -1 : 1;
	if (kvs_btf_open_mem(out, d->d_buf, d->d_size, e) != 0)
		return kerr_push(e, ".BTF section");
	/* The file says how wide its pointers are. */
	if (gelf_getehdr(elf, &eh) != NULL)
		(*out)->ptr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	return 0;
}

void
kvs_btf_close(struct kvs_btf *b)
{
	if (b == NULL)
		return;
	sm_free(&b->strs);
	sm_free(&b->names);
	btf__free(b->btf);
	free(b);
}

/* --------------------------------------------------------- primitives */

/* The type with id (id != 0), or NULL with the error set. */
static const struct btf_type *
type_at(struct kvs_btf *b, uint32_t id, struct kvs_error *e)
{
	const struct btf_type *t = btf__type_by_id(b->btf, id);

	if (t == NULL)
		kerr_set(e, KVS_E_DWARF, "BTF type id %u out of range (%u types)",
		    id, btf__type_cnt(b->btf) - 1);
	return t;
}

/* A type's name, "" if it has none (or a bad offset). */
static const char *
tname_of(struct kvs_btf *b, const struct btf_type *t)
{
	const char *s = btf__name_by_offset(b->btf, t->name_off);

	return s != NULL ? s : "";
}

/* First type named name of kind kind (with kflag == fwd_union for a FWD),
 * by scanning every type: its id, or 0. */
static uint32_t
scan_named(struct kvs_btf *b, const char *name, int kind, int fwd_union)
{
	uint32_t n, id;
	int32_t r;

	if (kind != BTF_KIND_FWD) {
		/* libbpf answers 0 (the id of void) for "void". */
		r = btf__find_by_name_kind(b->btf, name, (uint32_t)kind);
		return r > 0 ? (uint32_t)r : 0;
	}
	/* Both flavours of FWD share the kind. */
	n = btf__type_cnt(b->btf);
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b->btf, id);
		if (t != NULL && btf_is_fwd(t) && (int)btf_kflag(t) == fwd_union &&
		    strcmp(tname_of(b, t), name) == 0)
			return id;
	}
	return 0;
}

/*
 * scan_named, remembered.  libbpf finds a name by scanning all types
 * (0.2-0.3 ms on a vmlinux's 100,000) and walkers ask about one type member
 * by member, so each (kind, name)'s answer, found or not, is kept.
 */
static uint32_t
find_named(struct kvs_btf *b, const char *name, int kind, int fwd_union)
{
	char kb[256], *key = kb;
	size_t need = strlen(name) + 16;
	struct sent *se;
	uint32_t id;

	if (name[0] == '\0')
		return 0;
	if (need > sizeof(kb) && (key = malloc(need)) == NULL)
		return scan_named(b, name, kind, fwd_union);
	snprintf(key, need, "%d/%d/%s", kind, fwd_union, name);
	if ((se = sm_find(&b->names, key)) != NULL)
		id = se->id;
	else {
		id = scan_named(b, name, kind, fwd_union);
		if ((se = sm_get(&b->names, key)) != NULL)
			se->id = id;
	}
	if (key != kb)
		free(key);
	return id;
}

static bool
is_qualifier(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_TYPEDEF: case BTF_KIND_CONST: case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
		return true;
	}
	return false;
}

static kvs_kind_t
kind_of(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_INT: case BTF_KIND_FLOAT: return KVS_KIND_BASE;
	case BTF_KIND_PTR: return KVS_KIND_POINTER;
	case BTF_KIND_ARRAY: return KVS_KIND_ARRAY;
	case BTF_KIND_STRUCT: return KVS_KIND_STRUCT;
	case BTF_KIND_UNION: return KVS_KIND_UNION;
	case BTF_KIND_FWD: return btf_kflag(t) ? KVS_KIND_UNION : KVS_KIND_STRUCT;
	case BTF_KIND_ENUM: case BTF_KIND_ENUM64: return KVS_KIND_ENUM;
	case BTF_KIND_FUNC_PROTO: return KVS_KIND_FUNCTION;
	}
	return KVS_KIND_OTHER;
}

/*
 * Peel typedefs and qualifiers starting at id (0 = void), and replace a
 * struct/union declaration by its definition when one exists.  *out = the
 * final id (0 = void), *tp its type (NULL for void).
 */
int
bt_peel(struct kvs_btf *b, uint32_t id, uint32_t *out, const struct btf_type **tp,
    struct kvs_error *e)
{
	const struct btf_type *t = NULL;
	int depth;

	for (depth = 0; id != 0; depth++) {
		if (depth > MAX_TYPE_DEPTH)
			return kerr_set(e, KVS_E_DWARF, "BTF type chain at id %u too "
			    "deep (cycle?)", id);
		if ((t = type_at(b, id, e)) == NULL)
			return -1;
		if (is_qualifier(t)) {
			id = t->type;
			continue;
		}
		if (btf_is_fwd(t)) {
			uint32_t def = find_named(b, tname_of(b, t), btf_kflag(t) ?
			    BTF_KIND_UNION : BTF_KIND_STRUCT, 0);
			if (def != 0 && (t = type_at(b, def, e)) == NULL)
				return -1;
			if (def != 0)
				id = def;
		}
		break;
	}
	*out = id;
	*tp = id != 0 ? t : NULL;
	return 0;
}

struct shape {
	kvs_kind_t kind;
	uint64_t size;
	uint64_t count;     /* arrays: all dimensions, 0 if one is unknown */
	uint32_t elem;      /* arrays: element type (unpeeled); pointers: target */
};

static int type_size(struct kvs_btf *b, uint32_t id, uint64_t *size,
    kvs_kind_t *kind, int depth, struct kvs_error *e);

/*
 * The dimensions of the array t: BTF nests "int a[3][5]" as an array of 3
 * arrays of 5, where DWARF has one array type with two dimensions.  Nested
 * arrays are read as one (element: the innermost non-array type; an array
 * reached through a typedef stays the element, as in DWARF).  *count = the
 * product, 0 (and *flex) if a dimension is 0 / unknown.  With dims, its C
 * spelling ("[3][5]") is appended.
 */
static int
array_dims(struct kvs_btf *b, const struct btf_type *t, uint64_t *count,
    bool *flex, uint32_t *elem, char *dims, size_t dn, struct kvs_error *e)
{
	uint64_t n = 1;
	int depth;

	*flex = false;
	for (depth = 0;; depth++) {
		const struct btf_array *a = btf_array(t);
		const struct btf_type *next;

		if (depth > MAX_TYPE_DEPTH)
			return kerr_set(e, KVS_E_DWARF, "BTF array nests too deep");
		if (a->nelems == 0)
			*flex = true;
		else
			n *= a->nelems;
		if (dims != NULL) {
			size_t l = strlen(dims);
			if (a->nelems != 0)
				snprintf(dims + l, dn - l, "[%u]", a->nelems);
			else
				snprintf(dims + l, dn - l, "[]");
		}
		*elem = a->type;
		if (a->type == 0)
			break;
		if ((next = type_at(b, a->type, e)) == NULL)
			return -1;
		if (!btf_is_array(next))
			break;
		t = next;
	}
	*count = *flex ? 0 : n;
	return 0;
}

/* Shape of an already peeled type (t == NULL: void). */
static int
shape_of(struct kvs_btf *b, const struct btf_type *t, struct shape *sh,
    int depth, struct kvs_error *e)
{
	memset(sh, 0, sizeof(*sh));
	if (t == NULL) {
		sh->kind = KVS_KIND_VOID;
		return 0;
	}
	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "BTF type nests too deep");
	sh->kind = kind_of(t);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		sh->size = b->ptr_size;
		sh->elem = t->type;
		break;
	case BTF_KIND_ARRAY: {
		uint64_t esz;
		kvs_kind_t ek;
		bool flex;
		if (array_dims(b, t, &sh->count, &flex, &sh->elem, NULL, 0, e) != 0 ||
		    type_size(b, sh->elem, &esz, &ek, depth + 1, e) != 0)
			return -1;
		sh->size = sh->count * esz;
		break;
	}
	case BTF_KIND_INT: case BTF_KIND_FLOAT: case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: case BTF_KIND_ENUM: case BTF_KIND_ENUM64:
		sh->size = t->size;
		break;
	default:
		/* FWD (declared only), FUNC_PROTO, and kinds that are no
		 * type of a value: no size. */
		break;
	}
	return 0;
}

/* Size and kind of an unpeeled type. */
static int
type_size(struct kvs_btf *b, uint32_t id, uint64_t *size, kvs_kind_t *kind,
    int depth, struct kvs_error *e)
{
	const struct btf_type *t;
	struct shape sh;
	uint32_t p;

	if (bt_peel(b, id, &p, &t, e) != 0 || shape_of(b, t, &sh, depth, e) != 0)
		return -1;
	*size = sh.size;
	*kind = sh.kind;
	return 0;
}

/* ---------------------------------------------------------- type names */

/*
 * C spelling of the type id, with `decl` the declarator built so far
 * (e.g. "*" for a pointer, "[32]" for an array): "struct x *", "char [32]",
 * "int (*)(int)", "const char *".  Built outward-in as a C declaration is
 * read, exactly as dwarf.c's tname.
 */
static int
tname(struct kvs_btf *b, uint32_t id, char *decl, size_t n, int depth,
    struct kvs_error *e)
{
	const struct btf_type *t;
	const char *kw = "", *name;
	char head[TNAME_MAX];

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "BTF type id %u nests too deep", id);
	if (id == 0) {
		snprintf(head, sizeof(head), "void%s", decl[0] != '\0' ? " " : "");
		kvs_tn_prepend(decl, n, head);
		return 0;
	}
	if ((t = type_at(b, id, e)) == NULL)
		return -1;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		kvs_tn_prepend(decl, n, "*");
		return tname(b, t->type, decl, n, depth + 1, e);
	case BTF_KIND_TYPE_TAG:
		/* An annotation (__user, __rcu): DWARF spells no type for it. */
		return tname(b, t->type, decl, n, depth + 1, e);
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT: {
		const char *q = btf_is_const(t) ? "const" :
		    btf_is_volatile(t) ? "volatile" : "restrict";
		const struct btf_type *target = NULL;
		if (t->type != 0 && (target = type_at(b, t->type, e)) == NULL)
			return -1;
		if (target != NULL && btf_is_ptr(target)) {
			/* char *const p: the qualifier binds to the declarator */
			snprintf(head, sizeof(head), "%s%s", q,
			    decl[0] != '\0' ? " " : "");
			kvs_tn_prepend(decl, n, head);
			return tname(b, t->type, decl, n, depth + 1, e);
		}
		if (tname(b, t->type, decl, n, depth + 1, e) != 0)
			return -1;
		snprintf(head, sizeof(head), "%s ", q);
		kvs_tn_prepend(decl, n, head);
		return 0;
	}
	case BTF_KIND_ARRAY: {
		char dims[TNAME_MAX] = "";
		uint64_t count;
		uint32_t elem;
		bool flex;
		if (decl[0] == '*') {
			kvs_tn_prepend(decl, n, "(");
			kvs_tn_append(decl, n, ")");
		}
		if (array_dims(b, t, &count, &flex, &elem, dims, sizeof(dims), e) != 0)
			return -1;
		kvs_tn_append(decl, n, dims);
		return tname(b, elem, decl, n, depth + 1, e);
	}
	case BTF_KIND_FUNC_PROTO: {
		const struct btf_param *p = btf_params(t);
		char params[TNAME_MAX] = "(", one[TNAME_MAX];
		unsigned i, vlen = btf_vlen(t);
		if (decl[0] == '*') {
			kvs_tn_prepend(decl, n, "(");
			kvs_tn_append(decl, n, ")");
		}
		for (i = 0; i < vlen; i++) {
			one[0] = '\0';
			if (p[i].type == 0)
				snprintf(one, sizeof(one), "...");
			else if (tname(b, p[i].type, one, sizeof(one), depth + 1, e) != 0)
				return -1;
			if (i != 0)
				kvs_tn_append(params, sizeof(params), ", ");
			kvs_tn_append(params, sizeof(params), one);
		}
		if (vlen == 0)
			kvs_tn_append(params, sizeof(params), "void");
		kvs_tn_append(params, sizeof(params), ")");
		kvs_tn_append(decl, n, params);
		return tname(b, t->type, decl, n, depth + 1, e);
	}
	case BTF_KIND_STRUCT: kw = "struct "; break;
	case BTF_KIND_UNION: kw = "union "; break;
	case BTF_KIND_FWD: kw = btf_kflag(t) ? "union " : "struct "; break;
	case BTF_KIND_ENUM: case BTF_KIND_ENUM64: kw = "enum "; break;
	default: break;
	}
	name = tname_of(b, t);
	snprintf(head, sizeof(head), "%s%s%s", kw, name[0] != '\0' ? name :
	    "<anonymous>", decl[0] != '\0' ? " " : "");
	kvs_tn_prepend(decl, n, head);
	return 0;
}

/* Fill ti (all but offset and bit-field fields) for the type id. */
int
bt_describe(struct kvs_btf *b, uint32_t id, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	char buf[TNAME_MAX] = "";
	const struct btf_type *t;
	struct shape sh;
	uint32_t p;

	if (bt_peel(b, id, &p, &t, e) != 0 || shape_of(b, t, &sh, 0, e) != 0)
		return -1;
	ti->size = sh.size;
	ti->kind = sh.kind;
	ti->count = 0;
	ti->elem_size = 0;
	ti->elem_kind = KVS_KIND_OTHER;
	if (sh.kind == KVS_KIND_ARRAY) {
		ti->count = sh.count;
		if (type_size(b, sh.elem, &ti->elem_size, &ti->elem_kind, 1, e) != 0)
			return -1;
	} else if (sh.kind == KVS_KIND_POINTER) {
		if (type_size(b, sh.elem, &ti->elem_size, &ti->elem_kind, 1, e) != 0)
			return -1;
		if (ti->elem_kind == KVS_KIND_VOID || ti->elem_kind == KVS_KIND_FUNCTION)
			ti->elem_size = 0;
	}
	if (tname(b, id, buf, sizeof(buf), 0, e) != 0)
		return -1;
	if ((ti->type_name = intern(b, buf)) == NULL)
		return nomem(e);
	return 0;
}

const char *
bt_name(struct kvs_btf *b, uint32_t id, struct kvs_error *e)
{
	char buf[TNAME_MAX] = "";
	const char *s;

	if (tname(b, id, buf, sizeof(buf), 0, e) != 0)
		return NULL;
	if ((s = intern(b, buf)) == NULL)
		nomem(e);
	return s;
}

/* ------------------------------------------------------- name lookup */

/*
 * "struct x" / "union x" / "enum x", or a bare name tried as typedef, base
 * type, struct, union, enum (dwarf.c's order; a declaration found before a
 * definition of another kind is what the name means).  Returns 1 found
 * (*id; *decl if only a declaration), 0 not found.
 */
static int
lookup_type(struct kvs_btf *b, const char *type, uint32_t *id, bool *decl)
{
	/* kind, and for a FWD, its flavour (kflag: 1 = union) */
	static const struct { const char *kw; int kind[3], fwd; } pre[] = {
		{ "struct ", { BTF_KIND_STRUCT, BTF_KIND_FWD, -1 }, 0 },
		{ "union ", { BTF_KIND_UNION, BTF_KIND_FWD, -1 }, 1 },
		{ "enum ", { BTF_KIND_ENUM, BTF_KIND_ENUM64, -1 }, 0 },
		{ "class ", { BTF_KIND_STRUCT, BTF_KIND_FWD, -1 }, 0 },
	};
	static const struct { int kind, fwd; } bare[] = {
		{ BTF_KIND_TYPEDEF, 0 }, { BTF_KIND_INT, 0 }, { BTF_KIND_FLOAT, 0 },
		{ BTF_KIND_STRUCT, 0 }, { BTF_KIND_FWD, 0 },
		{ BTF_KIND_UNION, 0 }, { BTF_KIND_FWD, 1 },
		{ BTF_KIND_ENUM, 0 }, { BTF_KIND_ENUM64, 0 },
	};
	size_t i, j;

	*id = 0;
	*decl = false;
	while (*type == ' ')
		type++;
	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t l = strlen(pre[i].kw);
		const char *nm = type + l;
		if (strncmp(type, pre[i].kw, l) != 0)
			continue;
		while (*nm == ' ')
			nm++;
		for (j = 0; j < 3 && pre[i].kind[j] >= 0; j++)
			if ((*id = find_named(b, nm, pre[i].kind[j], pre[i].fwd)) != 0) {
				*decl = pre[i].kind[j] == BTF_KIND_FWD;
				return 1;
			}
		return 0;
	}
	for (i = 0; i < sizeof(bare) / sizeof(bare[0]); i++)
		if ((*id = find_named(b, type, bare[i].kind, bare[i].fwd)) != 0) {
			*decl = bare[i].kind == BTF_KIND_FWD;
			return 1;
		}
	return 0;
}

/* The defined type for a type name, or -1 with KVS_E_NOTYPE. */
int
bt_find_type(struct kvs_btf *b, const char *type, uint32_t *id, struct kvs_error *e)
{
	bool decl;

	if (!lookup_type(b, type, id, &decl))
		return kerr_set(e, KVS_E_NOTYPE, "type %s not found in BTF", type);
	if (decl)
		return kerr_set(e, KVS_E_NOTYPE, "type %s is declared but never "
		    "defined in BTF", type);
	return 0;
}

/* ------------------------------------------------------------- queries */

int
kvs_btf_type(struct kvs_btf *b, const char *type, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	uint32_t id;

	if (type == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name");
	memset(ti, 0, sizeof(*ti));
	if (bt_find_type(b, type, &id, e) != 0)
		return -1;
	if (bt_describe(b, id, ti, e) != 0)
		return kerr_push(e, "type %s", type);
	return 0;
}

/*
 * BTF describes only per-CPU variables (pahole emits a VAR for what lives
 * in .data..percpu, nothing else), so any other variable is KVS_E_NOTYPE
 * here: callers fall back to DWARF, or to the ELF symbol's size.
 */
int
kvs_btf_variable(struct kvs_btf *b, const char *var, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	const struct btf_type *t;
	uint32_t id;

	if (var == NULL)
		return kerr_set(e, KVS_E_INVAL, "no variable name");
	memset(ti, 0, sizeof(*ti));
	if ((id = find_named(b, var, BTF_KIND_VAR, 0)) == 0)
		return kerr_set(e, KVS_E_NOTYPE, "variable %s not found in BTF "
		    "(BTF describes per-CPU variables only)", var);
	if ((t = type_at(b, id, e)) == NULL || bt_describe(b, t->type, ti, e) != 0)
		return kerr_push(e, "variable %s", var);
	return 0;
}
