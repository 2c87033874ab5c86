/* kread.c - typed reads, resolved fields, bounded walks. */
#include <endian.h>
#include <string.h>

#include "kread.h"

int
kread_u64(kvs_t *kd, uint64_t va, uint64_t *v)
{
	uint64_t x;

	if (kvs_read(kd, va, &x, sizeof(x)) != 0)
		return -1;
	*v = le64toh(x);
	return 0;
}

int
kread_u32(kvs_t *kd, uint64_t va, uint32_t *v)
{
	uint32_t x;

	if (kvs_read(kd, va, &x, sizeof(x)) != 0)
		return -1;
	*v = le32toh(x);
	return 0;
}

int
kread_uint(kvs_t *kd, uint64_t va, unsigned size, uint64_t *v)
{
	uint8_t b[8] = { 0 };
	unsigned i;

	if (size == 0 || size > 8)
		return kerr_set(&kd->err, KVS_E_INVAL, "integer of %u bytes", size);
	if (kvs_read(kd, va, b, size) != 0)
		return -1;
	*v = 0;
	for (i = 0; i < size; i++)
		*v |= (uint64_t)b[i] << (8 * i);
	return 0;
}

int
kread_sym_uint(kvs_t *kd, const char *sym, uint64_t *v)
{
	struct kvs_typeinfo ti;
	uint64_t addr, size;
	unsigned width;

	if (kvs_symbol(kd, sym, &addr, &size) != 0)
		return -1;
	const char *bare = sym[0] == '_' ? sym + 1 : sym;
	if (kvs_variable(kd, bare, &ti) == 0 && ti.size >= 1 && ti.size <= 8)
		width = (unsigned)ti.size;
	else if (size >= 1 && size <= 8)
		width = (unsigned)size;
	else
		width = 4;
	if (kread_uint(kd, addr, width, v) != 0)
		return kerr_push(&kd->err, "reading %s", sym);
	return 0;
}

uint64_t
kread_sym_uint_or(kvs_t *kd, const char *sym, uint64_t dflt)
{
	uint64_t v;

	if (kread_sym_uint(kd, sym, &v) == 0)
		return v;
	kerr_clear(&kd->err);
	return dflt;
}

int
kfield(kvs_t *kd, const char *type, const char *path, struct kfield *f, bool required)
{
	struct kvs_typeinfo ti;

	memset(f, 0, sizeof(*f));
	if (kvs_member(kd, type, path, &ti) != 0) {
		if (!required && kvs_errstatus(kd) == KVS_E_NOTYPE) {
			kerr_clear(&kd->err);
			return 0;
		}
		return -1;
	}
	f->off = ti.offset;
	f->size = ti.size;
	f->kind = ti.kind;
	f->count = ti.count;
	f->elem_size = ti.elem_size;
	f->bit_size = ti.bit_size;
	f->bit_offset = ti.bit_offset;
	f->present = true;
	return 0;
}

/* A bit-field: the little-endian bytes from off, shifted and masked. */
static uint64_t
bits_get(const uint8_t *b, size_t buflen, const struct kfield *f)
{
	uint64_t v = 0;
	unsigned i, nbytes = (f->bit_offset + f->bit_size + 7) / 8;

	if (f->bit_size > 64 || f->bit_offset + f->bit_size > 64 || f->off + nbytes > buflen)
		return 0;
	for (i = 0; i < nbytes; i++)
		v |= (uint64_t)b[f->off + i] << (8 * i);
	v >>= f->bit_offset;
	return f->bit_size == 64 ? v : v & ((1ULL << f->bit_size) - 1);
}

