/*
 * kernel.c - the Linux kernel family (x86_64 and arm64): VMCOREINFO, KASLR,
 * the page tables, the banner check, kernel info and the printk ring buffer.
 *
 * Bootstrap.  Everything starts from VMCOREINFO, the "KEY=value" text the
 * kernel publishes for dump tools: a note in ELF dumps (kdump, QEMU with
 * -device vmcoreinfo), or found by scanning physical memory when the source
 * has no notes (a guest's RAM file).  It gives KERNELOFFSET (the KASLR slide
 * of the kernel image), NUMBER(phys_base) (signed: where the image sits
 * physically, relative to its link address) and SYMBOL(init_top_pgt), the
 * kernel's top page table.  The image is mapped linearly from
 * __START_KERNEL_map, so an image address converts to physical as
 * va - __START_KERNEL_map + phys_base: that reads init_top_pgt's address and
 * page_offset_base (the randomised direct map) before any page-table walk.
 * Without VMCOREINFO the kernel is assumed unrandomised (nokaslr), which the
 * banner check then confirms or refutes.
 *
 * arm64 (the kernel file's machine, or VMCOREINFO's NUMBER(kimage_voffset)
 * without one): the image maps at va - kimage_voffset, KASLR moves it (and
 * its symbols, from MODULES_END up) by KERNELOFFSET, swapper_pg_dir is the
 * root, PAGESIZE the granule, TCR_EL1_T1SZ the VA size, and the linear map
 * runs from PAGE_OFFSET = -(1 << VA_BITS) over PHYS_OFFSET.
 */
#include <ctype.h>
#include <elf.h>
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"
#include "memstat.h"

#define START_KERNEL_MAP 0xffffffff80000000ULL   /* __START_KERNEL_map */
#define PAGE_OFFSET_DEFAULT 0xffff888000000000ULL /* without RANDOMIZE_MEMORY */
#define DIRECT_MAP_SPAN (1ULL << 46)              /* 64 TiB, 4-level paging */
#define VMCOREINFO_MAX 65536
#define SCAN_CHUNK (1u << 20)
#define BANNER_MAX 512
#define PRINTK_RECORDS_MAX (1u << 24)
#define BTF_MAX (256u << 20)

struct linux_priv {
	char *vmcoreinfo;         /* NUL-terminated copy, or NULL */
	int64_t phys_base;
	bool have_vmcoreinfo;
	/* arm64: the image maps at va - kimage_voffset; the linear map is
	 * PAGE_OFFSET + (pa - PHYS_OFFSET) */
	bool arm64;
	uint64_t kimage_voffset, phys_offset;
};

static struct linux_priv *
priv_of(kvs_t *kd)
{
	return kd->os_priv;
}

static void lnx_close(kvs_t *kd);

/* ------------------------------------------------------------ VMCOREINFO */

const char *
linux_vmcoreinfo(kvs_t *kd, const char *key, size_t *len)
{
	struct linux_priv *lp = priv_of(kd);
	size_t klen = strlen(key);
	const char *p;

	if (lp == NULL || lp->vmcoreinfo == NULL)
		return NULL;
	for (p = lp->vmcoreinfo; *p != '\0'; ) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p) : strlen(p);
		if (l > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			*len = l - klen - 1;
			return p + klen + 1;
		}
		p += l + (eol != NULL);
	}
	return NULL;
}

const char *
linux_vmcoreinfo_text(kvs_t *kd)
{
	struct linux_priv *lp = priv_of(kd);

	return lp != NULL ? lp->vmcoreinfo : NULL;
}

