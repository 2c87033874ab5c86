/*
 * source_elfdump.c - FreeBSD full memory dump: an ELF64 ET_CORE whose PT_LOAD
 * segments are addressed by physical address.  FreeBSD writes EI_OSABI 255
 * and e_version 0, so neither is checked.  Segments are sorted once (and
 * must be disjoint) so a lookup is a binary search; bytes of p_memsz beyond
 * p_filesz read as zero.  A core whose segments carry kernel virtual
 * addresses (gdb's gcore, a KVA-addressed core) is refused: it is not a
 * physical-memory dump and the page-table walk would be meaningless.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"

struct seg {
	uint64_t pa, memsz, filesz, off;
};

struct elfdump {
	const uint8_t *map;
	uint64_t len;
	struct seg *segs;
	size_t nsegs;
	uint64_t pages;
};

static int
cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	return x->pa < y->pa ? -1 : x->pa > y->pa;
}

static int
elf_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	const Elf64_Ehdr *eh;
	struct elfdump *d;
	size_t i;

	if (a->map == NULL || a->map_len < 4 || memcmp(a->map, ELFMAG, SELFMAG) != 0)
		return KVS_NOTMINE;
	if (a->map_len < sizeof(Elf64_Ehdr))
		return kerr_set(e, KVS_E_TRUNCATED, "ELF header truncated (%llu bytes)",
		    (unsigned long long)a->map_len);
	eh = (const Elf64_Ehdr *)a->map;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return kerr_set(e, KVS_E_FORMAT, "not an amd64 little-endian ELF64 dump");
	if (eh->e_type != ET_CORE)
		return kerr_set(e, KVS_E_FORMAT, "ELF file of type %u is not a core dump "
		    "(was the kernel given as the dump?)", eh->e_type);
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 || eh->e_phnum == 0xffff)
		return kerr_set(e, KVS_E_FORMAT, "bad program headers (entsize %u, count %u)",
		    eh->e_phentsize, eh->e_phnum);
	if (eh->e_phoff > a->map_len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > a->map_len - eh->e_phoff)
		return kerr_set(e, KVS_E_TRUNCATED, "program headers at 0x%llx past end of "
		    "file (%llu bytes)", (unsigned long long)eh->e_phoff,
		    (unsigned long long)a->map_len);
	d = calloc(1, sizeof(*d));
	if (d == NULL || (d->segs = calloc(eh->e_phnum, sizeof(*d->segs))) == NULL) {
		free(d);
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	}
	d->map = a->map;
	d->len = a->map_len;
	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, a->map + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > a->map_len || ph.p_filesz > a->map_len - ph.p_offset) {
			kerr_set(e, KVS_E_TRUNCATED, "segment %zu (physical 0x%llx, 0x%llx bytes "
			    "at offset 0x%llx) past end of file (%llu bytes)", i,
			    (unsigned long long)ph.p_paddr, (unsigned long long)ph.p_filesz,
			    (unsigned long long)ph.p_offset, (unsigned long long)a->map_len);
			goto fail;
		}
		if (ph.p_paddr >= 0xffff800000000000ULL ||
		    (ph.p_vaddr >= 0xffff800000000000ULL && ph.p_vaddr != ph.p_paddr)) {
			kerr_set(e, KVS_E_FORMAT, "ELF core addressed by virtual address "
			    "(segment at 0x%llx), not a FreeBSD full dump",
			    (unsigned long long)ph.p_vaddr);
			goto fail;
		}
		uint64_t memsz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		if (memsz == 0)
			continue;
		if (memsz - 1 > UINT64_MAX - ph.p_paddr) {
			kerr_set(e, KVS_E_FORMAT, "segment %zu (physical 0x%llx, 0x%llx bytes) "
			    "wraps around the address space", i,
			    (unsigned long long)ph.p_paddr, (unsigned long long)memsz);
			goto fail;
		}
		d->segs[d->nsegs++] = (struct seg){ ph.p_paddr, memsz, ph.p_filesz, ph.p_offset };
		d->pages += ph.p_filesz / 4096;
	}
	if (d->nsegs == 0) {
		kerr_set(e, KVS_E_FORMAT, "ELF dump has no PT_LOAD segments");
		goto fail;
	}
	/* Headers that run into segment data mean e_phnum is wrong. */
	for (i = 0; i < d->nsegs; i++) {
		uint64_t phend = eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
		if (d->segs[i].filesz > 0 && eh->e_phoff < d->segs[i].off + d->segs[i].filesz &&
		    d->segs[i].off < phend) {
			kerr_set(e, KVS_E_FORMAT, "program header table (%u entries at 0x%llx) "
			    "overlaps segment data at 0x%llx", eh->e_phnum,
			    (unsigned long long)eh->e_phoff, (unsigned long long)d->segs[i].off);
			goto fail;
		}
	}
	qsort(d->segs, d->nsegs, sizeof(*d->segs), cmp_seg);
	/* The binary search needs disjoint segments. */
	for (i = 1; i < d->nsegs; i++) {
		if (d->segs[i].pa - d->segs[i - 1].pa < d->segs[i - 1].memsz) {
			kerr_set(e, KVS_E_FORMAT, "segments at physical 0x%llx (0x%llx bytes) and "
			    "0x%llx overlap", (unsigned long long)d->segs[i - 1].pa,
			    (unsigned long long)d->segs[i - 1].memsz,
			    (unsigned long long)d->segs[i].pa);
			goto fail;
		}
	}
	*priv = d;
	return 0;
fail:
	free(d->segs);
	free(d);
	return -1;
}

static const struct seg *
find_seg(const struct elfdump *d, uint64_t pa)
{
	size_t lo = 0, hi = d->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->segs[mid].pa <= pa)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct seg *s = &d->segs[lo - 1];
	return pa - s->pa < s->memsz ? s : NULL;
}

static int
elf_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	struct elfdump *d = priv;
	uint8_t *p = buf;

	while (len > 0) {
		const struct seg *s = find_seg(d, pa);
		uint64_t in, n;

		if (s == NULL) {
			kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx not in dump",
			    (unsigned long long)pa);
			kerr_fault(e, pa);
			return -1;
		}
		in = pa - s->pa;
		n = s->memsz - in < len ? s->memsz - in : len;
		if (in >= s->filesz)
			memset(p, 0, n);
		else {
			uint64_t f = s->filesz - in < n ? s->filesz - in : n;
			memcpy(p, d->map + s->off + in, f);
			memset(p + f, 0, n - f);
		}
		p += n;
		pa += n;
		len -= n;
	}
	return 0;
}

static void
elf_info(void *priv, struct kvs_src_info *out)
{
	struct elfdump *d = priv;

	memset(out, 0, sizeof(*out));
	out->format = "elf";
	out->page_size = 4096;
	out->dumped_pages = d->pages;
	out->source_bytes = d->len;
}

static void
elf_close(void *priv)
{
	struct elfdump *d = priv;

	free(d->segs);
	free(d);
}

const struct kvs_source_ops kvs_source_elfdump = {
	.name = "elf",
	.open = elf_open,
	.read_phys = elf_read,
	.info = elf_info,
	.close = elf_close,
};
