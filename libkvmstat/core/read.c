/*
 * read.c - reading kernel memory: kernel virtual addresses through the
 * handle's translation cache (a small TLB; large pages cached whole) or
 * the architecture's walk, then the source; kvs_peek's view of bytes where
 * they lie in the dump's mapping; physical reads; strings; the handle's
 * error as callers see it; and the guard against a dump file that shrank
 * while mapped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core_internal.h"


/* ------------------------------------------------------------ reading */

/*
 * A dump file cut short while a handle has it mapped (a copy being
 * rewritten, a full disk's cleanup): every page past the new end raises
 * SIGBUS when touched.  One fstat per walk (and per message-buffer read)
 * notices it; a source that can read what is left says so by having a
 * refresh op (raw), the others then read nothing more and each read fails
 * with shrunk_error, which the walkers turn into a failed refresh over the
 * last good values.  A file cut in the middle of a walk is not covered.
 */
void
kvs_check_shrunk(kvs_t *kd)
{
	struct stat st;

	if (kd->map == NULL || kd->src == NULL || kd->src->refresh != NULL ||
	    fstat(kd->core_fd, &st) != 0 || st.st_size < 0)
		return;
	kd->shrunk = (uint64_t)st.st_size < kd->map_len;
	kd->shrunk_to = (uint64_t)st.st_size;
	if (kd->shrunk)
		kd->peek_host = NULL;
}

int
kvs_shrunk_error(kvs_t *kd)
{
	return kerr_set(&kd->err, KVS_E_TRUNCATED, "dump %s: the file shrank from "
	    "%llu to %llu bytes while open; nothing more is read from it",
	    kd->core_path, (unsigned long long)kd->map_len,
	    (unsigned long long)kd->shrunk_to);
}

/* A format-only open (KVS_O_FORMAT_ONLY) knows no kernel, so no page
 * tables: a kernel-virtual address cannot be read. */
int
kvs_no_kernel_error(kvs_t *kd, uint64_t kva)
{
	kerr_set(&kd->err, KVS_E_INVAL, "dump %s was opened for its bytes alone (no kernel: "
	    "--no-kernel, KVS_O_FORMAT_ONLY): kernel virtual address 0x%llx cannot be "
	    "translated; read physical memory (rd -p), or give the kernel (-N)",
	    kd->core_path, (unsigned long long)kva);
	kerr_fault(&kd->err, kva);
	return -1;
}

int
kvs_kvtop(kvs_t *kd, uint64_t kva, uint64_t *pa)
{
	ENTER(kd);
	if (kd->src == &kvs_source_nomem)
		return kvs_nomem_read(kd, kva, NULL, 0, &kd->err);
	if (kd->shrunk)
		return kvs_shrunk_error(kd);
	if (kd->arch == NULL)
		return kvs_no_kernel_error(kd, kva);
	if (kd->arch_priv == NULL)
		return kerr_set(&kd->err, KVS_E_UNMAPPED, "dump %s holds virtual addresses "
		    "only: no physical address for 0x%llx", kd->core_path, (unsigned long long)kva);
	return kd->arch->kvtop(kd->arch_priv, kva, pa, NULL, NULL, &kd->err);
}

void
kvs_tlb_flush(kvs_t *kd)
{
	memset(kd->tlb, 0, sizeof(kd->tlb));
	kd->peek_host = NULL;
	if (kd->src->refresh != NULL)
		kd->src->refresh(kd->src_priv);
	kvs_check_shrunk(kd);
}

/* A translation the cache does not hold: the architecture walks the page
 * tables, and the page found fills its slot (a large page the one for its
 * 1 GiB frame).  Out of line, so that the hits below stay small. */
static __attribute__((noinline)) int
translate_miss(kvs_t *kd, uint64_t va, uint64_t *pa, uint64_t *run)
{
	uint64_t sz = 0;

	if (kd->arch->kvtop(kd->arch_priv, va, pa, run, &sz, &kd->err) != 0)
		return -1;
	if (sz != 0) {
		struct kvs_tlbe *e = sz >= (1ULL << 21) ? &kd->tlb[(va >> 30) & 63] :
		    &kd->tlb[(va >> 12 ^ va >> 21) & 63];
		e->va = va & ~(sz - 1);
		e->pa = *pa - (va & (sz - 1));
		e->size = sz;
	}
	return 0;
}

/* Translate through the cache; a large page fills one entry for all of it.
 * The slot is chosen by the 2 MiB frame so 4 KiB neighbours spread out and
 * a 1 GiB page sits in one slot.  An empty slot (size 0) matches nothing. */
static inline int
translate(kvs_t *kd, uint64_t va, uint64_t *pa, uint64_t *run)
{
	const struct kvs_tlbe *t = &kd->tlb[(va >> 12 ^ va >> 21) & 63];

	if (va - t->va >= t->size) {
		t = &kd->tlb[(va >> 30) & 63];
		if (t->size < (1ULL << 21) || va - t->va >= t->size)
			return translate_miss(kd, va, pa, run);
	}
	*pa = t->pa + (va - t->va);
	*run = t->size - (va - t->va);
	return 0;
}

