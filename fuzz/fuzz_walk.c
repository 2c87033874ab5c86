/*
 * fuzz_walk.c - libFuzzer harness for one walker over hostile kernel memory
 * behind a fixed fixture kernel, built once per walker
 * (-DFZ_WALK=FZ_MALLOC|FZ_UMA|FZ_GPROF|FZ_DTRACE|FZ_SLUB -> fuzz_walk_<name>).
 *
 * The fixture's raw physical image is copied into a memory file and opened
 * once, with its kernel.  At start-up the walker runs over the pristine
 * image while a wrapper records every physical byte it reads and every page
 * it translates: the "read set".  An input is then a list of patches over
 * the image, mostly addressed inside the read set so that a mutation lands
 * on bytes the walker does read.  Each execution applies the patches
 * through a writable mapping of the same file (the handle's read-only
 * mapping sees them), runs the walker, and restores the bytes.
 *
 * A patch (little-endian fields; an input is patches back to back, at most
 * 64):
 *   op & 3 == 0  u32 off, u8 n, (n & 31) + 1 bytes: bytes at read-set offset
 *   op & 3 == 1  u32 off, u8 n, (n & 31) + 1 bytes: bytes at image offset
 *   op & 3 == 2  u32 dst, u32 src: at read-set offset dst, the kernel
 *                virtual address of read-set offset src (a pointer the
 *                walker may follow: lists made to loop, cross or alias)
 *   op & 3 == 3  u32 off, u8 w, u8 v: the integer v sign-extended to
 *                1 << (w & 3) bytes at read-set offset off (counts, indices)
 * Offsets wrap modulo the read set's (or image's) size.
 *
 * The handle stays open across executions, as kvmtop's does across
 * refreshes (every walk starts with a translation-cache flush); what the
 * OS layer read at open time (page-table root, KASLR slide) is not patched.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"
#include "kvmprof.h"
#include "memstat.h"
#include "fz.h"

#define FZ_MALLOC 1
#define FZ_UMA 2
#define FZ_GPROF 3
#define FZ_DTRACE 4
#define FZ_SLUB 5

#if FZ_WALK == FZ_SLUB
#define KERNEL "linux-kaslr/vmlinux"
#define IMAGE "linux-kaslr/mem.raw"
#else
#define KERNEL "fbsd14/kernel"
#define IMAGE "fbsd14/mem.raw"
#endif

#define MAX_PATCHES 64
#define MAX_RANGES (1U << 16)
#define MAX_PAGES 4096

static struct fz_file file;
static uint8_t *mem;            /* writable shared mapping of the file */
static const uint8_t *orig;     /* the pristine image */
static size_t mem_len;
static kvs_t *kd;

/* The read set: disjoint physical ranges, with running byte counts. */
static struct range {
	uint64_t pa, len, before;
} *ranges;
static size_t nranges;
static uint64_t rs_bytes;
/* Pages translated while recording: physical page -> a virtual page. */
static struct vpage {
	uint64_t pa, va;
} vpages[MAX_PAGES];
static size_t nvpages;
static int recording;

static const struct kvs_source_ops *real_src;
static struct kvs_source_ops rec_src;
static const struct kvs_arch_ops *real_arch;
static struct kvs_arch_ops rec_arch;

static int
rec_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	int rc = real_src->read_phys(priv, pa, buf, len, e);

	if (recording && rc == 0 && len > 0 && nranges < MAX_RANGES) {
		ranges[nranges].pa = pa;
		ranges[nranges].len = len;
		nranges++;
	}
	return rc;
}

static int
rec_kvtop(const void *priv, uint64_t va, uint64_t *pa, uint64_t *run, uint64_t *pgsz,
    struct kvs_error *e)
{
	int rc = real_arch->kvtop(priv, va, pa, run, pgsz, e);

	if (recording && rc == 0 && nvpages < MAX_PAGES) {
		vpages[nvpages].pa = *pa & ~0xfffULL;
		vpages[nvpages].va = va & ~0xfffULL;
		nvpages++;
	}
	return rc;
}

static int
by_pa(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->pa < y->pa ? -1 : x->pa > y->pa;
}

static int
vp_by_pa(const void *a, const void *b)
{
	const struct vpage *x = a, *y = b;

	return x->pa < y->pa ? -1 : x->pa > y->pa;
}

/* Sort and merge the recorded reads; keep those inside the image. */
static void
settle_ranges(void)
{
	size_t i, n = 0;

	qsort(ranges, nranges, sizeof(*ranges), by_pa);
	for (i = 0; i < nranges; i++) {
		struct range r = ranges[i];
		if (r.pa >= mem_len)
			continue;
		if (r.len > mem_len - r.pa)
			r.len = mem_len - r.pa;
		if (n > 0 && r.pa <= ranges[n - 1].pa + ranges[n - 1].len) {
			uint64_t end = r.pa + r.len;
			if (end > ranges[n - 1].pa + ranges[n - 1].len)
				ranges[n - 1].len = end - ranges[n - 1].pa;
		} else
			ranges[n++] = r;
	}
	nranges = n;
	rs_bytes = 0;
	for (i = 0; i < n; i++) {
		ranges[i].before = rs_bytes;
		rs_bytes += ranges[i].len;
	}
	qsort(vpages, nvpages, sizeof(*vpages), vp_by_pa);
}

