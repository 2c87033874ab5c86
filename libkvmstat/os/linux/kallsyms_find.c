/*
 * kallsyms_find.c - where the kallsyms tables lie in a kernel image whose
 * VMCOREINFO does not say (kernels before 6.0 name none of them there), found
 * by their shapes; kallsyms.c decodes them either way.
 *
 * The search, from SYMBOL(_stext) up through the image in memory:
 *   1. kallsyms_token_table holds, at index c, the one-byte token c for each
 *      byte some symbol name uses: runs like "0\0" "1\0" ... "7\0" or "a\0"
 *      ... "h\0" lie in it back to back.  A hit is walked back c tokens to
 *      the table's start, and 256 tokens forward to its end;
 *   2. kallsyms_token_index, the next 8-byte aligned array, must hold
 *      exactly the 256 tokens' offsets (the proof that 1 found the table);
 *   3. kallsyms_markers (one u32 per 256 symbols, 0 first, increasing by a
 *      few KiB) lies in the 16 MiB before the table, ending at it or at
 *      kallsyms_seqs_of_names (3 bytes per symbol, 6.1.y and 6.2 on),
 *      which ends at it; kallsyms_num_syms sits 8 bytes before
 *      kallsyms_names, which must decode into exactly that many names,
 *      ending at the markers, each 256th where its marker says;
 *   4. kallsyms_relative_base is 8 bytes before kallsyms_num_syms and
 *      kallsyms_offsets before it (the order of Linux 4.6 to 6.3), or
 *      kallsyms_offsets follows the token index and the base follows it
 *      (6.4 on); the one whose base is a kernel address is taken, and
 *      kallsyms.c checks the result against SYMBOL(_stext).
 * Every read is bounded; nothing found is an error saying what was missing.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define SCAN_MAX (256ull << 20)     /* how far past _stext the image is searched */
#define CHUNK (1u << 20)
#define WINDOW (1u << 16)           /* token table and markers: at most this */
#define MAX_SYMS (4u << 20)
#define MAX_NAMES_SPAN (64u << 20)

static uint64_t
al8(uint64_t v)
{
	return (v + 7) & ~7ULL;
}

/* Bytes [va, va+len) of the image, or NULL (the handle's error left set). */
static uint8_t *
grab(kvs_t *kd, uint64_t va, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	if (b == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "kallsyms: out of memory");
		return NULL;
	}
	if (linux_image_read(kd, va, b, len) != 0) {
		free(b);
		return NULL;
	}
	return b;
}

/* 1 and 2: the table that holds the token at hit (token number c): *ttab and
 * *tidx, 1; or 0. */
static int
check_table(kvs_t *kd, uint64_t floor, uint64_t hit, unsigned c, uint64_t *ttab,
    uint64_t *tidx)
{
	uint64_t lo = hit - floor > WINDOW ? hit - WINDOW : floor, t, end;
	size_t n = (size_t)(hit - lo) + WINDOW + 512, p, k;
	uint16_t off[256];
	uint8_t *w = grab(kd, lo, n);
	int ok = 0;

	if (w == NULL) {
		kerr_clear(&kd->err);
		return 0;
	}
	/* back: c tokens, each printable bytes ended by NUL */
	p = (size_t)(hit - lo);
	for (k = 0; k < c; k++) {
		size_t q;
		if (p < 2 || w[p - 1] != '\0')
			goto out;
		q = p - 1;
		while (q > 0 && w[q - 1] >= 0x20 && w[q - 1] < 0x7f)
			q--;
		if (q == p - 1)
			goto out;                   /* an empty token */
		p = q;
	}
	t = lo + p;
	/* forward: 256 tokens */
	for (k = 0; k < 256; k++) {
		size_t q = p;
		if (p - (size_t)(t - lo) > 0xffff)
			goto out;
		off[k] = (uint16_t)(p - (size_t)(t - lo));
		while (q < n && w[q] >= 0x20 && w[q] < 0x7f)
			q++;
		if (q == p || q >= n || w[q] != '\0')
			goto out;
		p = q + 1;
	}
	end = lo + p;
	/* the index: the next 8-aligned 512 bytes */
	{
		uint64_t i = al8(end);
		size_t ip = (size_t)(i - lo);
		if (ip + 512 > n)
			goto out;
		for (k = 0; k < 256; k++) {
			uint16_t v;
			memcpy(&v, w + ip + 2 * k, 2);
			if (le16toh(v) != off[k])
				goto out;
		}
		*ttab = t;
		*tidx = i;
		ok = 1;
	}
out:
	free(w);
	return ok;
}

/* Decode the length of each of num names from names[0..len): whether they
 * end within len, padding (zeros, < 8 bytes) after, and every 256th where
 * markers says.  */