uint64_t
kfield_get_slow(const void *buf, size_t buflen, const struct kfield *f)
{
	const uint8_t *b = buf;
	uint64_t v = 0;
	unsigned i, n;

	if (!f->present || f->off >= buflen)
		return 0;
	if (f->bit_size != 0)
		return bits_get(b, buflen, f);
	n = f->size > 8 ? 8 : (unsigned)f->size;
	if (f->off + n > buflen)
		return 0;
	/* The common widths without the byte loop: refreshes call this for
	 * every field of every CPU record. */
	if (n == 8) {
		uint64_t x;
		memcpy(&x, b + f->off, 8);
		return le64toh(x);
	}
	if (n == 4) {
		uint32_t x;
		memcpy(&x, b + f->off, 4);
		return le32toh(x);
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)b[f->off + i] << (8 * i);
	return v;
}

void
kwalk_init(struct kwalk *w, uint64_t max)
{
	memset(w, 0, sizeof(*w));
	w->power = w->lam = 1;
	w->max = max;
}

int
kwalk_step(kvs_t *kd, struct kwalk *w, uint64_t node, const char *what)
{
	if (w->steps > 0 && node == w->tortoise)
		return kerr_set(&kd->err, KVS_E_DATA, "%s list loops back to 0x%llx",
		    what, (unsigned long long)node);
	if (++w->steps > w->max)
		return kerr_set(&kd->err, KVS_E_DATA, "%s list longer than %llu entries "
		    "(corrupt?) at 0x%llx", what, (unsigned long long)w->max,
		    (unsigned long long)node);
	if (w->power == w->lam) {
		w->tortoise = node;
		w->power *= 2;
		w->lam = 0;
	}
	w->lam++;
	return 0;
}

/* Stable merge of r[0, mid) and r[mid, n) through tmp. */
static void
krec_merge(struct krec *r, size_t mid, size_t n, struct krec *tmp)
{
	size_t i = 0, j = mid, k = 0;

	if (r[mid - 1].addr <= r[mid].addr)
		return;                 /* already in order */
	while (i < mid && j < n)
		tmp[k++] = r[j].addr < r[i].addr ? r[j++] : r[i++];
	while (i < mid)
		tmp[k++] = r[i++];
	memcpy(r, tmp, k * sizeof(*r));
}

void
krec_sort(struct krec *r, size_t n, struct krec *tmp)
{
	size_t i, up = 0, down = 0, w;

	for (i = 1; i < n; i++) {
		up += r[i - 1].addr <= r[i].addr;
		down += r[i - 1].addr > r[i].addr;      /* strictly: ties stay in order */
	}
	if (n < 2 || up == n - 1)
		return;
	if (down == n - 1) {            /* a list built by inserting at the head */
		for (i = 0; i < n / 2; i++) {
			struct krec t = r[i];
			r[i] = r[n - 1 - i];
			r[n - 1 - i] = t;
		}
		return;
	}
	/* Bottom-up merge sort: no allocation (libc's qsort may allocate). */
	for (w = 1; w < n; w *= 2)
		for (i = 0; i + w < n; i += 2 * w)
			krec_merge(r + i, w, (i + 2 * w < n ? 2 * w : n - i), tmp);
}

void
krec_sort_memo(struct krec *r, size_t n, struct krec *tmp, struct krec *memo)
{
	/* memo[0].addr: how many records memo[1 ..] remembers (0: none),
	 * the input then its sorted order. */
	if (n < 2)
		return;
	if (memo[0].addr == n && memcmp(memo + 1, r, n * sizeof(*r)) == 0) {
		memcpy(r, memo + 1 + n, n * sizeof(*r));
		return;
	}
	memo[0].addr = 0;
	memcpy(memo + 1, r, n * sizeof(*r));
	krec_sort(r, n, tmp);
	memcpy(memo + 1 + n, r, n * sizeof(*r));
	memo[0].addr = n;
}

size_t
krec_run(const struct krec *r, size_t n, size_t i, size_t size, size_t maxspan, uint64_t *hi)
{
	uint64_t lo = r[i].addr, end = lo + size;
	size_t j;

	for (j = i + 1; j < n; j++) {
		uint64_t a = r[j].addr;
		if (a > end + 64 || a + size - lo > maxspan || a + size < a)
			break;
		if (a + size > end)
			end = a + size;
	}
	*hi = end;
	return j;
}
