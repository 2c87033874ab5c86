/*
 * types.c - the types front: one place that answers "what is this type,
 * member or variable?" for a handle, by asking its providers in turn.
 *
 * The chain, asked in this order, where only "not found" (KVS_E_NOTYPE)
 * falls through to the next one:
 *   1. the layout cache (cache.c): answers kept on disk per kernel file;
 *   2. the kernel's BTF (btf.c): the kernel file's or its kernel.debug's
 *      .BTF section, else, when the files hold no types at all (or there
 *      is no kernel file), the BTF the kernel keeps in memory;
 *   3. the kernel's DWARF (dwarf.c), from kernel.debug when there is one;
 *   4. each module's DWARF, in the order the modules were added (a
 *      module's private structures exist only in its own debug info).
 * Every provider is opened on its first question.  The policy lives here
 * too: KVS_TYPES=dwarf in the environment skips BTF (to compare the two,
 * or to sidestep a BTF problem), KVS_NO_CACHE=1 or the owner's no_cache
 * skips the cache; modules' answers are never cached.
 *
 * The front knows no handle: what it needs of the kernel's memory (BTF
 * from a dump opened without a kernel file) comes through the two
 * callbacks its owner gives (struct kvs_types_config), and every answer
 * and error goes to the kvs_error the caller passes.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

#define TYPES_MAX_MODULES 64

struct kvs_types {
	struct kvs_types_config cfg;
	char *kernel_path;                /* for messages */
	bool dwarf_alone;                 /* KVS_TYPES=dwarf */
	struct kvs_lcache *lcache;        /* NULL: off, none, or not yet tried */
	bool lcache_tried;
	struct kvs_btf *btf;              /* NULL: none, or not yet tried */
	bool btf_tried;
	struct kvs_dwarf *dwarf;          /* NULL until first use, or none */
	bool dwarf_tried;
	struct types_module {
		struct Elf *elf;          /* the owner's */
		struct kvs_dwarf *dwarf;
		bool tried;
	} mods[TYPES_MAX_MODULES];
	unsigned nmods;
};

