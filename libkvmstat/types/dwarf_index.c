/*
 * dwarf_index.c - the name index: one hash map per tag family, name -> DIE
 * offset, filled once on the first lookup (dw_ensure_index), with its rule (a
 * definition replaces a declaration, else the first wins).  In a linked
 * file it is read from the section bytes by threads (fast_index: the
 * sections, the unit boundaries, the threads, the progress bar and the
 * merge here; the reading of the units, dwarf_scan.c); otherwise, or when
 * that reader gives up, by libdwarf's walk (dw_walk_cus, which also gives the
 * DWARF version).  Also the lookups of a type name in the index and the
 * "not found" answer.  The DIEs are read by dwarf_die.c; what a name's DIE
 * says is dwarf_layout.c's.
 */
#include <gelf.h>
#include <libelf.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dwarf_internal.h"

/* ----------------------------------------------------------- the index */

static int
ix_put(struct kvs_dwarf *d, enum ix_kind k, const char *name, Dwarf_Off off,
    bool decl)
{
	struct hent *he = dw_hm_find(&d->ix[k], name);

	if (he != NULL) {
		/* A definition replaces a declaration; otherwise first wins. */
		if (he->decl && !decl) {
			he->off = off;
			he->decl = false;
		}
		return 0;
	}
	he = dw_hm_add(&d->ix[k], name);
	if (he == NULL)
		return -1;
	he->off = off;
	he->decl = decl;
	return 0;
}

static int
index_die(struct kvs_dwarf *d, Dwarf_Die die, struct kvs_error *e)
{
	Dwarf_Half tag;
	enum ix_kind k;
	const char *name;
	bool decl = false;
	Dwarf_Off off;

	if (dw_die_tag(d, die, &tag, e) != 0)
		return -1;
	switch (tag) {
	case DW_TAG_structure_type: case DW_TAG_class_type: k = IX_STRUCT; break;
	case DW_TAG_union_type: k = IX_UNION; break;
	case DW_TAG_enumeration_type: k = IX_ENUM; break;
	case DW_TAG_typedef: k = IX_TYPEDEF; break;
	case DW_TAG_base_type: k = IX_BASE; break;
	case DW_TAG_variable: k = IX_VAR; break;
	default:
		return 0;
	}
	if (dw_die_name(d, die, &name, e) != 0)
		return -1;
	if ((off = dw_die_off(d, die)) == 0)
		return kerr_set(e, KVS_E_DWARF, "DIE without offset");
	if (name == NULL && k == IX_VAR) {
		/* A definition completing an earlier declaration: named
		 * through DW_AT_specification. */
		Dwarf_Off spec;
		Dwarf_Die sd;
		if (dw_die_ref(d, die, DW_AT_specification, &spec, e) != 0)
			return -1;
		if (spec == 0)
			return 0;
		if (dw_die_at(d, spec, &sd, e) != 0)
			return -1;
		if (dw_die_name(d, sd, &name, e) != 0) {
			dwarf_dealloc_die(sd);
			return -1;
		}
		dwarf_dealloc_die(sd);
	} else if (dw_die_has(d, die, DW_AT_declaration, &decl, e) != 0)
		return -1;
	if (name == NULL)
		return 0; /* anonymous type: reachable only through references */
	if (ix_put(d, k, name, off, decl) != 0)
		return dw_nomem(e);
	return 0;
}

/*
 * Walk CU headers to the end (libdwarf restarts at the first CU after
 * NO_ENTRY).  With index, visit every top-level DIE.  A damaged CU does not
 * stop the walk: the rest of that CU is skipped, the first such error is
 * kept in d->index_err (lookups that find nothing then report it), and the
 * next CU is read from its header.  Only a damaged CU header ends the walk.
 */
static void
note_index_error(struct kvs_dwarf *d, const struct kvs_error *e)
{
	if (d->index_err == NULL)
		d->index_err = strdup(e->msg);
	d->index_failed = true;
}

