/*
 * kernel.c - the FreeBSD kernel family: recognising its kernels, the page
 * tables (amd64: KPML4phys; arm64: kernel_pmap_store) and the `version`
 * check at open, version / panic string / CPU
 * counts, the message buffer, and where the kernel linker put each module.
 * Also the present-CPU set the walkers share (freebsd.h), and the sum of
 * a counter(9) over it.
 */
#include <endian.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freebsd.h"

#define VERSION_MAX 512
#define KERNBASE_DEFAULT 0xffffffff80000000ULL  /* amd64 KERNBASE */
#define ARM64_IMAGE_ALIGN (2ULL << 20)          /* arm64 loader: kernel on 2 MiB */
#define ARM64_MAX_SLOTS (1u << 20)              /* 2 TiB of 2 MiB candidates */
#define MSGBUF_MAX (64u << 20)
#define MAX_FILES 4096
#define LF "struct linker_file"

/* A FreeBSD kernel is branded with its OS ABI, or, as the fixtures and
 * older link recipes leave it, has the symbols only FreeBSD defines. */
static int
fbsd_probe(kvs_t *kd)
{
	static const char *const marks[] = { "KPML4phys", "msgbufp", "kmemstatistics" };
	GElf_Ehdr eh;
	size_t i;

	if (gelf_getehdr(kd->elf, &eh) != NULL && eh.e_ident[EI_OSABI] == ELFOSABI_FREEBSD)
		return 0;
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		struct kvs_error tmp;
		kerr_clear(&tmp);
		if (kvs_symtab_lookup(kd->syms, marks[i], NULL, NULL, &tmp) == 0)
			return 0;
	}
	return KVS_NOTMINE;
}

/*
 * FreeBSD/arm64 without a minidump's section (full dumps, raw images): the
 * loader put the kernel at some 2 MiB-aligned physical address, so the
 * image's VA - PA (the kernel's delta) is not a constant.  It is found
 * where the kernel file's `version` bytes are in memory, at the one offset
 * within 2 MiB the image's VA gives, trying each 2 MiB slot below the
 * dump's physical end (bounded: ARM64_MAX_SLOTS reads).
 */
static int
arm64_image_delta(kvs_t *kd, uint64_t *delta)
{
	char want[VERSION_MAX], got[VERSION_MAX];
	uint64_t vva, slot, nslots;
	size_t n;

	if (kvs_symtab_lookup(kd->syms, "version", &vva, NULL, &kd->err) != 0 ||
	    kvs_kernel_file_string(kd, vva, want, sizeof(want)) != 0)
		return kerr_push(&kd->err, "arm64: the kernel's `version` string, to find "
		    "where its image lies in physical memory");
	n = strlen(want) + 1;
	if (kd->info.phys_end == 0)
		return kerr_set(&kd->err, KVS_E_FORMAT, "arm64: the dump does not say how "
		    "much physical memory it holds, so the kernel image cannot be found in it");
	nslots = kd->info.phys_end / ARM64_IMAGE_ALIGN + 1;
	if (nslots > ARM64_MAX_SLOTS)
		nslots = ARM64_MAX_SLOTS;
	for (slot = 0; slot < nslots; slot++) {
		uint64_t pa = slot * ARM64_IMAGE_ALIGN + (vva & (ARM64_IMAGE_ALIGN - 1));
		if (pa + n > kd->info.phys_end)
			break;
		if (kvs_phys_read(kd, pa, got, n) != 0) {
			kerr_clear(&kd->err);
			continue;
		}
		if (memcmp(want, got, n) == 0) {
			*delta = vva - pa;
			return 0;
		}
	}
	return kerr_set(&kd->err, KVS_E_MISMATCH, "arm64: the kernel's `version` string "
	    "(\"%.60s\") is nowhere in the dump's physical memory at its offset within "
	    "2 MiB: wrong kernel for this dump?", want);
}

/* The root table's physical address: kernel_pmap_store.pm_l0_paddr, or in
 * kernels without it the address pm_l0 holds (a kernel-image VA then). */