bool
linux_vi_u64(kvs_t *kd, const char *key, int base, uint64_t *v)
{
	char tmp[32];
	size_t len;
	const char *s = linux_vmcoreinfo(kd, key, &len);
	char *end;

	if (s == NULL || len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (tmp[0] == '-')
		*v = (uint64_t)strtoll(tmp, &end, base);
	else
		*v = strtoull(tmp, &end, base);
	return *end == '\0';
}

static bool
vi_u64(kvs_t *kd, const char *key, int base, uint64_t *v)
{
	return linux_vi_u64(kd, key, base, v);
}

/* Does this text look like VMCOREINFO (and not the kernel's own format
 * string "OSRELEASE=%s")? */
static bool
plausible_vmcoreinfo(const char *t, size_t len)
{
	return len > 20 && memchr(t, '%', len < 64 ? len : 64) == NULL &&
	    memmem(t, len, "PAGESIZE=", 9) != NULL;
}

static int
keep_vmcoreinfo(kvs_t *kd, const char *text, size_t len)
{
	struct linux_priv *lp = priv_of(kd);

	lp->vmcoreinfo = malloc(len + 1);
	if (lp->vmcoreinfo == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for VMCOREINFO");
	memcpy(lp->vmcoreinfo, text, len);
	lp->vmcoreinfo[len] = '\0';
	lp->vmcoreinfo[strnlen(lp->vmcoreinfo, len)] = '\0';
	lp->have_vmcoreinfo = true;
	return 0;
}

/*
 * No note: look for the text in physical memory.  QEMU's vmcoreinfo device
 * and the kernel's own vmcoreinfo page both hold it, starting "OSRELEASE=".
 * Unreadable stretches (holes) are skipped a chunk at a time.
 */
static int
scan_vmcoreinfo(kvs_t *kd)
{
	static const char key[] = "OSRELEASE=";
	uint64_t limit = kd->info.source_bytes, pa;
	char *buf = malloc(SCAN_CHUNK + VMCOREINFO_MAX);
	int rc = 1;

	if (buf == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (limit < (4ULL << 30))
		limit = 4ULL << 30;
	for (pa = 0; pa < limit && rc == 1; pa += SCAN_CHUNK) {
		const char *p, *end;
		if (kd->src->read_phys(kd->src_priv, pa, buf, SCAN_CHUNK, &kd->err) != 0) {
			kerr_clear(&kd->err);
			continue;
		}
		end = buf + SCAN_CHUNK;
		for (p = buf; (p = memmem(p, (size_t)(end - p), key, sizeof(key) - 1)) != NULL; p++) {
			uint64_t at = pa + (uint64_t)(p - buf);
			char *t = buf + SCAN_CHUNK;   /* scratch after the chunk */
			size_t n;
			if (kd->src->read_phys(kd->src_priv, at, t, VMCOREINFO_MAX - 1, &kd->err) != 0) {
				kerr_clear(&kd->err);
				n = (size_t)(end - p);
				memmove(t, p, n);
			} else
				n = VMCOREINFO_MAX - 1;
			t[n] = '\0';
			n = strlen(t);
			if (plausible_vmcoreinfo(t, n)) {
				rc = keep_vmcoreinfo(kd, t, n);
				break;
			}
		}
	}
	free(buf);
	return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------- discovery */

static int
lnx_probe(kvs_t *kd)
{
	struct kvs_error tmp;

	kerr_clear(&tmp);
	if (kvs_symtab_lookup(kd->syms, "linux_banner", NULL, NULL, &tmp) == 0)
		return 0;
	return KVS_NOTMINE;
}

/* Physical address of a kernel-image address (link or runtime). */
static uint64_t
image_pa(kvs_t *kd, uint64_t va)
{
	struct linux_priv *lp = priv_of(kd);

	if (lp->arm64)
		return va - lp->kimage_voffset;
	return va - START_KERNEL_MAP + (uint64_t)lp->phys_base;
}

/* A kernel-image symbol's runtime address. */
static int
image_sym(kvs_t *kd, const char *name, uint64_t *va)
{
	if (kvs_symtab_lookup(kd->syms, name, va, NULL, &kd->err) != 0)
		return -1;
	*va = kvs_slide(kd, *va);
	return 0;
}

int
linux_image_read(kvs_t *kd, uint64_t va, void *buf, size_t len)
{
	if (kd->info.virtual_only)
		return kd->src->read_virt(kd->src_priv, va, buf, len, &kd->err);
	return kvs_phys_read(kd, image_pa(kd, va), buf, len);
}

/* The handle's Linux state and the dump's VMCOREINFO (its note, or found
 * in physical memory): 0, 1 if the dump has none, -1 on error. */
static int
find_vmcoreinfo(kvs_t *kd)
{
	struct linux_priv *lp = priv_of(kd);

	if (lp == NULL) {
		if ((lp = calloc(1, sizeof(*lp))) == NULL)
			return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		kd->os_priv = lp;
		if (kd->info.vmcoreinfo != NULL && kd->info.vmcoreinfo_len > 0) {
			if (keep_vmcoreinfo(kd, kd->info.vmcoreinfo, kd->info.vmcoreinfo_len) != 0)
				return -1;
		} else if (!kd->info.virtual_only && scan_vmcoreinfo(kd) != 0)
			return -1;
	}
	return lp->have_vmcoreinfo ? 0 : 1;
}

/* No kernel file: a dump with VMCOREINFO holds a Linux kernel. */
static int
lnx_probe_dump(kvs_t *kd, unsigned *machine)
{
	uint64_t v;
	int rc = find_vmcoreinfo(kd);

	if (rc < 0)
		return -1;
	if (rc > 0 || !vi_u64(kd, "PAGESIZE", 10, &v)) {
		lnx_close(kd);
		kerr_set(&kd->err, KVS_E_FORMAT, rc > 0 ? "no VMCOREINFO" :
		    "VMCOREINFO without PAGESIZE");
		return KVS_NOTMINE;
	}
	/* An arm64 kernel says where its image maps (kimage_voffset); an
	 * x86_64 one does not. */
	*machine = vi_u64(kd, "NUMBER(kimage_voffset)", 16, &v) ? EM_AARCH64 : EM_X86_64;
	return 0;
}

/* Where the kernel was loaded (KASLR) and, with no kernel file, its
 * symbols from kallsyms. */
static int
lnx_attach(kvs_t *kd)
{
	struct linux_priv *lp;
	uint64_t v;

	if (find_vmcoreinfo(kd) < 0)
		return -1;
	lp = priv_of(kd);
	lp->arm64 = kd->arch != NULL ? kd->arch->elf_machine == EM_AARCH64 :
	    vi_u64(kd, "NUMBER(kimage_voffset)", 16, &v);
	if (lp->arm64) {
		/* the image at va - kimage_voffset (KASLR included); it starts
		 * where the modules' area ends (KIMAGE_VADDR) */
		uint64_t kimage = 0;
		if (!vi_u64(kd, "NUMBER(kimage_voffset)", 16, &lp->kimage_voffset) ||
		    !vi_u64(kd, "NUMBER(PHYS_OFFSET)", 16, &lp->phys_offset))
			return kerr_set(&kd->err, KVS_E_FORMAT, "an arm64 dump without "
			    "VMCOREINFO's NUMBER(kimage_voffset) and NUMBER(PHYS_OFFSET): "
			    "where its kernel image lies is not known");
		if (vi_u64(kd, "KERNELOFFSET", 16, &v) && v != 0) {
			if (!vi_u64(kd, "NUMBER(MODULES_END)", 16, &kimage))
				return kerr_set(&kd->err, KVS_E_FORMAT, "a randomised arm64 "
				    "kernel without VMCOREINFO's NUMBER(MODULES_END)");
			kd->slide = v;
			kd->slide_min = kimage;
		}
	} else if (vi_u64(kd, "KERNELOFFSET", 16, &v)) {
		kd->slide = v;
		kd->slide_min = START_KERNEL_MAP;
	}
	if (vi_u64(kd, "NUMBER(phys_base)", 10, &v))
		lp->phys_base = (int64_t)v;
	if (kd->syms == NULL) {
		if (!lp->have_vmcoreinfo)
			return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no kernel file given, and "
			    "the dump holds no VMCOREINFO to find the kernel's symbols by "
			    "(give the kernel with -N)");
		if (linux_kallsyms_load(kd, &kd->syms) != 0) {
			/* a RAM file whose memory starts above 0 (arm64 virt) read
			 * as if from 0: say how it is read */
			uint64_t st;
			if (lp->arm64 && kd->info.format != NULL &&
			    strcmp(kd->info.format, "raw") == 0 &&
			    vi_u64(kd, "SYMBOL(_stext)", 16, &st) &&
			    image_pa(kd, st) >= kd->info.source_bytes)
				return kerr_push(&kd->err, "kernel symbols from memory (the kernel "
				    "lies at physical 0x%llx, past this raw file's end: a RAM file "
				    "whose first byte is not physical 0 is read as FILE@ADDR, QEMU "
				    "virt's arm64 RAM as FILE@0x40000000)",
				    (unsigned long long)image_pa(kd, st));
			return kerr_push(&kd->err, "kernel symbols from memory");
		}
	}
	return 0;
}

/* Where the kernel's .BTF section sits in memory (__start_BTF ..
 * __stop_BTF), for dumps opened without a kernel file. */
static int
lnx_memory_btf(kvs_t *kd, uint64_t *kva, uint64_t *len)
{
	uint64_t start, stop;

	if (kvs_symbol(kd, "__start_BTF", &start, NULL) != 0 ||
	    kvs_symbol(kd, "__stop_BTF", &stop, NULL) != 0) {
		/* kallsyms of text only: the section by its header */
		kerr_clear(&kd->err);
		return linux_btf_find(kd, kva, len) == 0 ? 0 : 1;
	}
	if (stop <= start || stop - start > BTF_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "__start_BTF 0x%llx .. __stop_BTF 0x%llx: "
		    "not a BTF section", (unsigned long long)start, (unsigned long long)stop);
	*kva = start;
	*len = stop - start;
	return 0;
}

/* arm64: swapper_pg_dir, the granule (PAGESIZE), the kernel's VA size
 * (64 - TCR_EL1.T1SZ, else VA_BITS), and the linear map:
 * PAGE_OFFSET = -(1 << VA_BITS) for half the space, at PHYS_OFFSET. */
static int
arm64_xlat_setup(kvs_t *kd, struct kvs_xlat_params *p)
{
	struct linux_priv *lp = priv_of(kd);
	uint64_t top, v, va_bits = 48, pgsz = 4096, maxphys = 48;
	unsigned shift = 0;

	if (!vi_u64(kd, "SYMBOL(swapper_pg_dir)", 16, &top) &&
	    image_sym(kd, "swapper_pg_dir", &top) != 0)
		return kerr_push(&kd->err, "cannot find the kernel page tables (swapper_pg_dir)");
	vi_u64(kd, "PAGESIZE", 10, &pgsz);
	while (shift < 20 && (1ULL << shift) < pgsz)
		shift++;
	if ((1ULL << shift) != pgsz)
		return kerr_set(&kd->err, KVS_E_DATA, "VMCOREINFO's PAGESIZE %llu is no arm64 "
		    "granule", (unsigned long long)pgsz);
	vi_u64(kd, "NUMBER(VA_BITS)", 10, &va_bits);
	vi_u64(kd, "NUMBER(MAX_PHYSMEM_BITS)", 10, &maxphys);
	if (va_bits < 36 || va_bits > 52)
		return kerr_set(&kd->err, KVS_E_DATA, "VMCOREINFO's VA_BITS %llu is no arm64 "
		    "kernel's", (unsigned long long)va_bits);
	p->have_root = true;
	p->root_pa = image_pa(kd, top);
	p->page_shift = shift;
	p->va_bits = vi_u64(kd, "NUMBER(TCR_EL1_T1SZ)", 16, &v) && v >= 12 && v <= 28 ?
	    (unsigned)(64 - v) : (unsigned)va_bits;
	p->pa52 = maxphys == 52;
	p->direct_base = ~0ULL << va_bits;
	p->direct_end = p->direct_base + (1ULL << (va_bits - 1));
	p->direct_phys = lp->phys_offset;
	return 0;
}

/* The memory map as the walkers use it: the struct page array's base
 * (vmemmap: the address pfn 0's struct page would have) and the direct
 * map's address of physical 0 (linear address = that + pa).  x86_64: the
 * randomised vmemmap_base and page_offset_base.  arm64: VMCOREINFO's
 * VMEMMAP_START less PHYS_OFFSET's pages, and PAGE_OFFSET less PHYS_OFFSET
 * (memstart_addr, as the kernel's vmemmap and __phys_to_virt use it).
 * 0, or -1 with the error set. */
int
linux_memmap(kvs_t *kd, uint64_t *vmemmap, uint64_t *phys0)
{
	struct linux_priv *lp = priv_of(kd);
	uint64_t a, start, va_bits = 48, pgsz = 4096;
	struct kvs_typeinfo ti;

	if (lp != NULL && lp->arm64) {
		if (!vi_u64(kd, "NUMBER(VMEMMAP_START)", 16, &start))
			return kerr_set(&kd->err, KVS_E_VERSION, "the dump's VMCOREINFO has no "
			    "NUMBER(VMEMMAP_START): the memory map is not found");
		vi_u64(kd, "NUMBER(VA_BITS)", 10, &va_bits);
		vi_u64(kd, "PAGESIZE", 10, &pgsz);
		if (va_bits < 36 || va_bits > 52 || pgsz < 4096 ||
		    kvs_type(kd, "struct page", &ti) != 0)
			return kerr_push(&kd->err, "the arm64 memory map");
		/* memstart_addr is signed: KASLR moves the linear map below
		 * physical 0 (it is a multiple of the page size) */
		*vmemmap = start - (uint64_t)((int64_t)lp->phys_offset / (int64_t)pgsz) * ti.size;
		*phys0 = (~0ULL << va_bits) - lp->phys_offset;
		return 0;
	}
	if (kvs_symbol(kd, "vmemmap_base", &a, NULL) != 0 || kread_u64(kd, a, vmemmap) != 0 ||
	    kvs_symbol(kd, "page_offset_base", &a, NULL) != 0 || kread_u64(kd, a, phys0) != 0)
		return kerr_set(&kd->err, KVS_E_VERSION, "no vmemmap_base / page_offset_base: "
		    "the memory map is not found");
	return 0;
}

static int
lnx_xlat_setup(kvs_t *kd, struct kvs_xlat_params *p)
{
	struct linux_priv *lp = priv_of(kd);
	uint64_t v, top, pob = PAGE_OFFSET_DEFAULT;

	if (lp == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "Linux: translation before attach");
	if (lp->arm64)
		return arm64_xlat_setup(kd, p);
	if (vi_u64(kd, "NUMBER(pgtable_l5_enabled)", 10, &v) && v != 0)
		return kerr_set(&kd->err, KVS_E_VERSION, "the kernel runs with 5-level paging "
		    "(pgtable_l5_enabled=1), which is not supported yet");
	if (p->pt != NULL)
		return 0;
	if (!vi_u64(kd, "SYMBOL(init_top_pgt)", 16, &top) && image_sym(kd, "init_top_pgt", &top) != 0)
		return kerr_push(&kd->err, "cannot find the kernel page tables");
	p->have_root = true;
	p->root_pa = image_pa(kd, top);
	/* The direct map's base: randomised (page_offset_base) or fixed. */
	if (image_sym(kd, "page_offset_base", &v) == 0) {
		uint64_t x;
		if (kvs_phys_read(kd, image_pa(kd, v), &x, sizeof(x)) != 0)
			return kerr_push(&kd->err, "reading page_offset_base at physical 0x%llx%s",
			    (unsigned long long)image_pa(kd, v), lp->have_vmcoreinfo ? "" :
			    " (no VMCOREINFO in the dump: is the kernel randomised?)");
		pob = le64toh(x);
		if ((pob & 0xfff) != 0 || pob < 0xff00000000000000ULL)
			return kerr_set(&kd->err, KVS_E_DATA, "page_offset_base holds 0x%llx, not "
			    "a direct-map address (wrong kernel for this dump?)",
			    (unsigned long long)pob);
	}
	kerr_clear(&kd->err);
	p->direct_base = pob;
	p->direct_end = pob + DIRECT_MAP_SPAN;
	/* Randomised, the vmalloc area follows the direct map closer than its
	 * 64 TiB: above vmalloc_base addresses need the page tables. */
	if (image_sym(kd, "vmalloc_base", &v) == 0) {
		uint64_t x;
		if (kvs_phys_read(kd, image_pa(kd, v), &x, sizeof(x)) == 0 &&
		    le64toh(x) > pob && le64toh(x) < p->direct_end)
			p->direct_end = le64toh(x);
	}
	kerr_clear(&kd->err);
	return 0;
}

/* The banner in the file and in memory must be the same text. */
static int
lnx_verify(kvs_t *kd)
{
	char want[BANNER_MAX], got[BANNER_MAX];
	uint64_t addr;

	if (kvs_symtab_lookup(kd->syms, "linux_banner", &addr, NULL, &kd->err) != 0 ||
	    kvs_kernel_file_string(kd, addr, want, sizeof(want)) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (kvs_read_string(kd, kvs_slide(kd, addr), got, sizeof(got), NULL) < 0)
		return kerr_push(&kd->err, "kernel does not match dump? reading "
		    "'linux_banner' at 0x%llx", (unsigned long long)kvs_slide(kd, addr));
	if (strcmp(want, got) != 0) {
		want[strcspn(want, "\n")] = '\0';
		got[strcspn(got, "\n")] = '\0';
		return kerr_set(&kd->err, KVS_E_MISMATCH, "kernel does not match dump: "
		    "kernel is \"%.200s\", dump is \"%.200s\"", want, got);
	}
	return 0;
}

/* ------------------------------------------------------------ the log */

/*
 * The lockless printk ring buffer (5.10 and later): `prb` points at a
 * struct printk_ringbuffer whose descriptor ring holds, per record, a state
 * word (top two bits: reserved, committed, finalized, reusable; the rest:
 * the record's id) and the logical positions of its text in the data ring;
 * struct printk_info beside it holds the sequence number, time stamp and
 * text length.  A text block starts with the record id (an unsigned long);
 * a block that would straddle the end of the ring is stored from offset 0.
 * Records are visited from tail_id to head_id, at most once per descriptor.
 */
#define SV_SHIFT 62
#define SV_ID_MASK (~(3ULL << SV_SHIFT))
enum { DESC_RESERVED, DESC_COMMITTED, DESC_FINALIZED, DESC_REUSABLE };

struct prb_layout {
	struct kfield count_bits, descs, infos, head_id, tail_id;
	struct kfield size_bits, data;
	uint64_t desc_size, info_size, dr_off, tr_off;
	struct kfield sv, begin, next;          /* in struct prb_desc */
	struct kfield seq, ts, text_len;        /* in struct printk_info */
};

static int
prb_layout(kvs_t *kd, struct prb_layout *L)
{
	struct kvs_typeinfo ti;
	struct kfield dr, tr;

	if (kfield(kd, "struct printk_ringbuffer", "desc_ring", &dr, true) != 0 ||
	    kfield(kd, "struct printk_ringbuffer", "text_data_ring", &tr, true) != 0 ||
	    kfield(kd, "struct prb_desc_ring", "count_bits", &L->count_bits, true) != 0 ||
	    kfield(kd, "struct prb_desc_ring", "descs", &L->descs, true) != 0 ||
	    kfield(kd, "struct prb_desc_ring", "infos", &L->infos, true) != 0 ||
	    kfield(kd, "struct prb_desc_ring", "head_id", &L->head_id, true) != 0 ||
	    kfield(kd, "struct prb_desc_ring", "tail_id", &L->tail_id, true) != 0 ||
	    kfield(kd, "struct prb_data_ring", "size_bits", &L->size_bits, true) != 0 ||
	    kfield(kd, "struct prb_data_ring", "data", &L->data, true) != 0 ||
	    kfield(kd, "struct prb_desc", "state_var", &L->sv, true) != 0 ||
	    kfield(kd, "struct prb_desc", "text_blk_lpos.begin", &L->begin, true) != 0 ||
	    kfield(kd, "struct prb_desc", "text_blk_lpos.next", &L->next, true) != 0 ||
	    kfield(kd, "struct printk_info", "seq", &L->seq, true) != 0 ||
	    kfield(kd, "struct printk_info", "ts_nsec", &L->ts, true) != 0 ||
	    kfield(kd, "struct printk_info", "text_len", &L->text_len, true) != 0)
		return -1;
	L->dr_off = dr.off;
	L->tr_off = tr.off;
	if (kvs_type(kd, "struct prb_desc", &ti) != 0)
		return -1;
	L->desc_size = ti.size;
	if (kvs_type(kd, "struct printk_info", &ti) != 0)
		return -1;
	L->info_size = ti.size;
	return 0;
}

struct text {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void
text_add(struct text *t, const char *s, size_t n)
{
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 65536;
		char *nb;
		while (cap < t->len + n + 1)
			cap *= 2;
		nb = realloc(t->buf, cap);
		if (nb == NULL) {
			t->oom = true;
			return;
		}
		t->buf = nb;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static int
read_prb(kvs_t *kd, uint64_t prb, struct text *out)
{
	struct prb_layout L;
	uint8_t hdr[256], d[64], info[256];
	uint64_t dr, descs, infos, head, tail, data, id, ndesc, dsize, n;
	unsigned cbits, sbits;
	char *text = NULL;

	if (prb_layout(kd, &L) != 0)
		return kerr_push(&kd->err, "printk ring buffer layout");
	if (L.desc_size > sizeof(d) || L.info_size > sizeof(info) ||
	    L.dr_off + 64 > sizeof(hdr) || L.tr_off + 64 > sizeof(hdr))
		return kerr_set(&kd->err, KVS_E_DATA, "printk ring buffer structures larger "
		    "than expected");
	if (kvs_read(kd, prb, hdr, sizeof(hdr)) != 0)
		return kerr_push(&kd->err, "reading the printk ring buffer at 0x%llx",
		    (unsigned long long)prb);
	dr = L.dr_off;
	cbits = (unsigned)kfield_get(hdr + dr, sizeof(hdr) - dr, &L.count_bits);
	descs = kfield_get(hdr + dr, sizeof(hdr) - dr, &L.descs);
	infos = kfield_get(hdr + dr, sizeof(hdr) - dr, &L.infos);
	head = kfield_get(hdr + dr, sizeof(hdr) - dr, &L.head_id);
	tail = kfield_get(hdr + dr, sizeof(hdr) - dr, &L.tail_id);
	sbits = (unsigned)kfield_get(hdr + L.tr_off, sizeof(hdr) - L.tr_off, &L.size_bits);
	data = kfield_get(hdr + L.tr_off, sizeof(hdr) - L.tr_off, &L.data);
	if (cbits > 24 || sbits > 31 || sbits < 4)
		return kerr_set(&kd->err, KVS_E_DATA, "printk ring buffer of 2^%u records and "
		    "2^%u bytes is implausible", cbits, sbits);
	ndesc = 1ULL << cbits;
	dsize = 1ULL << sbits;
	text = malloc(dsize);
	if (text == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for the log");
	if (kvs_read(kd, data, text, dsize) != 0) {
		free(text);
		return kerr_push(&kd->err, "reading the printk text ring (%llu bytes at 0x%llx)",
		    (unsigned long long)dsize, (unsigned long long)data);
	}
	for (id = tail & SV_ID_MASK, n = 0; n < ndesc && n < PRINTK_RECORDS_MAX;
	    id = (id + 1) & SV_ID_MASK, n++) {
		uint64_t idx = id & (ndesc - 1), sv, begin, next, off, size, ts;
		unsigned st, tlen;
		char line[64];
		int ll;

		if (kvs_read(kd, descs + idx * L.desc_size, d, L.desc_size) != 0 ||
		    kvs_read(kd, infos + idx * L.info_size, info, L.info_size) != 0) {
			free(text);
			return kerr_push(&kd->err, "printk record %llu", (unsigned long long)id);
		}
		sv = kfield_get(d, sizeof(d), &L.sv);
		st = (unsigned)(sv >> SV_SHIFT);
		if ((sv & SV_ID_MASK) == id && (st == DESC_COMMITTED || st == DESC_FINALIZED)) {
			begin = kfield_get(d, sizeof(d), &L.begin);
			next = kfield_get(d, sizeof(d), &L.next);
			tlen = (unsigned)kfield_get(info, sizeof(info), &L.text_len);
			ts = kfield_get(info, sizeof(info), &L.ts);
			size = 0;
			off = 0;
			if ((begin & 1) == 0) {
				if (begin >> sbits == next >> sbits && next > begin) {
					off = begin & (dsize - 1);
					size = next - begin;
				} else if ((begin + dsize) >> sbits == next >> sbits) {
					off = 0;
					size = next & (dsize - 1);
				}
			}
			if (size >= 8 && off + size <= dsize) {
				size -= 8;
				if (tlen > size)
					tlen = (unsigned)size;
				ll = snprintf(line, sizeof(line), "[%5" PRIu64 ".%06" PRIu64 "] ",
				    ts / UINT64_C(1000000000), ts % UINT64_C(1000000000) / 1000);
				text_add(out, line, (size_t)ll);
				/* A record of several lines: the later ones are
				 * indented under the first, as dmesg and crash do. */
				{
					const char *t = text + off + 8, *end = t + tlen, *nl;
					while ((nl = memchr(t, '\n', (size_t)(end - t))) != NULL) {
						text_add(out, t, (size_t)(nl - t) + 1);
						text_add(out, "                              ",
						    (size_t)ll < 30 ? (size_t)ll : 30);
						t = nl + 1;
					}
					text_add(out, t, (size_t)(end - t));
				}
				text_add(out, "\n", 1);
			}
		}
		if (id == (head & SV_ID_MASK))
			break;
	}
	free(text);
	if (out->oom)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for the log");
	return 0;
}

static int
lnx_msgbuf(kvs_t *kd, char **text, size_t *len)
{
	struct text t = { 0 };
	uint64_t prb_sym, prb;

	if (kvs_symbol(kd, "prb", &prb_sym, NULL) != 0)
		return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no printk ring buffer (prb) in this "
		    "kernel: kernels before 5.10 keep log_buf, which is not read yet");
	if (kread_u64(kd, prb_sym, &prb) != 0)
		return kerr_push(&kd->err, "reading prb");
	if (read_prb(kd, prb, &t) != 0) {
		free(t.buf);
		return -1;
	}
	if (t.buf == NULL && (t.buf = strdup("")) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	*text = t.buf;
	*len = t.len;
	return 0;
}

/* --------------------------------------------------------------- info */

static int
lnx_kernel_info(kvs_t *kd, struct kvs_kernelinfo *ki)
{
	uint64_t addr, v;
	char *log;
	size_t len;

	ki->os = "Linux";
	if (kvs_symbol(kd, "linux_banner", &addr, NULL) == 0 &&
	    kvs_read_string(kd, addr, kd->kinfo_version, sizeof(kd->kinfo_version), NULL) >= 0) {
		kd->kinfo_version[strcspn(kd->kinfo_version, "\n")] = '\0';
		ki->version = kd->kinfo_version;
	} else if (linux_banner_find(kd, kd->kinfo_version, sizeof(kd->kinfo_version)) == 0)
		ki->version = kd->kinfo_version;
	else
		kvs_warn(kd, "the kernel's banner: %s", kvs_geterr(kd));
	if (kvs_symbol(kd, "__num_online_cpus", &addr, NULL) == 0 &&
	    kread_uint(kd, addr, 4, &v) == 0 && v < 1000000)
		ki->ncpus = (int)v;
	if (kvs_symbol(kd, "nr_cpu_ids", &addr, NULL) == 0 &&
	    kread_uint(kd, addr, 4, &v) == 0 && v >= 1 && v < 1000000)
		ki->maxid = (int)v - 1;
	/* Linux keeps no panic string: the log says it, last.  panic() ends
	 * with "---[ end Kernel panic - not syncing: <msg> ]---", which
	 * repeats the message inside the marker. */
	if (lnx_msgbuf(kd, &log, &len) == 0) {
		static const char key[] = "Kernel panic - not syncing: ";
		static const char end[] = "---[ end ", endtail[] = " ]---";
		const char *p = log, *last = NULL;
		bool marker;
		size_t n;
		while ((p = strstr(p, key)) != NULL)
			last = p++;
		if (last != NULL) {
			marker = (size_t)(last - log) >= sizeof(end) - 1 &&
			    memcmp(last - (sizeof(end) - 1), end, sizeof(end) - 1) == 0;
			last += sizeof(key) - 1;
			n = strcspn(last, "\n");
			if (marker && n >= sizeof(endtail) - 1 &&
			    memcmp(last + n - (sizeof(endtail) - 1), endtail, sizeof(endtail) - 1) == 0)
				n -= sizeof(endtail) - 1;
			snprintf(kd->kinfo_panic, sizeof(kd->kinfo_panic), "%.*s", (int)n, last);
			ki->panic = kd->kinfo_panic;
		}
		free(log);
	}
	kerr_clear(&kd->err);
	return 0;
}

static int
linux_memstat_all(struct memory_type_list *list, kvs_t *kd)
{
	return memstat_kvm_slab(list, kd);
}

static void
lnx_close(kvs_t *kd)
{
	struct linux_priv *lp = priv_of(kd);

	linux_census_close(kd);
	if (lp != NULL)
		free(lp->vmcoreinfo);
	free(lp);
	kd->os_priv = NULL;
}

const struct kvs_os_ops kvs_os_linux = {
	.name = "Linux",
	.probe = lnx_probe,
	.xlat_setup = lnx_xlat_setup,
	.verify = lnx_verify,
	.kernel_info = lnx_kernel_info,
	.msgbuf = lnx_msgbuf,
	.close = lnx_close,
	.probe_dump = lnx_probe_dump,
	.attach = lnx_attach,
	.memory_btf = lnx_memory_btf,
	.profile_read = linux_profile_read,
	.memstat_all = linux_memstat_all,
	.meminfo = linux_meminfo,
	.pzones = linux_pzones,
	.vmalloc = linux_vmalloc,
	.slab_objects = linux_slab_objects,
	.whatis = linux_whatis,
};