void
dw_walk_cus(struct kvs_dwarf *d, bool index)
{
	Dwarf_Unsigned hlen, typeoff, next;
	Dwarf_Half ver, asz, lsz, esz, cutype;
	Dwarf_Off abbr;
	Dwarf_Sig8 sig;
	Dwarf_Error err = NULL;
	struct kvs_error e;
	int rc, maxver = 0;

	kerr_clear(&e);
	for (;;) {
		Dwarf_Die cu = NULL, die = NULL, sib = NULL;
		bool bad = false;

		rc = dwarf_next_cu_header_d(d->dbg, 1, &hlen, &ver, &abbr, &asz,
		    &lsz, &esz, &sig, &typeoff, &next, &cutype, &err);
		if (rc == DW_DLV_NO_ENTRY)
			break;
		if (rc != DW_DLV_OK) {
			dw_fail(d, &e, err, "reading compilation unit header", 0);
			if (index)
				note_index_error(d, &e);
			break;
		}
		if (ver > maxver)
			maxver = ver;
		if (!index)
			continue;
		rc = dwarf_siblingof_b(d->dbg, NULL, 1, &cu, &err);
		if (rc != DW_DLV_OK) {
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, &e, err, "reading compilation unit DIE", 0);
				note_index_error(d, &e);
			}
			continue;
		}
		rc = dwarf_child(cu, &die, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, &e, err, "reading compilation unit children",
			    dw_die_off(d, cu));
			bad = true;
		}
		while (rc == DW_DLV_OK) {
			if (index_die(d, die, &e) != 0) {
				bad = true;
				break;
			}
			rc = dw_next_sibling(d, die, &sib, &err);
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, &e, err, "walking top-level DIEs",
				    dw_die_off(d, die));
				bad = true;
			}
			dwarf_dealloc_die(die);
			die = rc == DW_DLV_OK ? sib : NULL;
		}
		if (die != NULL)
			dwarf_dealloc_die(die);
		dwarf_dealloc_die(cu);
		if (bad)
			note_index_error(d, &e);
		if (e.status == KVS_E_NOMEM)
			break;
	}
	if (maxver > d->version)
		d->version = maxver;
}

static int fast_index(struct kvs_dwarf *d);

int
dw_ensure_index(struct kvs_dwarf *d, struct kvs_error *e)
{
	(void)e;
	if (!d->indexed) {
		d->indexed = true;
		if (d->linked && fast_index(d) == 0)
			d->fast = true;
		else
			dw_walk_cus(d, true);
	}
	return 0;
}

/* A name was not found: KVS_E_NOTYPE, unless the index is incomplete (then
 * absence proves nothing, and KVS_E_DWARF says why). */
int
dw_not_found(struct kvs_dwarf *d, struct kvs_error *e, const char *fmt, ...)
{
	char msg[KVS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->index_failed)
		return kerr_set(e, KVS_E_DWARF, "%s (DWARF index incomplete: %s)",
		    msg, d->index_err != NULL ? d->index_err : "out of memory");
	return kerr_set(e, KVS_E_NOTYPE, "%s", msg);
}

/* ------------------------------------------------------- name lookup */

/*
 * "struct x" / "union x" / "enum x", or a bare name tried as typedef, base
 * type, struct, union, enum.  Returns 1 found (*off, *decl), 0 not found.
 */
static int
lookup_type(struct kvs_dwarf *d, const char *type, Dwarf_Off *off, bool *decl)
{
	static const struct { const char *kw; enum ix_kind k; } pre[] = {
		{ "struct ", IX_STRUCT }, { "union ", IX_UNION }, { "enum ", IX_ENUM },
		{ "class ", IX_STRUCT },
	};
	static const enum ix_kind bare[] = {
		IX_TYPEDEF, IX_BASE, IX_STRUCT, IX_UNION, IX_ENUM,
	};
	struct hent *he = NULL;
	size_t i;

	while (*type == ' ')
		type++;
	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t l = strlen(pre[i].kw);
		if (strncmp(type, pre[i].kw, l) == 0) {
			const char *nm = type + l;
			while (*nm == ' ')
				nm++;
			he = dw_hm_find(&d->ix[pre[i].k], nm);
			goto done;
		}
	}
	for (i = 0; i < sizeof(bare) / sizeof(bare[0]) && he == NULL; i++)
		he = dw_hm_find(&d->ix[bare[i]], type);
done:
	if (he == NULL)
		return 0;
	*off = he->off;
	*decl = he->decl;
	return 1;
}

/* The defined type DIE for a type name, or -1 with KVS_E_NOTYPE. */
int
dw_find_type(struct kvs_dwarf *d, const char *type, Dwarf_Off *off,
    struct kvs_error *e)
{
	bool decl;

	if (dw_ensure_index(d, e) != 0)
		return -1;
	if (!lookup_type(d, type, off, &decl))
		return dw_not_found(d, e, "type %s not found in DWARF", type);
	if (decl)
		return dw_not_found(d, e, "type %s is declared but never defined in "
		    "DWARF", type);
	return 0;
}

/* ------------------------------------------------ the fast index (linked) */