/* Read without clearing the error first (for internal callers too). */
static int
read_kva(kvs_t *kd, uint64_t kva, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t va = kva;
	size_t total = len;

	if (kd->shrunk)
		return kvs_shrunk_error(kd);
	if (kd->arch == NULL && !kd->info.virtual_only)
		return kvs_no_kernel_error(kd, kva);
	if (kd->info.virtual_only) {
		if (kd->src->read_virt(kd->src_priv, kva, buf, len, &kd->err) == 0)
			return 0;
		return kerr_push(&kd->err, "reading %zu bytes at 0x%llx", total,
		    (unsigned long long)kva);
	}
	while (len > 0) {
		uint64_t pa, run;
		size_t n;

		if (translate(kd, va, &pa, &run) != 0 ||
		    kd->src->read_phys(kd->src_priv, pa, p, n = (size_t)(len < run ? len : run),
		    &kd->err) != 0) {
			/* Report the virtual address that faulted. */
			kd->err.fault_valid = true;
			kd->err.fault_addr = va;
			return kerr_push(&kd->err, "reading %zu bytes at 0x%llx", total,
			    (unsigned long long)kva);
		}
		p += n;
		va += n;
		len -= n;
	}
	return 0;
}

/* A peek that is not within the last page peeked: translated, and its
 * page remembered when the whole of it lies in the mapping (walkers peek
 * neighbouring objects one after another). */
static __attribute__((noinline)) const void *
peek_miss(kvs_t *kd, uint64_t kva, size_t len)
{
	uint64_t pa, run, off = kva & 4095;
	const uint8_t *page;

	if (kd->shrunk || kd->info.virtual_only || kd->src->map_phys == NULL ||
	    translate(kd, kva, &pa, &run) != 0) {
		kerr_clear(&kd->err);
		return NULL;
	}
	if (run >= 4096 - off && (page = kd->src->map_phys(kd->src_priv, pa - off, 4096)) != NULL) {
		kd->peek_vpn = kva >> 12;
		kd->peek_host = page;
		if (len <= 4096 - off)
			return page + off;
	}
	return len <= run ? kd->src->map_phys(kd->src_priv, pa, len) : NULL;
}

const void *
kvs_peek(kvs_t *kd, uint64_t kva, size_t len)
{
	if (kd->peek_host != NULL && kva >> 12 == kd->peek_vpn && len <= 4096 - (kva & 4095))
		return kd->peek_host + (kva & 4095);
	return peek_miss(kd, kva, len);
}

int
kvs_read(kvs_t *kd, uint64_t kva, void *buf, size_t len)
{
	ENTER(kd);
	return read_kva(kd, kva, buf, len);
}

int
kvs_phys_read(kvs_t *kd, uint64_t pa, void *buf, size_t len)
{
	if (kd->shrunk)
		return kvs_shrunk_error(kd);
	return kd->src->read_phys(kd->src_priv, pa, buf, len, &kd->err);
}

int
kvs_read_phys(kvs_t *kd, uint64_t pa, void *buf, size_t len)
{
	ENTER(kd);
	if (kd->shrunk)
		return kvs_shrunk_error(kd);
	if (kd->src->read_phys(kd->src_priv, pa, buf, len, &kd->err) != 0)
		return kerr_push(&kd->err, "reading %zu bytes at physical 0x%llx", len,
		    (unsigned long long)pa);
	return 0;
}

ssize_t
kvs_read_string(kvs_t *kd, uint64_t kva, char *buf, size_t maxlen, int *truncated)
{
	size_t got = 0;

	ENTER(kd);
	if (truncated != NULL)
		*truncated = 0;
	if (maxlen == 0)
		return kerr_set(&kd->err, KVS_E_INVAL, "string buffer of size 0");
	/* Page-sized steps: never touch the page after the terminator. */
	while (got < maxlen - 1) {
		uint64_t va = kva + got;
		uint64_t pg = kd->arch != NULL ? kd->arch->page_size : 4096;
		size_t chunk = (size_t)(pg - (va & (pg - 1)));
		char *nul;

		if (chunk > maxlen - 1 - got)
			chunk = maxlen - 1 - got;
		if (read_kva(kd, va, buf + got, chunk) != 0) {
			buf[got] = '\0';
			return kerr_push(&kd->err, "reading string at 0x%llx",
			    (unsigned long long)kva);
		}
		nul = memchr(buf + got, '\0', chunk);
		if (nul != NULL)
			return nul - buf;
		got += chunk;
	}
	buf[maxlen - 1] = '\0';
	if (truncated != NULL)
		*truncated = 1;
	return (ssize_t)(maxlen - 1);
}

/* ------------------------------------------------------------- errors */

const char *
kvs_geterr(const kvs_t *kd)
{
	return kd->err.msg;
}

kvs_status_t
kvs_errstatus(const kvs_t *kd)
{
	return kd->err.status;
}

uint64_t
kvs_fault_addr(const kvs_t *kd, int *valid)
{
	if (valid != NULL)
		*valid = kd->err.fault_valid;
	return kd->err.fault_valid ? kd->err.fault_addr : 0;
}