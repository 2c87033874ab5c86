/*
 * btf_dwarf_lookup.c - helper of vmlinux_btf.sh: asks libkvmstat's BTF layer
 * (types/btf.c) and its DWARF layer (types/dwarf.c) the same questions on
 * one kernel file and prints every difference.
 *
 *   btf_dwarf_lookup VMLINUX TAG...
 *
 * For each struct TAG: the type itself, then every member by dotted path
 * (members of anonymous structs and unions by their own names, nested
 * named structs and unions descended into).  The member list comes from
 * libbpf directly, not from btf.c.  Every field of struct kvs_typeinfo is
 * compared, type_name by string.  Prints one line per type, the timings
 * and peak RSS of each layer, and exits 0 only if nothing differs (1 on a
 * difference, 2 when it cannot run).  The one difference BTF cannot avoid
 * is reported but allowed: an array's dimensions as the encoder kept them
 * (pahole writes "int [3][5]" as one dimension, "int [15]"; "[0]" and "[]"
 * are both nelems 0), when everything else is equal.
 */
#include <bpf/btf.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvs_private.h"

#define MAXQ 8192

struct q {
	char type[128], path[256];
};

static struct q qs[MAXQ];
static int nq;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long
rss_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

static const struct btf_type *
peel(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	int depth = 0;

	while (t != NULL && depth++ < 32 && (btf_is_mod(t) || btf_is_typedef(t) ||
	    btf_is_type_tag(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

static void
add(const char *type, const char *path)
{
	if (nq == MAXQ) {
		fprintf(stderr, "too many queries\n");
		exit(2);
	}
	snprintf(qs[nq].type, sizeof(qs[nq].type), "%s", type);
	snprintf(qs[nq].path, sizeof(qs[nq].path), "%s", path);
	nq++;
}

/* Every member path of the struct/union t, prefixed by prefix. */
static void
members(const struct btf *btf, const struct btf_type *t, const char *type,
    const char *prefix, int depth)
{
	const struct btf_member *m = btf_members(t);
	unsigned i;

	if (depth > 8)
		return;
	for (i = 0; i < btf_vlen(t); i++) {
		const char *nm = btf__name_by_offset(btf, m[i].name_off);
		const struct btf_type *mt = peel(btf, m[i].type);
		char path[256];

		if (nm == NULL || nm[0] == '\0') {
			if (mt != NULL && btf_is_composite(mt))
				members(btf, mt, type, prefix, depth + 1);
			continue;
		}
		snprintf(path, sizeof(path), "%s%s", prefix, nm);
		add(type, path);
		if (mt != NULL && btf_is_composite(mt)) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%.254s.", path);
			members(btf, mt, type, sub, depth + 1);
		}
	}
}

/* How many structs named tag the BTF holds (dedup keeps different ones). */
static int
definitions(const struct btf *btf, const char *tag)
{
	__u32 id, n = btf__type_cnt(btf);
	int c = 0;

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (btf_is_struct(t) && strcmp(btf__name_by_offset(btf, t->name_off),
		    tag) == 0)
			c++;
	}
	return c;
}

static void
fmt(char *buf, size_t n, int rc, const struct kvs_typeinfo *ti,
    const struct kvs_error *e)
{
	if (rc != 0)
		snprintf(buf, n, "error %d: %s", e->status, e->msg);
	else
		snprintf(buf, n, "off %llu size %llu kind %d count %llu elem %llu/%d "
		    "bits %u@%u \"%s\"", (unsigned long long)ti->offset,
		    (unsigned long long)ti->size, ti->kind,
		    (unsigned long long)ti->count, (unsigned long long)ti->elem_size,
		    ti->elem_kind, ti->bit_size, ti->bit_offset, ti->type_name);
}

/* s with each run of array dimensions replaced by their product. */
static void
dims_folded(const char *s, char *out, size_t n)
{
	size_t o = 0;

	while (*s != '\0' && o + 24 < n) {
		unsigned long long prod = 1;
		if (*s != '[') {
			out[o++] = *s++;
			continue;
		}
		while (*s == '[') {
			char *end;
			unsigned long long v = strtoull(s + 1, &end, 10);
			if (*end != ']')
				break;
			prod = end == s + 1 ? 0 : prod * v;
			s = end + 1;
		}
		o += (size_t)snprintf(out + o, n - o, "[%llu]", prod);
	}
	out[o] = '\0';
}

static int
ask(void *h, bool btf, const struct q *q, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	kerr_clear(e);
	memset(ti, 0, sizeof(*ti));
	if (btf)
		return q->path[0] == '\0' ? kvs_btf_type(h, q->type, ti, e) :
		    kvs_btf_member(h, q->type, q->path, ti, e);
	return q->path[0] == '\0' ? kvs_dwarf_type(h, q->type, ti, e) :
	    kvs_dwarf_member(h, q->type, q->path, ti, e);
}

int
main(int argc, char **argv)
{
	static struct kvs_typeinfo bti[MAXQ];
	static int brc[MAXQ];
	static char bmsg[MAXQ][KVS_MSG_MAX];
	struct kvs_btf *b;
	struct kvs_dwarf *d;
	struct kvs_error e;
	const struct btf *raw;
	struct btf *own;
	double t0, tb_open, tb_all, td_open, td_all;
	long rss_btf;
	int i, fd, bad = 0, known = 0, ti0;
	Elf *elf;

	if (argc < 3 || elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "usage: %s VMLINUX TAG...\n", argv[0]);
		return 2;
	}
	if ((fd = open(argv[1], O_RDONLY)) < 0 ||
	    (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL) {
		fprintf(stderr, "cannot open %s as ELF\n", argv[1]);
		return 2;
	}
	kerr_clear(&e);

	/* BTF first, alone, so its time and memory are its own. */
	t0 = now();
	if (kvs_btf_open_elf(&b, elf, &e) != 0) {
		fprintf(stderr, "%s: no usable .BTF: %s\n", argv[1], e.msg);
		return 2;
	}
	tb_open = now() - t0;
	/* The member lists, from libbpf itself. */
	if ((own = btf__parse_elf(argv[1], NULL)) == NULL) {
		fprintf(stderr, "libbpf cannot read %s's BTF\n", argv[1]);
		return 2;
	}
	raw = own;
	for (i = 2; i < argc; i++) {
		char type[128];
		__s32 id = btf__find_by_name_kind(raw, argv[i], BTF_KIND_STRUCT);
		if (id <= 0) {
			fprintf(stderr, "struct %s is not in the BTF\n", argv[i]);
			return 2;
		}
		snprintf(type, sizeof(type), "struct %s", argv[i]);
		add(type, "");
		members(raw, btf__type_by_id(raw, (__u32)id), type, "", 0);
	}
	t0 = now();
	for (i = 0; i < nq; i++) {
		brc[i] = ask(b, true, &qs[i], &bti[i], &e);
		if (brc[i] != 0)
			snprintf(bmsg[i], sizeof(bmsg[i]), "%s", e.msg);
	}
	tb_all = now() - t0;
	rss_btf = rss_kb("VmHWM:");

	t0 = now();
	if (kvs_dwarf_open(&d, elf, &e) != 0) {
		fprintf(stderr, "%s: no usable DWARF: %s\n", argv[1], e.msg);
		return 2;
	}
	td_open = now() - t0;
	t0 = now();
	ti0 = 0;
	for (i = 0; i < nq; i++) {
		struct kvs_typeinfo dti;
		char bs[1400], ds[1400];
		int drc = ask(d, false, &qs[i], &dti, &e);
		bool same, spelling = false;

		if (qs[i].path[0] == '\0') {
			if (i > 0)
				printf("%-32s %3d members, %d BTF definition(s): %s\n",
				    qs[ti0].type, i - ti0 - 1, definitions(raw,
				    qs[ti0].type + 7), bad ? "DIFFERENCES so far" : "same");
			ti0 = i;
		}
		same = drc == brc[i];
		if (same && drc == 0)
			same = dti.offset == bti[i].offset && dti.size == bti[i].size &&
			    dti.kind == bti[i].kind && dti.count == bti[i].count &&
			    dti.elem_size == bti[i].elem_size &&
			    dti.elem_kind == bti[i].elem_kind &&
			    dti.bit_size == bti[i].bit_size &&
			    dti.bit_offset == bti[i].bit_offset;
		if (same && drc == 0 && strcmp(dti.type_name, bti[i].type_name) != 0) {
			char a[1024], c[1024];
			dims_folded(dti.type_name, a, sizeof(a));
			dims_folded(bti[i].type_name, c, sizeof(c));
			same = spelling = strcmp(a, c) == 0;
			if (spelling) {
				printf("ARRAY SPELLING %s %s: BTF \"%s\", DWARF \"%s\"\n",
				    qs[i].type, qs[i].path, bti[i].type_name, dti.type_name);
				known++;
			}
		}
		if (!same) {
			struct kvs_error be;
			kerr_clear(&be);
			snprintf(be.msg, sizeof(be.msg), "%s", bmsg[i]);
			fmt(bs, sizeof(bs), brc[i], &bti[i], &be);
			fmt(ds, sizeof(ds), drc, &dti, &e);
			printf("DIFF %s %s\n  BTF:   %s\n  DWARF: %s\n", qs[i].type,
			    qs[i].path, bs, ds);
			bad++;
		}
	}
	printf("%-32s %3d members, %d BTF definition(s): %s\n", qs[ti0].type,
	    nq - ti0 - 1, definitions(raw, qs[ti0].type + 7),
	    bad ? "DIFFERENCES so far" : "same");
	td_all = now() - t0;
	printf("BTF:   open %.1f ms, %d queries %.1f ms, peak RSS %ld kB\n",
	    tb_open * 1e3, nq, tb_all * 1e3, rss_btf);
	printf("DWARF: open %.1f ms, %d queries %.2f s, peak RSS %ld kB (both)\n",
	    td_open * 1e3, nq, td_all, rss_kb("VmHWM:"));
	printf("%d queries, %d differences, %d array spellings\n", nq, bad, known);
	btf__free(own);
	kvs_btf_close(b);
	kvs_dwarf_close(d);
	elf_end(elf);
	close(fd);
	return bad ? 1 : 0;
}