bool
kvs_elf_has_section(struct Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
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

struct kvs_types *
kvs_types_new(const struct kvs_types_config *cfg)
{
	struct kvs_types *t = calloc(1, sizeof(*t));
	const char *env = getenv("KVS_TYPES");

	if (t == NULL)
		return NULL;
	t->cfg = *cfg;
	t->kernel_path = strdup(cfg->kernel_path != NULL ? cfg->kernel_path : "(none)");
	if (t->kernel_path == NULL) {
		free(t);
		return NULL;
	}
	t->cfg.kernel_path = t->kernel_path;
	t->dwarf_alone = env != NULL && strcmp(env, "dwarf") == 0;
	return t;
}

void
kvs_types_free(struct kvs_types *t, bool write_cache)
{
	unsigned i;

	if (t == NULL)
		return;
	kvs_lcache_close(t->lcache, write_cache);
	if (t->dwarf != NULL)
		kvs_dwarf_close(t->dwarf);
	kvs_btf_close(t->btf);
	for (i = 0; i < t->nmods; i++)
		if (t->mods[i].dwarf != NULL)
			kvs_dwarf_close(t->mods[i].dwarf);
	free(t->kernel_path);
	free(t);
}

int
kvs_types_add_module(struct kvs_types *t, struct Elf *elf, struct kvs_error *e)
{
	if (t->nmods == TYPES_MAX_MODULES)
		return kerr_set(e, KVS_E_INVAL, "too many modules (%d)", TYPES_MAX_MODULES);
	t->mods[t->nmods++] = (struct types_module){ .elf = elf };
	return 0;
}

/* ------------------------------------------------------------ providers */

/*
 * The BTF the kernel keeps in memory, asked only when the files hold no
 * types: where it lies comes from the owner (the OS knows), the bytes
 * through the owner's read.  Any failure means "no BTF": DWARF, or the
 * "no types" message, answers then.
 */
static struct kvs_btf *
memory_btf(struct kvs_types *t)
{
	struct kvs_btf *b = NULL;
	struct kvs_error e;
	uint64_t kva, len;
	void *buf;

	if (t->cfg.btf_where == NULL || t->cfg.read == NULL)
		return NULL;
	kerr_clear(&e);
	if (t->cfg.btf_where(t->cfg.arg, &kva, &len, &e) != 0 || len == 0 ||
	    len > SIZE_MAX || (buf = malloc((size_t)len)) == NULL)
		return NULL;
	if (t->cfg.read(t->cfg.arg, kva, buf, (size_t)len, &e) != 0 ||
	    kvs_btf_open_mem(&b, buf, (size_t)len, &e) != 0)
		b = NULL;
	free(buf);
	return b;
}

/*
 * The kernel file's BTF (or its kernel.debug's), opened on first use: NULL
 * if there is none (kernels built without BTF), if it cannot be parsed (DWARF then
 * answers everything, as before), or with KVS_TYPES=dwarf.
 */
static struct kvs_btf *
need_btf(struct kvs_types *t)
{
	struct kvs_error e;

	if (t->btf_tried)
		return t->btf;
	t->btf_tried = true;
	if (t->dwarf_alone)
		return NULL;
	kerr_clear(&e);
	if (t->cfg.kelf != NULL && kvs_btf_open_elf(&t->btf, t->cfg.kelf, &e) == 1 &&
	    t->cfg.delf != NULL)
		(void)kvs_btf_open_elf(&t->btf, t->cfg.delf, &e);
	/* No kernel file, or one with no types at all: the memory's own. */
	if (t->btf == NULL && (t->cfg.kelf == NULL || (t->cfg.delf == NULL &&
	    !kvs_elf_has_section(t->cfg.kelf, ".debug_info"))))
		t->btf = memory_btf(t);
	return t->btf;
}

static int
need_dwarf(struct kvs_types *t, struct kvs_error *e)
{
	if (t->dwarf != NULL)
		return 0;
	if (t->dwarf_tried)
		return kerr_set(e, KVS_E_DWARF, "no usable DWARF for kernel %s",
		    t->kernel_path);
	t->dwarf_tried = true;
	if (t->cfg.kelf == NULL)
		return kerr_set(e, KVS_E_DWARF, "no DWARF: no kernel file given (-N), "
		    "and the dump's own types (BTF) do not have this");
	if (kvs_dwarf_open(&t->dwarf, t->cfg.delf ? t->cfg.delf : t->cfg.kelf, e) != 0) {
		t->dwarf = NULL;
		return kerr_push(e, "kernel %s", t->kernel_path);
	}
	kvs_dwarf_set_opts(t->dwarf, t->cfg.file_mapped, t->cfg.progress);
	return 0;
}

/*
 * The layout cache, opened on the first type question: NULL when the
 * owner or the environment turned it off (no_cache, KVS_NO_CACHE=1) or
 * there is no cache directory.  It stands before the kernel's own BTF and
 * DWARF only.
 */
static struct kvs_lcache *
need_cache(struct kvs_types *t)
{
	const char *env;

	if (t->lcache_tried)
		return t->lcache;
	t->lcache_tried = true;
	env = getenv("KVS_NO_CACHE");
	if (t->cfg.no_cache || (env != NULL && strcmp(env, "0") != 0 && env[0] != '\0'))
		return NULL;
	t->lcache = kvs_lcache_open(t->cfg.kelf, t->cfg.kfd, t->cfg.delf, t->cfg.dfd,
	    t->dwarf_alone ? "dwarf" : "btf", t->cfg.note);
	return t->lcache;
}

/* A module's DWARF, opened on its first question (NULL: it has none). */
static struct kvs_dwarf *
module_dwarf(struct types_module *m)
{
	struct kvs_error e;

	if (m->dwarf == NULL && !m->tried) {
		m->tried = true;
		kerr_clear(&e);
		if (kvs_dwarf_open(&m->dwarf, m->elf, &e) != 0)
			m->dwarf = NULL;
	}
	return m->dwarf;
}

/* ---------------------------------------------------------- questions */

/* One question to BTF (bt) or, when bt is NULL, to DWARF (d). */
static int
one_query(struct kvs_btf *bt, struct kvs_dwarf *d, enum kvs_tq q, const char *a,
    const char *b, struct kvs_typeinfo *ti, struct kvs_error *e)
{
	switch (q) {
	case KVS_TQ_TYPE:
		return bt != NULL ? kvs_btf_type(bt, a, ti, e) : kvs_dwarf_type(d, a, ti, e);
	case KVS_TQ_MEMBER:
		return bt != NULL ? kvs_btf_member(bt, a, b, ti, e) :
		    kvs_dwarf_member(d, a, b, ti, e);
	default:
		return bt != NULL ? kvs_btf_variable(bt, a, ti, e) :
		    kvs_dwarf_variable(d, a, ti, e);
	}
}

/* The kernel's own types: BTF, then DWARF. */
static int
kernel_query(struct kvs_types *t, enum kvs_tq q, const char *a, const char *b,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	struct kvs_btf *bt = need_btf(t);
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
		if (q == KVS_TQ_MEMBER && be.status == KVS_E_NOTYPE &&
		    kvs_btf_type(bt, a, &t2, &e2) == 0) {
			*e = be;
			return -1;
		}
	}
	if (need_dwarf(t, e) != 0) {
		if (bt != NULL)
			*e = be; /* BTF's answer says more than "no DWARF" */
		return -1;
	}
	return one_query(NULL, t->dwarf, q, a, b, ti, e);
}

