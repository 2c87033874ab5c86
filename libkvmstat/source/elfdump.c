/*
 * elfdump.c - memory dumps in ELF64 ET_CORE form, addressed physically,
 * virtually, or both:
 *
 *   - FreeBSD full dumps: PT_LOADs by physical address (p_vaddr = p_paddr);
 *     FreeBSD writes EI_OSABI 255 and e_version 0, so neither is checked;
 *   - QEMU dump-guest-memory without paging: physical PT_LOADs, p_vaddr 0;
 *   - QEMU with paging, kdump's /proc/vmcore: each PT_LOAD maps a kernel
 *     virtual range and says which physical range backs it (many virtual
 *     ranges may share one physical range and one stretch of the file);
 *   - cores addressed only virtually (p_paddr 0: gdb-style cores, the
 *     fixture generator's vmcore.kva.elf): no physical memory at all, so the
 *     handle reads them through read_virt instead of the page tables.
 *
 * Physical and virtual ranges each get a sorted index, so a lookup is a binary
 * search; overlapping physical ranges (aliases) are kept once.  Bytes of
 * p_memsz beyond p_filesz read as zero.  QEMU 7.2 writes e_ehsize 8 and puts
 * the section headers first; with more than 65,534 segments e_phnum is
 * PN_XNUM and section header 0's sh_info holds the count.  Notes are scanned
 * for VMCOREINFO, which the OS layer reads.
 *
 * A file that cannot be mapped (Linux's /proc/kcore: a live kernel's memory
 * as an ELF core with virtual segments, p_paddr giving the physical address
 * of RAM and of the kernel image, -1 for the rest) comes as a live view the
 * core reads with pread: headers and notes once at open, memory on each
 * read.  Its aliases are not compared (their bytes change).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

struct seg {
	uint64_t addr, memsz, filesz, off;
};

struct elfdump {
	const uint8_t *map;
	uint64_t len;
	uint8_t *own;                   /* headers and notes, read through a view */
	const struct kvs_view *view;    /* under a layer: segments read through it */
	struct seg *segs;       /* physical, sorted by address */
	size_t nsegs;
	struct seg *vsegs;      /* virtual, sorted by address */
	size_t nvsegs;
	uint64_t pages;
	const char *vmcoreinfo;
	size_t vmcoreinfo_len;
	unsigned machine;
};

static int
cmp_seg(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Longest first at one address, so the kept alias covers most. */
	return x->memsz > y->memsz ? -1 : x->memsz < y->memsz;
}

/* Sort, then keep one of every overlapping range: aliases of one physical
 * range (paging dumps) or of one virtual range, which must then say the same
 * thing, i.e. come from the same bytes of the file.  Two segments that claim
 * one address with different contents are an error (*bad set).  Returns the
 * count kept. */
/*
 * Whether segment b, starting delta bytes into a, holds a's bytes there.  The
 * same file bytes (QEMU's aliases) trivially do.  A kdump /proc/vmcore has
 * the kernel image as its own segment, a second copy of RAM bytes at another
 * offset: comparing it all would make opening cost grow with the image, so
 * its first and last pages are compared, which catches a dump whose aliases
 * disagree without reading it whole.
 */
/* n bytes of the file at off: the mapping, or buf filled through the view
 * (NULL if that read fails). */
static const uint8_t *
file_bytes(const struct elfdump *d, uint64_t off, uint8_t *buf, size_t n)
{
	struct kvs_error e;

	if (d->view == NULL)
		return d->map + off;
	memset(&e, 0, sizeof(e));
	return d->view->read(d->view->priv, off, buf, n, &e) == 0 ? buf : NULL;
}

static bool
same_bytes(const struct elfdump *d, const struct seg *a, const struct seg *b, uint64_t delta)
{
	uint8_t b1[4096], b2[4096];
	const uint8_t *p, *q;
	uint64_t n, k;

	if (b->off == a->off + delta || (d->view != NULL && d->view->live))
		return true;
	if (a->filesz <= delta || b->filesz == 0)
		return false;
	n = a->filesz - delta < b->filesz ? a->filesz - delta : b->filesz;
	k = n < 4096 ? n : 4096;
	p = file_bytes(d, a->off + delta, b1, (size_t)k);
	q = file_bytes(d, b->off, b2, (size_t)k);
	if (p == NULL || q == NULL || memcmp(p, q, k) != 0)
		return false;
	p = file_bytes(d, a->off + delta + n - k, b1, (size_t)k);
	q = file_bytes(d, b->off + n - k, b2, (size_t)k);
	return p != NULL && q != NULL && memcmp(p, q, k) == 0;
}