static int
arm64_root(kvs_t *kd, struct kvs_xlat_params *p)
{
	struct kvs_typeinfo ti;
	uint64_t delta, sym, v;
	int has_paddr;

	if (arm64_image_delta(kd, &delta) != 0)
		return -1;
	if (kvs_symtab_lookup(kd->syms, "kernel_pmap_store", &sym, NULL, &kd->err) != 0)
		return kerr_push(&kd->err, "arm64: cannot find the kernel's page tables");
	has_paddr = kvs_has_member(kd, "struct pmap", "pm_l0_paddr");
	if (has_paddr < 0 || kvs_member(kd, "struct pmap", has_paddr ? "pm_l0_paddr" : "pm_l0",
	    &ti) != 0)
		return kerr_push(&kd->err, "arm64: struct pmap layout");
	if (kvs_phys_read(kd, sym + ti.offset - delta, &v, sizeof(v)) != 0)
		return kerr_push(&kd->err, "arm64: reading kernel_pmap_store.%s at physical 0x%llx",
		    has_paddr ? "pm_l0_paddr" : "pm_l0",
		    (unsigned long long)(sym + ti.offset - delta));
	v = le64toh(v);
	if (!has_paddr)
		v -= delta;
	if (v == 0 || (v & 0xfff) != 0 || (kd->info.phys_end != 0 && v >= kd->info.phys_end))
		return kerr_set(&kd->err, KVS_E_DATA, "arm64: the kernel's root page table would "
		    "be at physical 0x%llx, not a table in this dump (wrong kernel?)",
		    (unsigned long long)v);
	p->have_root = true;
	p->root_pa = v;
	return 0;
}

/* Full dumps, raw images and live memory: the kernel's own page tables.
 * amd64: during bootstrap KPML4phys's VA minus kernbase is its PA.  A
 * minidump brings its own page-table section instead (the source filled
 * p->pt), which the architecture reads. */
static int
fbsd_xlat_setup(kvs_t *kd, struct kvs_xlat_params *p)
{
	uint64_t sym, kernbase = KERNBASE_DEFAULT, pml4;

	if (kd->arch != NULL && kd->arch->elf_machine != EM_X86_64 &&
	    kd->arch->elf_machine != EM_AARCH64)
		return kerr_set(&kd->err, KVS_E_VERSION, "a FreeBSD kernel for %s (machine "
		    "%u): kvmstat reads FreeBSD's amd64 and arm64 kernels only",
		    kd->arch->name, kd->arch->elf_machine);
	if (p->pt != NULL)
		return 0;
	if (kd->arch != NULL && kd->arch->elf_machine == EM_AARCH64)
		return arm64_root(kd, p);
	if (kvs_symtab_lookup(kd->syms, "kernbase", &sym, NULL, &kd->err) == 0 && sym != 0)
		kernbase = sym;
	kerr_clear(&kd->err);
	if (kvs_symtab_lookup(kd->syms, "KPML4phys", &sym, NULL, &kd->err) != 0)
		return kerr_push(&kd->err, "cannot find the kernel page tables");
	if (sym < kernbase)
		return kerr_set(&kd->err, KVS_E_DATA, "KPML4phys at 0x%llx is below "
		    "kernbase 0x%llx", (unsigned long long)sym, (unsigned long long)kernbase);
	if (kvs_phys_read(kd, sym - kernbase, &pml4, sizeof(pml4)) != 0)
		return kerr_push(&kd->err, "reading KPML4phys at physical 0x%llx",
		    (unsigned long long)(sym - kernbase));
	pml4 = le64toh(pml4);
	if (pml4 == 0 || (pml4 & 0xfff) != 0)
		return kerr_set(&kd->err, KVS_E_DATA, "KPML4phys holds 0x%llx, not a "
		    "page-table address (wrong kernel for this dump?)", (unsigned long long)pml4);
	p->have_root = true;
	p->root_pa = pml4;
	return 0;
}

/* The kernel's `version` string must read the same in the file and in
 * memory, so a dump is never read through the wrong kernel's layouts. */
static int
fbsd_verify(kvs_t *kd)
{
	char want[VERSION_MAX], got[VERSION_MAX];
	uint64_t addr;

	if (kvs_symtab_lookup(kd->syms, "version", &addr, NULL, &kd->err) != 0 ||
	    kvs_kernel_file_string(kd, addr, want, sizeof(want)) != 0) {
		kerr_clear(&kd->err);   /* nothing to compare against */
		return 0;
	}
	if (kvs_read_string(kd, addr, got, sizeof(got), NULL) < 0)
		return kerr_push(&kd->err, "kernel does not match dump? reading "
		    "'version' at 0x%llx", (unsigned long long)addr);
	if (strcmp(want, got) != 0) {
		want[strcspn(want, "\n")] = '\0';
		got[strcspn(got, "\n")] = '\0';
		return kerr_set(&kd->err, KVS_E_MISMATCH, "kernel does not match dump: "
		    "kernel is \"%.200s\", dump is \"%.200s\"", want, got);
	}
	return 0;
}