/*
 * fast_index: the same index as dw_walk_cus, read straight from the section
 * bytes of a linked file, the CUs spread over threads.  libdwarf builds a
 * DIE, an attribute list and an allocation per DIE and cannot be shared
 * between threads; here a CU's abbreviation table is decoded once, each
 * top-level DIE costs a few byte reads, and the children of a DIE (function
 * bodies, members) are jumped over by DW_AT_sibling, which gcc writes on
 * every DIE with children (they are walked form by form when it is absent).
 * Names point into the section data (.debug_str, .debug_line_str or the
 * DIE itself), which libelf maps from the file and keeps until elf_end.
 *
 * Each thread indexes a contiguous run of CUs into its own maps with the
 * index's rule (a definition replaces a declaration, else the first wins);
 * the maps are merged in CU order with the same rule, which gives the
 * answer one walk in CU order gives.  Anything this reader does not expect
 * (a compressed or relocatable section, an unknown form or unit, a
 * reference into another CU, a truncated DIE) makes it give up as a whole:
 * dw_walk_cus then does the work through libdwarf, damaged CUs included.
 */

/* The data of an uncompressed section by name; false when it is absent
 * (s zeroed), or compressed/unreadable (then the fast path gives up). */
static bool
fx_section(Elf *elf, size_t shstrndx, const char *want, struct fsec *s)
{
	Elf_Scn *scn = NULL;

	s->p = NULL;
	s->n = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *data;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm == NULL || strcmp(nm, want) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			return false;
		data = elf_getdata(scn, NULL);
		if (data == NULL || data->d_buf == NULL || data->d_size != sh.sh_size)
			return false;
		s->p = data->d_buf;
		s->n = data->d_size;
		return true;
	}
	return true;
}