static size_t
sort_unique(const struct elfdump *d, struct seg *s, size_t n, const struct seg **bad)
{
	size_t i, k = 0;

	*bad = NULL;
	if (n == 0)
		return 0;
	qsort(s, n, sizeof(*s), cmp_seg);
	for (i = 1; i < n; i++) {
		struct seg *last = &s[k];
		if (s[i].addr - last->addr < last->memsz) {
			uint64_t delta = s[i].addr - last->addr;
			if (s[i].filesz == 0 || !same_bytes(d, last, &s[i], delta)) {
				*bad = last;
				return i;
			}
			/* Overlap: keep what extends past the kept range. */
			uint64_t end = s[i].addr + s[i].memsz, lend = last->addr + last->memsz;
			if (end <= lend)
				continue;
			uint64_t cut = lend - s[i].addr;
			s[i].addr += cut;
			s[i].memsz -= cut;
			s[i].off += cut < s[i].filesz ? cut : s[i].filesz;
			s[i].filesz = cut < s[i].filesz ? s[i].filesz - cut : 0;
		}
		s[++k] = s[i];
	}
	return k + 1;
}

/* The VMCOREINFO note's text, if a PT_NOTE holds one. */
static void
find_vmcoreinfo(struct elfdump *d, uint64_t off, uint64_t size)
{
	uint64_t p = off, end = off + size;

	while (end - p >= 12 && p < end) {
		uint32_t namesz, descsz;
		memcpy(&namesz, d->map + p, 4);
		memcpy(&descsz, d->map + p + 4, 4);
		uint64_t name = p + 12, desc = name + ((namesz + 3ULL) & ~3ULL);
		uint64_t next = desc + ((descsz + 3ULL) & ~3ULL);
		if (desc > end || descsz > end - desc || next > end + 3)
			return;
		if (namesz == 11 && memcmp(d->map + name, "VMCOREINFO", 11) == 0) {
			d->vmcoreinfo = (const char *)d->map + desc;
			d->vmcoreinfo_len = descsz;
			return;
		}
		p = next;
	}
}

/*
 * Under a layer (a compressed dump): the ELF header, the program headers
 * (and section header 0, for PN_XNUM) and the notes, read into *own, whose
 * length is *len.  Each is bounded by the stream and by HEAD_MAX.
 */
#define HEAD_MAX (64ULL << 20)
#define NO_PADDR UINT64_MAX     /* /proc/kcore: a segment with no physical address */
static int
elf_view_head(const struct kvs_view *v, uint8_t **own, uint64_t *len, struct kvs_error *e)
{
	Elf64_Ehdr eh;
	uint64_t end = sizeof(eh), phnum, k;
	uint8_t *buf = NULL;
	int pass;

	if (v->size < sizeof(eh))
		return KVS_NOTMINE;
	if (v->read(v->priv, 0, &eh, sizeof(eh), e) != 0)
		return -1;                      /* the layer says why */
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return KVS_NOTMINE;
	phnum = eh.e_phnum;
	if (phnum == PN_XNUM && eh.e_shoff <= v->size && v->size - eh.e_shoff >= sizeof(Elf64_Shdr)) {
		Elf64_Shdr sh0;
		if (v->read(v->priv, eh.e_shoff, &sh0, sizeof(sh0), e) == 0) {
			phnum = sh0.sh_info;
			end = eh.e_shoff + sizeof(sh0);
		}
	}
	if (eh.e_phoff <= v->size && phnum <= (v->size - eh.e_phoff) / sizeof(Elf64_Phdr) &&
	    eh.e_phoff + phnum * sizeof(Elf64_Phdr) > end)
		end = eh.e_phoff + phnum * sizeof(Elf64_Phdr);
	/* Two passes: the headers, then the notes they point at. */
	for (pass = 0; pass < 2; pass++) {
		uint8_t *nb;
		if (end > v->size)
			end = v->size;
		if (end > HEAD_MAX)
			end = HEAD_MAX;
		nb = realloc(buf, (size_t)end);
		if (nb == NULL) {
			free(buf);
			return kerr_set(e, KVS_E_NOMEM, "out of memory for the ELF headers");
		}
		buf = nb;
		if (v->read(v->priv, 0, buf, (size_t)end, e) != 0) {
			free(buf);
			return -1;
		}
		if (pass == 1 || eh.e_phoff > end || phnum > (end - eh.e_phoff) / sizeof(Elf64_Phdr))
			break;
		for (k = 0; k < phnum; k++) {
			Elf64_Phdr ph;
			memcpy(&ph, buf + eh.e_phoff + k * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_NOTE && ph.p_offset <= v->size &&
			    ph.p_filesz <= v->size - ph.p_offset && ph.p_offset + ph.p_filesz > end &&
			    ph.p_offset + ph.p_filesz <= HEAD_MAX)
				end = ph.p_offset + ph.p_filesz;
		}
	}
	*own = buf;
	*len = end;
	return 0;
}