static int
read_int_sym(kvs_t *kd, const char *name, int *v)
{
	uint64_t addr;
	int32_t x;

	if (kvs_symbol(kd, name, &addr, NULL) != 0 || kvs_read(kd, addr, &x, sizeof(x)) != 0)
		return -1;
	*v = (int)(int32_t)le32toh((uint32_t)x);
	return 0;
}

static int
fbsd_kernel_info(kvs_t *kd, struct kvs_kernelinfo *ki)
{
	uint64_t addr, ptr;

	ki->os = "FreeBSD";
	if (kvs_symbol(kd, "version", &addr, NULL) == 0 &&
	    kvs_read_string(kd, addr, kd->kinfo_version, sizeof(kd->kinfo_version), NULL) >= 0) {
		kd->kinfo_version[strcspn(kd->kinfo_version, "\n")] = '\0';
		ki->version = kd->kinfo_version;
	}
	if (kvs_symbol(kd, "panicstr", &addr, NULL) == 0 &&
	    kvs_read(kd, addr, &ptr, sizeof(ptr)) == 0 && ptr != 0 &&
	    kvs_read_string(kd, le64toh(ptr), kd->kinfo_panic, sizeof(kd->kinfo_panic), NULL) >= 0)
		ki->panic = kd->kinfo_panic;
	if (read_int_sym(kd, "mp_ncpus", &ki->ncpus) != 0 || ki->ncpus < 0)
		ki->ncpus = -1;
	if (read_int_sym(kd, "mp_maxid", &ki->maxid) != 0 || ki->maxid < 0)
		ki->maxid = -1;
	kerr_clear(&kd->err);
	return 0;
}

/*
 * The message buffer is a ring behind msgbufp, whose write sequence tells
 * where the oldest byte is.  Kernels before the sequence numbers kept plain
 * indexes (msg_bufx); both are detected from DWARF.  When the ring itself is
 * unreadable, a minidump's msgbuf section (which the source hands over) is
 * used instead.
 */
struct ring {
	char *buf;
	size_t size;
	size_t start;   /* index of the oldest byte */
};

static int
msg_field(kvs_t *kd, const char *m, struct kvs_typeinfo *ti)
{
	return kvs_member(kd, "struct msgbuf", m, ti);
}