static bool
names_fit(const uint8_t *names, size_t len, uint32_t num, const uint32_t *markers,
    size_t nmark)
{
	size_t pos = 0, i;

	for (i = 0; i < num; i++) {
		size_t l;
		if (i % 256 == 0 && (i / 256 >= nmark || markers[i / 256] != pos))
			return false;
		if (pos >= len)
			return false;
		l = names[pos++];
		if (l & 0x80) {
			if (pos >= len)
				return false;
			l = (l & 0x7f) | ((size_t)names[pos++] << 7);
		}
		if (l == 0 || pos + l > len)
			return false;
		pos += l;
	}
	if (len - pos >= 8)
		return false;
	for (; pos < len; pos++)
		if (names[pos] != 0)
			return false;
	return true;
}

static bool
kernel_addr(uint64_t v)
{
	return v >> 47 == 0x1ffff;           /* the upper half of a 48/57-bit space */
}

/* Where kallsyms_names starts, for markers mk[0..m) starting at mstart:
 * kallsyms_num_syms 8 bytes before, a count of m markers' worth of names
 * that decode to end at mstart.  0 with *s and *num, or -1. */
static int
names_before(kvs_t *kd, uint64_t mstart, const uint32_t *mk, size_t m, uint64_t *sp,
    uint32_t *nump)
{
	uint64_t span_lo, span_hi, s;

	if (mstart < mk[m - 1] + 10)
		return -1;
	span_hi = mstart - mk[m - 1] - 2;
	span_lo = mstart - mk[m - 1] > 256ull * 1025 + 8 ? mstart - mk[m - 1] - 256ull * 1025 : 8;
	for (s = al8(span_lo); s <= span_hi; s += 8) {
		uint32_t num;
		uint8_t *names;
		bool fit;
		if (linux_image_read(kd, s - 8, &num, 4) != 0) {
			kerr_clear(&kd->err);
			continue;
		}
		num = le32toh(num);
		if (num == 0 || num > MAX_SYMS || (num + 255) / 256 != m)
			continue;
		if ((names = grab(kd, s, (size_t)(mstart - s))) == NULL) {
			kerr_clear(&kd->err);
			continue;
		}
		fit = names_fit(names, (size_t)(mstart - s), num, mk, m);
		free(names);
		if (fit) {
			*sp = s;
			*nump = num;
			return 0;
		}
	}
	return -1;
}

/* 4: the offsets and the base, once names (at s, num of them) are known;
 * 1 with a[] filled, or 0. */
static int
place(kvs_t *kd, uint64_t s, uint32_t num, uint64_t ttab, uint64_t tidx, uint64_t *a)
{
	uint64_t base = 0, nb = s - 8;

	if (linux_image_read(kd, nb - 8, &base, 8) == 0 && kernel_addr(le64toh(base))) {
		/* 4.6 - 6.3: offsets, base, num_syms, names */
		a[4] = nb - 8 - al8(4ull * num);
		a[5] = nb - 8;
	} else {
		/* 6.4 on: offsets and the base after the index */
		uint64_t offs = al8(tidx + 512);
		kerr_clear(&kd->err);
		if (linux_image_read(kd, al8(offs + 4ull * num), &base, 8) != 0 ||
		    !kernel_addr(le64toh(base))) {
			kerr_clear(&kd->err);
			return 0;
		}
		a[4] = offs;
		a[5] = al8(offs + 4ull * num);
	}
	a[0] = nb;
	a[1] = s;
	a[2] = ttab;
	a[3] = tidx;
	return 1;
}

/* A kernel of fewer than 1,024 symbols (whose markers are too few to be
 * told by their shape): its markers end at the table, or at a sequence
 * table of 3 bytes per symbol that does. */
static int
find_small(kvs_t *kd, uint64_t ttab, uint64_t tidx, uint64_t *a)
{
	uint32_t num, mk[4];
	uint64_t s;
	size_t m, j;

	for (num = 1; num < 1024; num++) {
		uint64_t gap[2] = { 0, al8(3ull * num) };
		m = (num + 255) / 256;
		for (j = 0; j < 2; j++) {
			uint64_t x = ttab - gap[j] - al8(4 * m);
			uint32_t got;
			size_t i;
			for (i = 0; i < m; i++) {
				if (linux_image_read(kd, x + 4 * i, &mk[i], 4) != 0) {
					kerr_clear(&kd->err);
					break;
				}
				mk[i] = le32toh(mk[i]);
			}
			if (i < m || mk[0] != 0)
				continue;
			if (names_before(kd, x, mk, m, &s, &got) == 0 && got == num &&
			    place(kd, s, num, ttab, tidx, a))
				return 1;
		}
	}
	return 0;
}

/* 3 and 4, for the table at ttab: the markers are found by their shape
 * (0, then increasing by a few KiB) in the 16 MiB before the table; they
 * end at the table, or (6.1.y, 6.2 on) at kallsyms_seqs_of_names, 3 bytes
 * per symbol, which ends at the table. */