static int elf_parse(const struct kvs_open_args *a, const uint8_t *map, uint64_t map_len,
    uint64_t len, uint8_t *own, void **priv, struct kvs_error *e);

static int
elf_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	const uint8_t *map = a->map;
	uint64_t map_len = a->map_len, len = a->map_len;
	uint8_t *own = NULL;

	if (map == NULL && a->view != NULL) {
		int rc = elf_view_head(a->view, &own, &map_len, e);
		if (rc != 0)
			return rc;
		map = own;
		len = a->view->size;
	}
	if (map == NULL || map_len < 4 || memcmp(map, ELFMAG, SELFMAG) != 0) {
		free(own);
		return KVS_NOTMINE;
	}
	/* Headers (map, map_len) and segments (len) are checked apart: under a
	 * layer, map holds only the headers and notes. */
	int rc = elf_parse(a, map, map_len, len, own, priv, e);
	if (rc != 0)
		free(own);
	return rc;
}

static int
elf_parse(const struct kvs_open_args *a, const uint8_t *map, uint64_t map_len, uint64_t len,
    uint8_t *own, void **priv, struct kvs_error *e)
{
	const Elf64_Ehdr *eh;
	struct elfdump *d;
	uint64_t phnum;
	bool any_paddr = false;
	size_t i;

	if (map_len < sizeof(Elf64_Ehdr))
		return kerr_set(e, KVS_E_TRUNCATED, "ELF header truncated (%llu bytes)",
		    (unsigned long long)map_len);
	eh = (const Elf64_Ehdr *)map;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64))
		return kerr_set(e, KVS_E_FORMAT, "not a little-endian ELF64 dump of an amd64 "
		    "or arm64 machine (machine %u)", eh->e_machine);
	if (eh->e_type != ET_CORE)
		return kerr_set(e, KVS_E_FORMAT, "ELF file of type %u is not a core dump "
		    "(was the kernel given as the dump?)", eh->e_type);
	phnum = eh->e_phnum;
	if (phnum == PN_XNUM) {
		/* The real count is in section header 0 (QEMU's paging dumps). */
		Elf64_Shdr sh0;
		if (eh->e_shoff == 0 || eh->e_shoff > map_len ||
		    map_len - eh->e_shoff < sizeof(sh0))
			return kerr_set(e, KVS_E_FORMAT, "program header count is PN_XNUM "
			    "but there is no section header 0 to hold it");
		memcpy(&sh0, map + eh->e_shoff, sizeof(sh0));
		phnum = sh0.sh_info;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || phnum == 0)
		return kerr_set(e, KVS_E_FORMAT, "bad program headers (entsize %u, count %llu)",
		    eh->e_phentsize, (unsigned long long)phnum);
	if (eh->e_phoff > map_len ||
	    phnum * sizeof(Elf64_Phdr) > map_len - eh->e_phoff)
		return kerr_set(e, KVS_E_TRUNCATED, "program headers at 0x%llx past end of "
		    "file (%llu bytes)", (unsigned long long)eh->e_phoff,
		    (unsigned long long)map_len);
	d = calloc(1, sizeof(*d));
	if (d == NULL || (d->segs = calloc(phnum, sizeof(*d->segs))) == NULL ||
	    (d->vsegs = calloc(phnum, sizeof(*d->vsegs))) == NULL) {
		if (d != NULL)
			free(d->segs);
		free(d);
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	}
	d->map = map;
	d->len = len;
	d->own = own;
	d->machine = eh->e_machine;
	d->view = a->view;
	/* A core is addressed physically when any PT_LOAD names a physical
	 * address (then p_paddr 0 is page 0, not "none"), and only virtually
	 * when none does. */
	for (i = 0; i < phnum && !any_paddr; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, map + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		any_paddr = ph.p_type == PT_LOAD && ph.p_paddr != 0 && ph.p_paddr != NO_PADDR;
	}
	for (i = 0; i < phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, map + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_NOTE && ph.p_offset <= map_len &&
		    ph.p_filesz <= map_len - ph.p_offset && d->vmcoreinfo == NULL)
			find_vmcoreinfo(d, ph.p_offset, ph.p_filesz);
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset) {
			kerr_set(e, KVS_E_TRUNCATED, "segment %zu (physical 0x%llx, 0x%llx bytes "
			    "at offset 0x%llx) past end of file (%llu bytes)", i,
			    (unsigned long long)ph.p_paddr, (unsigned long long)ph.p_filesz,
			    (unsigned long long)ph.p_offset, (unsigned long long)len);
			goto fail;
		}
		uint64_t memsz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		if (memsz == 0)
			continue;
		/* /proc/kcore: vmalloc, vmemmap... have no physical address. */
		bool nopa = d->view != NULL && d->view->live && ph.p_paddr == NO_PADDR;
		if ((!nopa && memsz - 1 > UINT64_MAX - ph.p_paddr) ||
		    memsz - 1 > UINT64_MAX - ph.p_vaddr) {
			kerr_set(e, KVS_E_FORMAT, "segment %zu (physical 0x%llx, 0x%llx bytes) "
			    "wraps around the address space", i,
			    (unsigned long long)ph.p_paddr, (unsigned long long)memsz);
			goto fail;
		}
		if (!nopa && (any_paddr || ph.p_vaddr == 0))
			d->segs[d->nsegs++] = (struct seg){ ph.p_paddr, memsz, ph.p_filesz, ph.p_offset };
		if (ph.p_vaddr != 0 && ph.p_vaddr != ph.p_paddr)
			d->vsegs[d->nvsegs++] = (struct seg){ ph.p_vaddr, memsz, ph.p_filesz, ph.p_offset };
	}
	if (d->nsegs + d->nvsegs == 0) {
		kerr_set(e, KVS_E_FORMAT, "ELF dump has no PT_LOAD segments");
		goto fail;
	}
	/* Headers that run into segment data mean the count is wrong. */
	for (i = 0; i < d->nsegs + d->nvsegs; i++) {
		const struct seg *s = i < d->nsegs ? &d->segs[i] : &d->vsegs[i - d->nsegs];
		uint64_t phend = eh->e_phoff + phnum * sizeof(Elf64_Phdr);
		if (s->filesz > 0 && eh->e_phoff < s->off + s->filesz && s->off < phend) {
			kerr_set(e, KVS_E_FORMAT, "program header table (%llu entries at 0x%llx) "
			    "overlaps segment data at 0x%llx", (unsigned long long)phnum,
			    (unsigned long long)eh->e_phoff, (unsigned long long)s->off);
			goto fail;
		}
	}
	{
		const struct seg *bad;
		size_t k = sort_unique(d, d->segs, d->nsegs, &bad);
		const char *what = "physical";
		if (bad == NULL) {
			d->nsegs = k;
			k = sort_unique(d, d->vsegs, d->nvsegs, &bad);
			d->nvsegs = k;
			what = "virtual";
			/* With physical memory the page tables are authoritative
			 * and the virtual index is not used: QEMU's paging dumps
			 * may map one odd address twice (seen under KASLR). */
			if (bad != NULL && d->nsegs > 0) {
				bad = NULL;
				d->nvsegs = 0;
			}
		}
		if (bad != NULL) {
			const struct seg *next = what[0] == 'p' ? &d->segs[k] : &d->vsegs[k];
			kerr_set(e, KVS_E_FORMAT, "segments at %s 0x%llx (0x%llx bytes) and "
			    "0x%llx overlap with different contents", what,
			    (unsigned long long)bad->addr, (unsigned long long)bad->memsz,
			    (unsigned long long)next->addr);
			goto fail;
		}
	}
	for (i = 0; i < d->nsegs; i++)
		d->pages += d->segs[i].filesz / 4096;
	if (d->nsegs == 0)
		for (i = 0; i < d->nvsegs; i++)
			d->pages += d->vsegs[i].filesz / 4096;
	*priv = d;
	return 0;