static int
read_ring(kvs_t *kd, struct ring *r, char *why, size_t whylen)
{
	struct kvs_typeinfo ptr_f, size_f, pos_f;
	uint64_t addr, mbp, msg_ptr = 0, pos = 0;
	uint32_t size = 0;
	unsigned char hdr[256];
	bool seq;

	memset(r, 0, sizeof(*r));
	if (kvs_symbol(kd, "msgbufp", &addr, NULL) != 0 ||
	    kvs_read(kd, addr, &mbp, sizeof(mbp)) != 0 || mbp == 0)
		goto section;
	if (msg_field(kd, "msg_ptr", &ptr_f) != 0 || msg_field(kd, "msg_size", &size_f) != 0)
		goto section;
	seq = kvs_has_member(kd, "struct msgbuf", "msg_wseq") == 1;
	if (msg_field(kd, seq ? "msg_wseq" : "msg_bufx", &pos_f) != 0)
		goto section;
	if (pos_f.offset + 4 > sizeof(hdr) || ptr_f.offset + 8 > sizeof(hdr) ||
	    size_f.offset + 4 > sizeof(hdr))
		goto section;
	{
		uint64_t need = ptr_f.offset + 8;
		if (size_f.offset + 4 > need)
			need = size_f.offset + 4;
		if (pos_f.offset + 4 > need)
			need = pos_f.offset + 4;
		if (kvs_read(kd, mbp, hdr, (size_t)need) != 0)
			goto section;
	}
	memcpy(&msg_ptr, hdr + ptr_f.offset, 8);
	memcpy(&size, hdr + size_f.offset, 4);
	{
		uint32_t p32;
		memcpy(&p32, hdr + pos_f.offset, 4);
		pos = p32;
	}
	if (size == 0 || size > MSGBUF_MAX) {
		snprintf(why, whylen, "msgbuf size %u is implausible", size);
		goto section;
	}
	r->buf = malloc(size);
	if (r->buf == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for the message buffer");
	if (kvs_read(kd, msg_ptr, r->buf, size) != 0) {
		snprintf(why, whylen, "%s", kvs_geterr(kd));
		free(r->buf);
		r->buf = NULL;
		goto section;
	}
	r->size = size;
	/* Sequence numbers run modulo a multiple of the size; the oldest byte
	 * sits where the next write will go.  Before the wrap, that position
	 * holds NULs, which the linear copy drops. */
	r->start = (size_t)(pos % size);
	return 0;
section:
	if (kd->info.msgbuf == NULL || kd->info.msgbuf_len == 0) {
		if (why[0] == '\0')
			return kerr_set(&kd->err, KVS_E_NOSYMBOL, "no message buffer found");
		return kerr_set(&kd->err, KVS_E_DATA, "%s", why);
	}
	r->buf = malloc(kd->info.msgbuf_len);
	if (r->buf == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for the message buffer");
	memcpy(r->buf, kd->info.msgbuf, kd->info.msgbuf_len);
	r->size = kd->info.msgbuf_len;
	r->start = 0;
	if (msg_ptr != 0 && size == r->size)
		r->start = (size_t)(pos % size);
	return 0;
}

static int
fbsd_msgbuf(kvs_t *kd, char **text, size_t *len)
{
	struct ring r;
	char why[KVS_MSG_MAX] = "";
	size_t i, n = 0;
	char *t;

	if (read_ring(kd, &r, why, sizeof(why)) != 0)
		return -1;
	t = malloc(r.size + 1);
	if (t == NULL) {
		free(r.buf);
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for the message buffer");
	}
	for (i = 0; i < r.size; i++) {
		char c = r.buf[(r.start + i) % r.size];
		if (c != '\0')
			t[n++] = c;
	}
	t[n] = '\0';
	free(r.buf);
	*text = t;
	*len = n;
	kerr_clear(&kd->err);
	return 0;
}

/*
 * Modules.  A FreeBSD amd64 module is an ELF relocatable object.  The kernel
 * linker copies its allocated sections one after another, each aligned to its
 * sh_addralign, into one block whose address and size the module's
 * struct linker_file records; the files are on the kernel's linker_files
 * TAILQ.  Module-local symbols (st_value = section offset) then live at
 * block + section offset + st_value.
 */
static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int
fbsd_module_find(kvs_t *kd, const char *name, uint64_t *base, uint64_t *size)
{
	struct kfield next, fname, addr, sz;
	uint64_t head, p;
	struct kwalk w;
	uint8_t buf[512];
	struct kvs_typeinfo ti;

	if (kvs_symbol(kd, "linker_files", &head, NULL) != 0)
		return kerr_push(&kd->err, "finding loaded modules");
	if (kvs_type(kd, LF, &ti) != 0 || ti.size > sizeof(buf) ||
	    kfield(kd, LF, "link.tqe_next", &next, true) != 0 ||
	    kfield(kd, LF, "filename", &fname, true) != 0 ||
	    kfield(kd, LF, "address", &addr, true) != 0 ||
	    kfield(kd, LF, "size", &sz, true) != 0)
		return kerr_push(&kd->err, "struct linker_file layout");
	if (kread_u64(kd, head, &p) != 0)          /* tqh_first */
		return kerr_push(&kd->err, "reading linker_files");
	kwalk_init(&w, MAX_FILES);
	for (; p != 0; p = kfield_get(buf, ti.size, &next)) {
		char fn[256];
		if (kwalk_step(kd, &w, p, "linker_files") != 0)
			return -1;
		if (kvs_read(kd, p, buf, ti.size) != 0)
			return kerr_push(&kd->err, "linker_file at 0x%llx", (unsigned long long)p);
		if (kvs_read_string(kd, kfield_get(buf, ti.size, &fname), fn, sizeof(fn), NULL) < 0)
			return kerr_push(&kd->err, "name of linker_file at 0x%llx", (unsigned long long)p);
		if (strcmp(base_name(fn), name) == 0) {
			*base = kfield_get(buf, ti.size, &addr);
			*size = kfield_get(buf, ti.size, &sz);
			return 0;
		}
	}
	return 1;
}

static int
fbsd_module_place(kvs_t *kd, Elf *elf, uint64_t base, uint64_t *secaddr, size_t nsec,
    uint64_t *used)
{
	Elf_Scn *scn = NULL;
	uint64_t off = 0;

	(void)kd;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		uint64_t al;
		size_t ndx = elf_ndxscn(scn);
		if (gelf_getshdr(scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_size == 0 || ndx >= nsec)
			continue;
		al = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
		off = (off + al - 1) & ~(al - 1);
		secaddr[ndx] = base + off;
		off += sh.sh_size;
	}
	*used = off;
	return 0;
}

/* The present-CPU set: 0..mp_maxid filtered by the all_cpus bitmask. */
int
kcpus_read(kvs_t *kd, struct kcpus *c)
{
	struct kvs_typeinfo ti;
	uint64_t addr, size, v;
	size_t nbytes, i;

	memset(c, 0, sizeof(*c));
	if (kread_sym_uint(kd, "mp_maxid", &v) != 0)
		return kerr_push(&kd->err, "CPU set");
	c->maxid = (int)v;
	c->ncpus = (int)kread_sym_uint_or(kd, "mp_ncpus", (uint64_t)c->maxid + 1);
	if (c->maxid < 0 || c->maxid >= KCPU_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "mp_maxid %d out of range", c->maxid);
	c->maxcpus = (int)kread_sym_uint_or(kd, "mp_maxcpus", 0);
	if (kvs_symbol(kd, "all_cpus", &addr, &size) != 0) {
		/* No CPU set: assume 0..maxid are all present. */
		kerr_clear(&kd->err);
		for (i = 0; i <= (size_t)c->maxid; i++)
			c->mask[i / 64] |= 1ULL << (i % 64);
		return 0;
	}
	if (kvs_variable(kd, "all_cpus", &ti) == 0 && ti.size > 0)
		size = ti.size;
	kerr_clear(&kd->err);
	nbytes = (size_t)((uint64_t)c->maxid / 8 + 1);
	if (size != 0 && nbytes > size)
		nbytes = (size_t)size;
	if (c->maxcpus == 0 && size != 0)
		c->maxcpus = (int)(size * 8 > KCPU_MAX ? KCPU_MAX : size * 8);
	uint8_t raw[KCPU_MAX / 8];
	if (kvs_read(kd, addr, raw, nbytes) != 0)
		return kerr_push(&kd->err, "reading all_cpus");
	for (i = 0; i < nbytes * 8 && i <= (size_t)c->maxid; i++)
		if (raw[i / 8] >> (i % 8) & 1)
			c->mask[i / 64] |= 1ULL << (i % 64);
	return 0;
}

bool
freebsd_zpcpu_offsets(kvs_t *kd)
{
	return kd->arch == NULL || kd->arch->elf_machine == EM_X86_64;
}

/* Where CPU parts of a counter(9) start: 13+ amd64 keeps an offset from
 * the value of __pcpu (a pointer variable), older kernels the address of
 * CPU 0's part (__pcpu an array, or absent). */
int
freebsd_pcpu_base(kvs_t *kd, uint64_t *base)
{
	struct kvs_typeinfo ti;
	uint64_t addr;

	*base = 0;
	if (!freebsd_zpcpu_offsets(kd))
		return 0;
	if (kvs_variable(kd, "__pcpu", &ti) != 0 || ti.kind != KVS_KIND_POINTER) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (kvs_symbol(kd, "__pcpu", &addr, NULL) != 0 || kread_u64(kd, addr, base) != 0)
		return kerr_push(&kd->err, "per-CPU base for counter(9)");
	return 0;
}

/* counter(9): the sum of the present CPUs' parts. */
int
freebsd_counter_sum(kvs_t *kd, const struct kcpus *cpus, uint64_t base, uint64_t ptr,
    uint64_t *sum)
{
	int c;

	*sum = 0;
	if (ptr == 0)
		return 0;
	for (c = 0; c <= cpus->maxid; c++) {
		uint64_t v;
		if (!kcpu_present(cpus, c))
			continue;
		if (kread_u64(kd, base + ptr + (uint64_t)c * FREEBSD_PCPU_STRIDE, &v) != 0)
			return -1;
		*sum += v;
	}
	return 0;
}

/* The running kernel, and the one installkernel kept. */
static const char *const fbsd_installed[] = {
	"/boot/kernel/kernel", "/boot/kernel.old/kernel", NULL,
};

const struct kvs_os_ops kvs_os_freebsd = {
	.name = "FreeBSD",
	.installed = fbsd_installed,
	.probe = fbsd_probe,
	.xlat_setup = fbsd_xlat_setup,
	.verify = fbsd_verify,
	.kernel_info = fbsd_kernel_info,
	.msgbuf = fbsd_msgbuf,
	.module_find = fbsd_module_find,
	.module_place = fbsd_module_place,
	.profile_read = freebsd_gprof_read,
	.memstat_all = freebsd_memstat_all,
	.meminfo = freebsd_meminfo,
	.pzones = freebsd_pzones,
	.arenas = freebsd_arenas,
	.whatis = freebsd_whatis,
	.slab_objects = freebsd_slab_objects,
};