/* Image offset of read-set offset off (wrapped). */
static uint64_t
rs_at(uint32_t off)
{
	uint64_t o = off % rs_bytes;
	size_t lo = 0, hi = nranges;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (ranges[mid].before <= o)
			lo = mid;
		else
			hi = mid;
	}
	return ranges[lo].pa + (o - ranges[lo].before);
}

/* A virtual address of image offset pa, from the pages translated while
 * recording; 0 if none maps it. */
static uint64_t
va_of(uint64_t pa)
{
	size_t lo = 0, hi = nvpages;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (vpages[mid].pa < (pa & ~0xfffULL))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nvpages && vpages[lo].pa == (pa & ~0xfffULL))
		return vpages[lo].va | (pa & 0xfff);
	return 0;
}

/* ------------------------------------------------------------ the walks */

static volatile uint64_t sink;

static void
walk(void)
{
#if FZ_WALK == FZ_MALLOC || FZ_WALK == FZ_UMA || FZ_WALK == FZ_SLUB
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	int rc;

	if (l == NULL)
		return;
#if FZ_WALK == FZ_MALLOC
	rc = memstat_kvm_malloc(l, kd);
	(void)memstat_kvm_vmstat_format(kd, ALLOCATOR_MALLOC);
	for (size_t i = 0; i < memstat_mtl_malloc_zone_count(l); i++)
		sink += memstat_mtl_malloc_zone_size(l, i);
#elif FZ_WALK == FZ_UMA
	rc = memstat_kvm_uma(l, kd);
#else
	rc = memstat_kvm_slab(l, kd);
#endif
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
		const char *name = memstat_get_name(mt);
		sink += strlen(name) + memstat_get_count(mt) + memstat_get_bytes(mt) +
		    memstat_get_free(mt) + memstat_get_numallocs(mt) + memstat_get_size(mt);
		for (unsigned c = 0; c < memstat_get_maxcpus(mt) && c < 4; c++)
			sink += memstat_get_percpu_numallocs(mt, (int)c) +
			    memstat_get_percpu_free(mt, (int)c);
#if FZ_WALK == FZ_SLUB
		sink += memstat_get_slab_objperslab(mt) + memstat_get_slab_numobjs(mt) +
		    memstat_get_slab_active(mt);
#endif
	}
	(void)rc;
	memstat_mtl_free(l);
#if FZ_WALK == FZ_SLUB
	{
		struct kvs_kernelinfo ki;
		char *text;
		size_t len;
		(void)kvs_kernel_info(kd, &ki);
		if (kvs_msgbuf(kd, &text, &len) == 0) {
			sink += len;
			free(text);
		}
	}
#endif
#elif FZ_WALK == FZ_GPROF
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
	kvmprof_flat_t *f;

	if (g == NULL)
		return;
	sink += (uint64_t)kvmprof_gmon_counter_bits(g) + kvmprof_gmon_binsize(g);
	for (size_t i = 0; i < kvmprof_gmon_nbins(g) && i < 64; i++)
		sink += kvmprof_gmon_bin(g, i);
	for (size_t i = 0; i < kvmprof_gmon_narcs(g); i++) {
		uint64_t from, self;
		int64_t count;
		kvmprof_gmon_arc(g, i, &from, &self, &count);
		sink += from + self + (uint64_t)count;
	}
	f = kvmprof_gmon_flat(g, kd);
	if (f != NULL) {
		for (size_t i = 0; i < kvmprof_flat_count(f); i++)
			sink += kvmprof_flat_get(f, i)->ticks + strlen(kvmprof_flat_get(f, i)->name);
		kvmprof_flat_free(f);
	}
	kvmprof_gmon_free(g);
#elif FZ_WALK == FZ_DTRACE
	kvmprof_probes_t *p = kvmprof_probes_read(kd, 1);

	if (p == NULL)
		return;
	for (size_t i = 0; i < kvmprof_probes_count(p); i++) {
		const struct kvmprof_probe *pr = kvmprof_probes_get(p, i);
		sink += strlen(pr->provider) + strlen(pr->module) + strlen(pr->function) +
		    strlen(pr->name) + pr->interval_ns;
		if (pr->next_fire_percpu != NULL)
			for (unsigned c = 0; c < kvmprof_probes_maxcpus(p); c++)
				sink += pr->next_fire_percpu[c];
	}
	kvmprof_probes_free(p);
#else
#error FZ_WALK names no walker
#endif
}

/* Whether the walk works on the pristine image (the harness is pointless
 * otherwise). */