static int
find_rest(kvs_t *kd, uint64_t floor, uint64_t ttab, uint64_t tidx, uint64_t *a)
{
	const uint64_t back_max = 16ull << 20;
	uint64_t blk_lo, x;
	uint8_t *w = NULL;
	size_t wl = 0;
	int rc = 0;

	/* the window [blk_lo, ttab), grown back a block at a time */
	for (blk_lo = ttab; ttab - blk_lo < back_max && rc == 0; ) {
		uint64_t nlo = blk_lo - floor > WINDOW ? blk_lo - WINDOW : floor;
		uint8_t *nw, *blk;
		if (nlo == blk_lo || (blk = grab(kd, nlo, (size_t)(blk_lo - nlo))) == NULL) {
			kerr_clear(&kd->err);
			break;
		}
		if ((nw = malloc(wl + (size_t)(blk_lo - nlo))) == NULL) {
			free(blk);
			break;
		}
		memcpy(nw, blk, (size_t)(blk_lo - nlo));
		if (wl)
			memcpy(nw + (blk_lo - nlo), w, wl);
		free(blk);
		free(w);
		w = nw;
		wl += (size_t)(blk_lo - nlo);
		/* candidates in the new block: 0, then three increases */
		for (x = al8(nlo); x + 16 <= blk_lo && rc == 0; x += 8) {
			const uint8_t *p = w + (size_t)(x - nlo);
			uint32_t v[4];
			size_t m, j, cap;
			uint32_t *mk, num;
			uint64_t mend, s, gap;
			for (j = 0; j < 4; j++) {
				memcpy(&v[j], p + 4 * j, 4);
				v[j] = le32toh(v[j]);
			}
			if (v[0] != 0 || v[1] < 256 * 2 || v[1] > 256 * 1025 || v[2] <= v[1] ||
			    v[3] <= v[2])
				continue;
			cap = (size_t)(ttab - x) / 4;
			if ((mk = malloc(cap * sizeof(*mk))) == NULL)
				break;
			for (m = 0; m < cap; m++) {
				uint32_t t;
				memcpy(&t, p + 4 * m, 4);
				mk[m] = le32toh(t);
				if (m > 0 && (mk[m] <= mk[m - 1] || mk[m] - mk[m - 1] > 256 * 1025))
					break;
			}
			mend = x + 4 * m;
			/* the end of the markers: the table, or the sequence table */
			gap = ttab - al8(mend);
			if (names_before(kd, x, mk, m, &s, &num) == 0 &&
			    (gap == 0 || gap == al8(3ull * num)))
				rc = place(kd, s, num, ttab, tidx, a);
			free(mk);
		}
		blk_lo = nlo;
	}
	free(w);
	return rc;
}

/* Runs of one-byte tokens that every kernel's names use. */
static const char *const runs[] = { "0\0" "1\0" "2\0" "3\0" "4\0" "5\0" "6\0" "7\0",
	"a\0" "b\0" "c\0" "d\0" "e\0" "f\0" "g\0" "h\0" };
#define RUN_LEN 16

int
linux_kallsyms_find(kvs_t *kd, uint64_t *a)
{
	uint64_t stext, off;
	unsigned misses;
	uint8_t *buf;

	if (!linux_vi_u64(kd, "SYMBOL(_stext)", 16, &stext))
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no kernel file given, and the dump's "
		    "VMCOREINFO names neither the kallsyms tables nor _stext to search "
		    "the kernel image from (give the kernel with -N)");
	if ((buf = malloc(CHUNK + RUN_LEN)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "kallsyms: out of memory");
	for (off = 0, misses = 0; off < SCAN_MAX && misses < 32; off += CHUNK) {
		size_t i, r;
		/* holes between text and data are skipped; 32 MiB unreadable in
		 * a row is past the image */
		if (linux_image_read(kd, stext + off, buf, CHUNK + RUN_LEN) != 0) {
			/* page by page: what is readable of it, zeros elsewhere */
			size_t pg, got = 0;
			kerr_clear(&kd->err);
			for (pg = 0; pg < CHUNK + RUN_LEN; pg += 4096) {
				size_t l = CHUNK + RUN_LEN - pg < 4096 ? CHUNK + RUN_LEN - pg : 4096;
				if (linux_image_read(kd, stext + off + pg, buf + pg, l) == 0)
					got++;
				else {
					kerr_clear(&kd->err);
					memset(buf + pg, 0, l);
				}
			}
			if (got == 0) {
				misses++;
				continue;
			}
		}
		misses = 0;
		for (i = 0; i < CHUNK; i++) {
			for (r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
				uint64_t ttab, tidx;
				if (buf[i] != (uint8_t)runs[r][0] || memcmp(buf + i, runs[r], RUN_LEN) != 0)
					continue;
				if (check_table(kd, stext, stext + off + i, (unsigned char)runs[r][0],
				    &ttab, &tidx) && (find_rest(kd, stext, ttab, tidx, a) ||
				    find_small(kd, ttab, tidx, a))) {
					free(buf);
					return 0;
				}
			}
		}
	}
	free(buf);
	return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no kernel file given, the dump's "
	    "VMCOREINFO does not name the kallsyms tables, and no kallsyms tables were "
	    "found in the kernel image from _stext (0x%llx) on (give the kernel with -N)",
	    (unsigned long long)stext);
}