static double
fx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Draw the bar on stderr (a terminal) once the work has taken 0.5 s. */
static void
fx_bar(double t0, uint64_t done, uint64_t total, bool *shown, bool last)
{
	char bar[41];
	unsigned i, fill;

	if (!*shown && (last || fx_now() - t0 < 0.5))
		return;
	if (last) {
		fprintf(stderr, "\r%60s\r", "");
		return;
	}
	*shown = true;
	fill = total ? (unsigned)(done * 40 / total) : 40;
	for (i = 0; i < 40; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[40] = '\0';
	fprintf(stderr, "\rindexing DWARF [%s] %3u%%", bar,
	    total ? (unsigned)(done * 100 / total) : 100);
	fflush(stderr);
}

static int
fast_index(struct kvs_dwarf *d)
{
	struct fx_shared sh;
	struct fx_thread *th = NULL;
	size_t shstrndx, i, k, ncpu, nth = 0, cap = 0;
	uint64_t off, chunk, dropped;
	long np;
	int rc = -1;
	bool shown = false, tty;
	double t0 = fx_now();

	memset(&sh, 0, sizeof(sh));
	if (getenv("KVS_DWARF_SLOW") != NULL ||
	    elf_getshdrstrndx(d->elf, &shstrndx) != 0)
		return -1;
	if (!fx_section(d->elf, shstrndx, ".debug_info", &sh.info) ||
	    !fx_section(d->elf, shstrndx, ".debug_abbrev", &sh.abbrev) ||
	    !fx_section(d->elf, shstrndx, ".debug_str", &sh.str) ||
	    !fx_section(d->elf, shstrndx, ".debug_line_str", &sh.line_str) ||
	    !fx_section(d->elf, shstrndx, ".debug_str_offsets", &sh.str_offsets) ||
	    sh.info.p == NULL || sh.abbrev.p == NULL)
		return -1;
	if (d->mapped) {
		/* pages of libelf's own mapping of the file, never its copies */
		size_t fsz = 0;
		char *raw = elf_rawfile(d->elf, &fsz);
		sh.drop = raw != NULL && (const char *)sh.info.p >= raw &&
		    sh.info.n <= fsz && (const char *)sh.info.p - raw <=
		    (ptrdiff_t)(fsz - sh.info.n);
	}
	/* The unit boundaries. */
	for (off = 0, dropped = 0; off < sh.info.n;) {
		uint64_t len = sh.info.n - off >= 4 ? fx_le(sh.info.p + off, 4) : 0;
		unsigned hl = 4;

		if (len == 0xffffffff) {
			if (sh.info.n - off < 12)
				goto out;
			len = fx_le(sh.info.p + off + 4, 8);
			hl = 12;
		}
		if (len == 0 || len > sh.info.n - off - hl)
			goto out;
		if (sh.ncu + 1 >= cap) {
			size_t nc = cap ? cap * 2 : 1024;
			uint64_t *n = realloc(sh.cu, nc * sizeof(*n));
			if (n == NULL)
				goto out;
			sh.cu = n;
			cap = nc;
		}
		sh.cu[sh.ncu++] = off;
		off += hl + len;
		/* each header read maps pages around it: let them go */
		if (sh.drop && off - dropped >= (8u << 20)) {
			dw_fx_drop(&sh.info, dropped, off);
			dropped = off;
		}
	}
	if (sh.drop)
		dw_fx_drop(&sh.info, dropped, sh.info.n);
	if (sh.ncu == 0)
		goto out;
	sh.cu[sh.ncu] = sh.info.n;
	if ((sh.cu_die = calloc(sh.ncu, sizeof(*sh.cu_die))) == NULL)
		goto out;
	np = sysconf(_SC_NPROCESSORS_ONLN);
	ncpu = np < 1 ? 1 : np > 16 ? 16 : (size_t)np;
	/* A thread is worth it past ~4 MB of .debug_info. */
	nth = sh.info.n / (4u << 20) + 1;
	if (nth > ncpu)
		nth = ncpu;
	if (nth > sh.ncu)
		nth = sh.ncu;
	th = calloc(nth, sizeof(*th));
	if (th == NULL)
		goto out;
	/* Contiguous runs of CUs of about equal bytes. */
	chunk = sh.info.n / nth + 1;
	for (i = 0, k = 0; k < nth; k++) {
		th[k].sh = &sh;
		th[k].cu0 = i;
		while (i < sh.ncu && (k == nth - 1 || sh.cu[i + 1] <= chunk * (k + 1)))
			i++;
		th[k].cu1 = i;
		for (size_t j = 0; j < IX__N; j++)
			th[k].ix[j].own_keys = false;
	}
	for (k = 1; k < nth; k++)
		if (pthread_create(&th[k].tid, NULL, dw_fx_run, &th[k]) != 0) {
			/* run it here instead */
			th[k].tid = pthread_self();
			dw_fx_run(&th[k]);
		}
	tty = d->progress && isatty(2);
	if (!tty || nth == 1)
		dw_fx_run(&th[0]);
	else {
		/* The calling thread draws the bar; its run goes to a thread. */
		pthread_t t0id;
		if (pthread_create(&t0id, NULL, dw_fx_run, &th[0]) != 0)
			dw_fx_run(&th[0]);
		else {
			for (;;) {
				uint64_t done = atomic_load(&sh.done);
				struct timespec ts = { 0, 50 * 1000 * 1000 };
				if (done >= sh.info.n || atomic_load(&sh.stop))
					break;
				fx_bar(t0, done, sh.info.n, &shown, false);
				nanosleep(&ts, NULL);
			}
			pthread_join(t0id, NULL);
		}
	}
	for (k = 1; k < nth; k++)
		if (!pthread_equal(th[k].tid, pthread_self()))
			pthread_join(th[k].tid, NULL);
	fx_bar(t0, 0, 0, &shown, true);
	for (k = 0; k < nth; k++)
		if (th[k].failed || th[k].nomem)
			goto out;
	/* Merge in CU order, with the index's rule. */
	for (k = 0; k < nth; k++) {
		for (i = 0; i < IX__N; i++) {
			struct hmap *m = &th[k].ix[i];
			for (size_t j = 0; j < m->n; j++)
				if (ix_put(d, (enum ix_kind)i, m->ent[j].key,
				    m->ent[j].off, m->ent[j].decl) != 0)
					goto fail_merge;
		}
		if (th[k].maxver > d->version)
			d->version = th[k].maxver;
	}
	/* The name copies now belong to the handle. */
	for (k = 0; k < nth; k++) {
		char **nb = realloc(d->blk, (d->nblk + th[k].nblk + 1) * sizeof(*nb));
		if (nb == NULL)
			goto fail_merge;
		d->blk = nb;
		if (th[k].nblk > 0)     /* a thread that kept no names has no blk */
			memcpy(d->blk + d->nblk, th[k].blk, th[k].nblk * sizeof(*nb));
		d->nblk += th[k].nblk;
		th[k].nblk = 0;
	}
	if (sh.drop) {
		d->cu_die = sh.cu_die;
		sh.cu_die = NULL;
		d->ncu = sh.ncu;
		d->info_p = sh.info.p;
		d->info_n = sh.info.n;
	}
	rc = 0;
	goto out;
fail_merge:
	for (i = 0; i < IX__N; i++)
		dw_hm_free(&d->ix[i], NULL);
	while (d->nblk > 0)
		free(d->blk[--d->nblk]);
out:
	for (k = 0; th != NULL && k < nth; k++) {
		for (i = 0; i < IX__N; i++)
			dw_hm_free(&th[k].ix[i], NULL);
		free(th[k].ab);
		free(th[k].attrs);
		while (th[k].nblk > 0)
			free(th[k].blk[--th[k].nblk]);
		free(th[k].blk);
	}
	free(th);
	free(sh.cu);
	free(sh.cu_die);
	return rc;
}