fail:
	free(d->segs);
	free(d->vsegs);
	free(d);
	return -1;
}

static const struct seg *
find_seg(const struct seg *segs, size_t nsegs, uint64_t addr)
{
	size_t lo = 0, hi = nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (segs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct seg *s = &segs[lo - 1];
	return addr - s->addr < s->memsz ? s : NULL;
}

static int
seg_read(const struct elfdump *d, const struct seg *segs, size_t nsegs, const char *what,
    uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	uint8_t *p = buf;

	while (len > 0) {
		const struct seg *s = find_seg(segs, nsegs, pa);
		uint64_t in, n;

		if (s == NULL) {
			kerr_set(e, KVS_E_NOTDUMPED, "%s 0x%llx not in dump", what,
			    (unsigned long long)pa);
			kerr_fault(e, pa);
			return -1;
		}
		in = pa - s->addr;
		n = s->memsz - in < len ? s->memsz - in : len;
		if (in >= s->filesz)
			memset(p, 0, n);
		else {
			uint64_t f = s->filesz - in < n ? s->filesz - in : n;
			if (d->view != NULL) {
				if (d->view->read(d->view->priv, s->off + in, p, (size_t)f, e) != 0)
					return kerr_push(e, "%s 0x%llx", what, (unsigned long long)pa);
			} else
				memcpy(p, d->map + s->off + in, f);
			memset(p + f, 0, n - f);
		}
		p += n;
		pa += n;
		len -= n;
	}
	return 0;
}

static int
elf_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	const struct elfdump *d = priv;

	return seg_read(d, d->segs, d->nsegs, "physical", pa, buf, len, e);
}

