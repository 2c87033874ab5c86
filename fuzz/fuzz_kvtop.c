/*
 * fuzz_kvtop.c - libFuzzer harness for amd64 translation over arbitrary page
 * tables.  The input:
 *   u64 root      the PML4's physical address (low bits as given)
 *   u64 va[4]     addresses to translate (besides fixed ones)
 *   u8  mode      bit 0: physical reads wrap modulo the image (every entry
 *                 lands somewhere, so walks go deep); bit 1: a minidump
 *                 page-table section (the image's first half, level 1 or 2
 *                 by bit 2) instead of the root; bit 3: a direct-map window
 *   ...           the physical memory image, from address 0
 * Each address is translated, and the page it lands in checked to lie in
 * the page size translation reported.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "fz.h"

#define HDR 41

struct phys {
	const uint8_t *mem;
	size_t len;
	int wrap;
};

static int
rd(void *ctx, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	const struct phys *p = ctx;

	if (p->wrap && p->len > 0)
		pa %= p->len;
	if (pa >= p->len || len > p->len - pa) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not in the image",
		    (unsigned long long)pa);
		kerr_fault(e, pa);
		return -1;
	}
	memcpy(buf, p->mem + pa, len);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t fixed[] = { 0xffffffff80000000ULL, 0xffffffff80201234ULL,
	    0xfffff80000001000ULL, 0xffff888000000000ULL, 0x0000000000400000ULL,
	    0x00007fffffffffffULL, 0x0000800000000000ULL, 0xffff800000000000ULL,
	    0xffffffffffffffffULL };
	const struct kvs_arch_ops *a = &kvs_arch_amd64;
	struct kvs_xlat_params xp;
	struct phys ph;
	uint64_t *pt = NULL;
	void *priv;
	struct kvs_error e;
	uint8_t mode;

	if (size < HDR)
		return 0;
	mode = data[40];
	ph.mem = data + HDR;
	ph.len = size - HDR;
	ph.wrap = mode & 1;
	memset(&xp, 0, sizeof(xp));
	xp.read_phys = rd;
	xp.ctx = &ph;
	if (mode & 2) {
		/* A copy: the section is an array of uint64_t, aligned. */
		size_t n = ph.len / 2 / 8;
		pt = malloc(n ? n * 8 : 8);
		if (pt == NULL)
			return 0;
		memcpy(pt, ph.mem, n * 8);
		xp.pt = pt;
		xp.pt_entries = n;
		xp.pt_level = mode & 4 ? 2 : 1;
		xp.pt_base = 0xffffffff80000000ULL;
	} else {
		xp.have_root = true;
		xp.root_pa = fz_le64(data);
	}
	if (mode & 8) {
		xp.direct_base = 0xfffff80000000000ULL;
		xp.direct_end = 0xfffffc0000000000ULL;
	}
	kerr_clear(&e);
	if (a->create(&priv, &xp, &e) != 0) {
		free(pt);
		return 0;
	}
	for (size_t i = 0; i < 4 + sizeof(fixed) / sizeof(fixed[0]); i++) {
		uint64_t va = i < 4 ? fz_le64(data + 8 + 8 * i) : fixed[i - 4], pa, run, pgsz;
		kerr_clear(&e);
		if (a->kvtop(priv, va, &pa, &run, &pgsz, &e) != 0) {
			if (e.status == KVS_OK || e.msg[0] == '\0')
				abort();        /* a failure must say why */
			continue;
		}
		/* The page: a power of two, run within it, the offset kept. */
		if (pgsz == 0 || (pgsz & (pgsz - 1)) != 0 || run == 0 || run > pgsz ||
		    (pa & (pgsz - 1)) != (va & (pgsz - 1)))
			abort();
		(void)a->canonical(va);
	}
	a->destroy(priv);
	free(pt);
	return 0;
}