static int
walk_ok(void)
{
#if FZ_WALK == FZ_MALLOC || FZ_WALK == FZ_UMA || FZ_WALK == FZ_SLUB
	struct memory_type_list *l = memstat_mtl_alloc();
	int rc, n = 0;
#if FZ_WALK == FZ_MALLOC
	rc = memstat_kvm_malloc(l, kd);
#elif FZ_WALK == FZ_UMA
	rc = memstat_kvm_uma(l, kd);
#else
	rc = memstat_kvm_slab(l, kd);
#endif
	for (struct memory_type *mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		n++;
	memstat_mtl_free(l);
	return rc == 0 && n > 0;
#elif FZ_WALK == FZ_GPROF
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
	int ok = g != NULL && kvmprof_gmon_nbins(g) > 0;
	kvmprof_gmon_free(g);
	return ok;
#else
	kvmprof_probes_t *p = kvmprof_probes_read(kd, 1);
	int ok = p != NULL && kvmprof_probes_count(p) > 0;
	kvmprof_probes_free(p);
	return ok;
#endif
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[KVS_ERRBUF_SIZE];
	size_t len;
	void *img = fz_slurp(fz_fixture(IMAGE), &len);

	(void)argc;
	(void)argv;
	fz_file_init(&file, "fuzzimage");
	fz_file_set(&file, img, len);
	orig = img;
	mem_len = len;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd, 0);
	if (mem == MAP_FAILED)
		fz_die("mmap", file.path);
	kd = kvs_open(fz_fixture(KERNEL), file.path, FZ_OPEN, err);
	if (kd == NULL) {
		fprintf(stderr, "fuzz_walk: %s\n", err);
		abort();
	}
#if FZ_WALK == FZ_DTRACE
	if (kvs_add_module(kd, fz_fixture("fbsd14/dtrace.ko")) != 1 ||
	    kvs_add_module(kd, fz_fixture("fbsd14/profile.ko")) != 1) {
		fprintf(stderr, "fuzz_walk: modules: %s\n", kvs_geterr(kd));
		abort();
	}
#endif
	real_src = kd->src;
	rec_src = *real_src;
	rec_src.read_phys = rec_read;
	kd->src = &rec_src;
	real_arch = kd->arch;
	rec_arch = *real_arch;
	rec_arch.kvtop = rec_kvtop;
	kd->arch = &rec_arch;
	ranges = calloc(MAX_RANGES, sizeof(*ranges));
	if (ranges == NULL)
		abort();
	recording = 1;
	if (!walk_ok()) {
		fprintf(stderr, "fuzz_walk: the walk fails on the pristine fixture: %s\n",
		    kvs_geterr(kd));
		abort();
	}
	walk();
	recording = 0;
	settle_ranges();
	if (rs_bytes == 0)
		abort();
	fprintf(stderr, "fuzz_walk: read set %llu bytes in %zu ranges, %zu pages translated\n",
	    (unsigned long long)rs_bytes, nranges, nvpages);
	return 0;
}

struct dirty {
	uint64_t off, len;
};

static void
poke(uint64_t off, const uint8_t *b, size_t n, struct dirty *d)
{
	if (off >= mem_len)
		return;
	if (n > mem_len - off)
		n = mem_len - off;
	memcpy(mem + off, b, n);
	d->off = off;
	d->len = n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dirty dirty[MAX_PATCHES];
	size_t np = 0, i = 0;

	while (np < MAX_PATCHES && i + 6 <= size) {
		uint8_t op = data[i];
		uint32_t off = fz_le32(data + i + 1);
		struct dirty *d = &dirty[np];

		d->len = 0;
		i += 5;
		switch (op & 3) {
		case 0:
		case 1: {
			size_t n = (data[i] & 31u) + 1;
			i++;
			if (n > size - i)
				n = size - i;
			poke((op & 3) == 0 ? rs_at(off) : off % mem_len, data + i, n, d);
			i += n;
			break;
		}
		case 2: {
			uint8_t b[8];
			uint64_t va;
			if (i + 4 > size)
				goto done;
			va = va_of(rs_at(fz_le32(data + i)));
			i += 4;
			for (int k = 0; k < 8; k++)
				b[k] = (uint8_t)(va >> (8 * k));
			poke(rs_at(off), b, 8, d);
			break;
		}
		default: {
			uint8_t b[8];
			size_t w;
			if (i + 2 > size)
				goto done;
			w = (size_t)1 << (data[i] & 3);
			memset(b, (data[i + 1] & 0x80) ? 0xff : 0, sizeof(b));
			b[0] = data[i + 1];
			i += 2;
			poke(rs_at(off), b, w, d);
			break;
		}
		}
		np++;
	}
done:
	walk();
	for (size_t k = 0; k < np; k++)
		if (dirty[k].len > 0)
			memcpy(mem + dirty[k].off, orig + dirty[k].off, dirty[k].len);
	return 0;
}