/* Bytes a segment holds in the file (not the zeros past its file size). */
static const void *
elf_map(void *priv, uint64_t pa, size_t len)
{
	const struct elfdump *d = priv;
	const struct seg *s = d->view == NULL ? find_seg(d->segs, d->nsegs, pa) : NULL;
	uint64_t in;

	if (s == NULL)
		return NULL;
	in = pa - s->addr;
	if (in >= s->filesz || len > s->filesz - in || s->off + in + len > d->len)
		return NULL;
	return d->map + s->off + in;
}

static int
elf_read_virt(void *priv, uint64_t va, void *buf, size_t len, struct kvs_error *e)
{
	const struct elfdump *d = priv;

	return seg_read(d, d->vsegs, d->nvsegs, "virtual", va, buf, len, e);
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
	out->virtual_only = d->nsegs == 0;
	out->live = d->view != NULL && d->view->live;
	out->vmcoreinfo = d->vmcoreinfo;
	out->vmcoreinfo_len = d->vmcoreinfo_len;
	out->machine = d->machine;
	for (size_t i = 0; i < d->nsegs; i++)
		if (d->segs[i].addr + d->segs[i].memsz > out->phys_end)
			out->phys_end = d->segs[i].addr + d->segs[i].memsz;
}

static void
elf_close(void *priv)
{
	struct elfdump *d = priv;

	free(d->segs);
	free(d->vsegs);
	free(d->own);
	free(d);
}

const struct kvs_source_ops kvs_source_elfdump = {
	.name = "elf",
	.open = elf_open,
	.read_phys = elf_read,
	.map_phys = elf_map,
	.read_virt = elf_read_virt,
	.info = elf_info,
	.close = elf_close,
};