int
kvs_types_query(struct kvs_types *t, enum kvs_tq q, const char *a, const char *b,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	static const char qc[] = { 'T', 'M', 'V' };
	struct kvs_lcache *c = need_cache(t);
	const char *nf = NULL;
	unsigned i;

	if (a == NULL || (q == KVS_TQ_MEMBER && b == NULL))
		return kerr_set(e, KVS_E_INVAL, "no type, member or variable name");
	if (c != NULL && kvs_lcache_get(c, qc[q], a, q == KVS_TQ_MEMBER ? b : NULL,
	    ti, &nf) == 1) {
		if (nf == NULL)
			return 0;
		kerr_set(e, KVS_E_NOTYPE, "%s", nf);
	} else if (kernel_query(t, q, a, b, ti, e) == 0) {
		if (c != NULL)
			kvs_lcache_put(c, qc[q], a, q == KVS_TQ_MEMBER ? b : NULL, ti, NULL);
		return 0;
	} else if (c != NULL && e->status == KVS_E_NOTYPE)
		kvs_lcache_put(c, qc[q], a, q == KVS_TQ_MEMBER ? b : NULL, NULL, e->msg);
	for (i = 0; i < t->nmods && e->status == KVS_E_NOTYPE; i++) {
		struct kvs_dwarf *d = module_dwarf(&t->mods[i]);
		struct kvs_error e2;

		kerr_clear(&e2);
		if (d != NULL && one_query(NULL, d, q, a, b, ti, &e2) == 0) {
			kerr_clear(e);
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------ members */

/* The kernel's own members of type: BTF, then DWARF. */
static int
kernel_members(struct kvs_types *t, const char *type, kvs_member_cb cb, void *arg,
    struct kvs_error *e)
{
	struct kvs_btf *bt;
	struct kvs_error be;
	int rc;

	if ((bt = need_btf(t)) != NULL) {
		kerr_clear(&be);
		rc = kvs_btf_members(bt, type, cb, arg, &be);
		if (rc != -1 || be.status != KVS_E_NOTYPE) {
			*e = be;
			return rc;
		}
	}
	if (need_dwarf(t, e) != 0) {
		if (bt != NULL)
			*e = be;
		return -1;
	}
	return kvs_dwarf_members(t->dwarf, type, cb, arg, e);
}

/*
 * kvs_types_peel and kvs_types_enumerators: BTF, DWARF, then the modules'
 * DWARF, each asked only when the one before said "not found" (as
 * kernel_members and module_members do for members lists).  Not cached:
 * answers are strings the providers intern, and BTF answers in
 * microseconds.
 */
struct tq2 {
	const char *type;
	struct kvs_typepeel *p;     /* peel, or enumerators: */
	kvs_enum_cb cb;
	void *arg;
};

static int
ask_btf(struct kvs_btf *b, const struct tq2 *q, struct kvs_error *e)
{
	return q->p != NULL ? kvs_btf_peel(b, q->type, q->p, e) :
	    kvs_btf_enumerators(b, q->type, q->cb, q->arg, e);
}

static int
ask_dwarf(struct kvs_dwarf *d, const struct tq2 *q, struct kvs_error *e)
{
	return q->p != NULL ? kvs_dwarf_peel(d, q->type, q->p, e) :
	    kvs_dwarf_enumerators(d, q->type, q->cb, q->arg, e);
}

static int
ask_all(struct kvs_types *t, const struct tq2 *q, struct kvs_error *e)
{
	struct kvs_btf *bt;
	struct kvs_error be;
	unsigned i;
	int rc;

	if (q->type == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name");
	if ((bt = need_btf(t)) != NULL) {
		kerr_clear(&be);
		rc = ask_btf(bt, q, &be);
		if (rc != -1 || be.status != KVS_E_NOTYPE) {
			*e = be;
			return rc;
		}
	}
	if (need_dwarf(t, e) != 0) {
		if (bt != NULL)
			*e = be;
		rc = -1;
	} else
		rc = ask_dwarf(t->dwarf, q, e);
	for (i = 0; i < t->nmods && rc == -1 && e->status == KVS_E_NOTYPE; i++) {
		struct kvs_dwarf *d = module_dwarf(&t->mods[i]);
		struct kvs_error e2;

		if (d == NULL)
			continue;
		kerr_clear(&e2);
		rc = ask_dwarf(d, q, &e2);
		if (rc != -1 || e2.status != KVS_E_NOTYPE) {
			*e = e2;
			return rc;
		}
	}
	return rc;
}

int
kvs_types_peel(struct kvs_types *t, const char *type, struct kvs_typepeel *p,
    struct kvs_error *e)
{
	const struct tq2 q = { type, p, NULL, NULL };

	return ask_all(t, &q, e);
}

int
kvs_types_enumerators(struct kvs_types *t, const char *type, kvs_enum_cb cb, void *arg,
    struct kvs_error *e)
{
	const struct tq2 q = { type, NULL, cb, arg };

	if (cb == NULL)
		return kerr_set(e, KVS_E_INVAL, "no callback");
	return ask_all(t, &q, e);
}

int
kvs_types_constant(struct kvs_types *t, const char *name, int64_t *value,
    const char **enum_type, struct kvs_error *e)
{
	struct kvs_btf *bt;

	if (name == NULL || value == NULL || enum_type == NULL)
		return kerr_set(e, KVS_E_INVAL, "no name, or no place for the answer");
	if ((bt = need_btf(t)) == NULL)
		return kerr_set(e, KVS_E_NOTYPE, "enumerator %s: the kernel has no BTF to "
		    "search (ask kvs_type_enumerators of its enum)", name);
	return kvs_btf_constant(bt, name, value, enum_type, e);
}

/* Members copied out for the cache (the strings stay the providers'). */
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

/* The modules' members of type, after the kernel said "not found". */
static int
module_members(struct kvs_types *t, const char *type, kvs_member_cb cb, void *arg,
    int rc, struct kvs_error *e)
{
	unsigned i;

	for (i = 0; i < t->nmods && rc == -1 && e->status == KVS_E_NOTYPE; i++) {
		struct kvs_dwarf *d = module_dwarf(&t->mods[i]);
		struct kvs_error e2;

		if (d == NULL)
			continue;
		kerr_clear(&e2);
		rc = kvs_dwarf_members(d, type, cb, arg, &e2);
		if (rc != -1 || e2.status != KVS_E_NOTYPE) {
			*e = e2;
			return rc;
		}
	}
	return rc;
}

/*
 * Members of a struct or union: the layout cache, then BTF, then DWARF,
 * then the modules' DWARF, as kvs_types_query; only "not found" falls
 * through (a walk the callback stopped, or an error met half-way, is the
 * answer).  With the cache the kernel's list is read whole, kept, and then
 * given to cb from the cache's copy.
 */
int
kvs_types_members(struct kvs_types *t, const char *type, kvs_member_cb cb, void *arg,
    struct kvs_error *e)
{
	struct kvs_lcache *c;
	const struct kvs_member_info *cm = NULL;
	const char *nf = NULL;
	struct mcollect mc = { NULL, 0, 0, false };
	size_t cn = 0, j;
	int rc;

	if (type == NULL || cb == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name or callback");
	if ((c = need_cache(t)) == NULL)
		return module_members(t, type, cb, arg, kernel_members(t, type, cb, arg, e), e);
	if (kvs_lcache_members_get(c, type, &cm, &cn, &nf) != 1) {
		rc = kernel_members(t, type, mcollect_cb, &mc, e);
		if (mc.nomem) {
			free(mc.m);
			return kerr_set(e, KVS_E_NOMEM, "out of memory");
		}
		if (rc == 0)
			kvs_lcache_members_put(c, type, mc.m, mc.n, NULL);
		else if (e->status == KVS_E_NOTYPE)
			kvs_lcache_members_put(c, type, NULL, 0, e->msg);
		if (rc != 0 || kvs_lcache_members_get(c, type, &cm, &cn, &nf) != 1) {
			/* not kept (an error, or the cache could not take it):
			 * give what was read */
			for (j = 0; j < mc.n; j++) {
				int crc = cb(arg, &mc.m[j]);
				if (crc != 0) {
					free(mc.m);
					return crc;
				}
			}
			free(mc.m);
			return module_members(t, type, cb, arg, rc, e);
		}
		free(mc.m);
	}
	if (nf != NULL)
		return module_members(t, type, cb, arg,
		    kerr_set(e, KVS_E_NOTYPE, "%s", nf), e);
	for (j = 0; j < cn; j++)
		if ((rc = cb(arg, &cm[j])) != 0)
			return rc;
	return 0;
}

/* -------------------------------------------------------- description */

int
kvs_types_dwarf_version(struct kvs_types *t)
{
	struct kvs_error e;

	/* Not worth a DWARF load when BTF answers the types: DWARF's version
	 * is reported when DWARF is, or was, in use. */
	kerr_clear(&e);
	if ((need_btf(t) == NULL || t->dwarf != NULL) && need_dwarf(t, &e) == 0)
		return kvs_dwarf_version(t->dwarf);
	return 0;
}

void
kvs_types_used(const struct kvs_types *t, bool *btf, bool *btf_tried, bool *dwarf)
{
	if (btf != NULL)
		*btf = t->btf != NULL;
	if (btf_tried != NULL)
		*btf_tried = t->btf_tried;
	if (dwarf != NULL)
		*dwarf = t->dwarf != NULL;
}
