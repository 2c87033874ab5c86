/*
 * check_vmcore.c - ELF dumps as Linux tools and QEMU write them, and cores
 * addressed only virtually.
 *
 * QEMU 7.2's dump-guest-memory puts the section headers first, writes
 * e_ehsize 8, and with more than 65,534 segments sets e_phnum to PN_XNUM and
 * the real count in section header 0's sh_info.  With paging, every PT_LOAD
 * names a virtual and a physical range, and many virtual ranges share one
 * physical range and one stretch of the file.  A VMCOREINFO note carries the
 * kernel's bootstrap facts.  Each file here is built by the test itself, so
 * the expected bytes at every address are known without the code under test.
 *
 * The FreeBSD generator's vmcore.kva.elf holds virtual ranges only: read
 * through them, every malloc type and UMA zone equals what the minidump of the
 * same moment gives.
 */
#include <check.h>
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvs_private.h"
#include "memstat.h"
#include "testutil.h"

#define PG 4096u

/* The byte the test puts at file offset off. */
static uint8_t
pattern(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 12) * 13 + 1);
}

struct qseg {
	uint64_t vaddr, paddr, size, data;   /* data: index of the data page run */
};

/*
 * A QEMU-shaped ELF core: ELF header (e_ehsize 8), one section header at 64
 * (PN_XNUM's holder), program headers after it, a VMCOREINFO note, then the
 * data.  Segments with the same `data` share file bytes (aliases).
 */
static uint8_t *
build_qemu(const struct qseg *s, size_t n, const char *vmcoreinfo, size_t *lenp,
    uint64_t *dataoff)
{
	size_t phoff = 64 + sizeof(Elf64_Shdr), nph = n + 1;
	size_t notesz = 12 + 12 + ((strlen(vmcoreinfo) + 3) & ~3u);
	uint64_t note_off = phoff + nph * sizeof(Elf64_Phdr);
	uint64_t data = (note_off + notesz + PG - 1) & ~(uint64_t)(PG - 1);
	uint64_t maxrun = 0, len;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	uint8_t *b;
	size_t i;

	for (i = 0; i < n; i++)
		if ((s[i].data + 1) * 4 * PG > maxrun)
			maxrun = (s[i].data + 1) * 4 * PG;
	len = data + maxrun;
	b = calloc(1, len);
	ck_assert_ptr_nonnull(b);
	for (i = data; i < len; i++)
		b[i] = pattern(i);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = 8;                        /* QEMU 7.2 */
	eh.e_shoff = 64;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 1;
	eh.e_phoff = phoff;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = nph >= PN_XNUM ? PN_XNUM : (uint16_t)nph;
	memcpy(b, &eh, sizeof(eh));
	memset(&sh, 0, sizeof(sh));
	sh.sh_info = (uint32_t)nph;
	memcpy(b + 64, &sh, sizeof(sh));
	{
		Elf64_Phdr ph = { .p_type = PT_NOTE, .p_offset = note_off, .p_filesz = notesz };
		uint32_t namesz = 11, descsz = (uint32_t)strlen(vmcoreinfo), type = 0;
		memcpy(b + phoff, &ph, sizeof(ph));
		memcpy(b + note_off, &namesz, 4);
		memcpy(b + note_off + 4, &descsz, 4);
		memcpy(b + note_off + 8, &type, 4);
		memcpy(b + note_off + 12, "VMCOREINFO\0", 12);
		memcpy(b + note_off + 24, vmcoreinfo, descsz);
	}
	for (i = 0; i < n; i++) {
		Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R, .p_vaddr = s[i].vaddr,
			.p_paddr = s[i].paddr, .p_offset = data + s[i].data * 4 * PG,
			.p_filesz = s[i].size, .p_memsz = s[i].size, .p_align = PG };
		memcpy(b + phoff + (i + 1) * sizeof(Elf64_Phdr), &ph, sizeof(ph));
	}
	*lenp = len;
	*dataoff = data;
	return b;
}

struct opened {
	int fd;
	void *map;
	size_t len;
	struct stat st;
	struct kvs_open_args a;
	void *priv;
	struct kvs_src_info in;
};

static int
open_bytes(struct opened *o, const char *name, const uint8_t *b, size_t len,
    struct kvs_error *e)
{
	const char *path = path_join(test_tmpdir(), name);

	ck_assert_int_eq(write_file(path, b, len), 0);
	memset(o, 0, sizeof(*o));
	o->fd = open(path, O_RDONLY);
	ck_assert_int_ge(o->fd, 0);
	ck_assert_int_eq(fstat(o->fd, &o->st), 0);
	o->len = len;
	o->map = mmap(NULL, len, PROT_READ, MAP_SHARED, o->fd, 0);
	ck_assert_ptr_ne(o->map, MAP_FAILED);
	o->a.path = path;
	o->a.fd = o->fd;
	o->a.st = &o->st;
	o->a.map = o->map;
	o->a.map_len = len;
	kerr_clear(e);
	if (kvs_source_elfdump.open(&o->a, &o->priv, e) != 0)
		return -1;
	kvs_source_elfdump.info(o->priv, &o->in);
	return 0;
}

static void
close_bytes(struct opened *o)
{
	if (o->priv != NULL)
		kvs_source_elfdump.close(o->priv);
	munmap(o->map, o->len);
	close(o->fd);
}

static void
expect_bytes(int (*rd)(void *, uint64_t, void *, size_t, struct kvs_error *), void *priv,
    uint64_t addr, uint64_t fileoff, size_t n)
{
	struct kvs_error e;
	uint8_t buf[64];
	size_t i;

	ck_assert_uint_le(n, sizeof(buf));
	kerr_clear(&e);
	ck_assert_msg(rd(priv, addr, buf, n, &e) == 0, "read at 0x%llx: %s",
	    (unsigned long long)addr, e.msg);
	for (i = 0; i < n; i++)
		ck_assert_msg(buf[i] == pattern(fileoff + i), "byte %zu at 0x%llx", i,
		    (unsigned long long)addr);
}

START_TEST(qemu_paging_layout)
{
	/* Two physical runs; the kernel image and the direct map alias them. */
	static const struct qseg segs[] = {
		{ 0, 0x0, 4 * PG, 0 },                                  /* phys-only */
		{ 0xffffffff81000000ULL, 0x1000000, 4 * PG, 1 },
		{ 0xffff888001000000ULL, 0x1000000, 4 * PG, 1 },        /* alias */
		{ 0xffff888000000000ULL, 0x0, 4 * PG, 0 },              /* alias */
	};
	static const char vi[] = "OSRELEASE=6.1.0-test\nPAGESIZE=4096\nKERNELOFFSET=0\n";
	struct opened o;
	struct kvs_error e;
	uint64_t data;
	size_t len;
	uint8_t *b = build_qemu(segs, 4, vi, &len, &data), buf[8];

	ck_assert_msg(open_bytes(&o, "qemu.elf", b, len, &e) == 0, "%s", e.msg);
	ck_assert(!o.in.virtual_only);
	ck_assert_uint_eq(o.in.vmcoreinfo_len, strlen(vi));
	ck_assert_int_eq(memcmp(o.in.vmcoreinfo, vi, strlen(vi)), 0);
	/* Physical: both runs, each once. */
	expect_bytes(kvs_source_elfdump.read_phys, o.priv, 0x10, data + 0x10, 32);
	expect_bytes(kvs_source_elfdump.read_phys, o.priv, 0x1000ff0, data + 4 * PG + 0xff0, 32);
	/* Across the end of a run: not in the dump, at the first missing byte. */
	ck_assert_int_eq(kvs_source_elfdump.read_phys(o.priv, 4 * PG - 4, buf, 8, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTDUMPED);
	ck_assert_ptr_nonnull(strstr(e.msg, "0x4000"));
	/* Virtual: the image and the direct map read the shared bytes. */
	expect_bytes(kvs_source_elfdump.read_virt, o.priv, 0xffffffff81000100ULL,
	    data + 4 * PG + 0x100, 16);
	expect_bytes(kvs_source_elfdump.read_virt, o.priv, 0xffff888000000100ULL, data + 0x100, 16);
	close_bytes(&o);
	free(b);
}
END_TEST

/* More than 65,534 segments: e_phnum is PN_XNUM, the count is in sh_info. */
START_TEST(pn_xnum)
{
	size_t n = 70000, i, len;
	struct qseg *segs = calloc(n, sizeof(*segs));
	struct opened o;
	struct kvs_error e;
	uint64_t data;
	uint8_t *b;

	ck_assert_ptr_nonnull(segs);
	for (i = 0; i < n; i++) {
		/* 70,000 one-page virtual ranges over four physical pages. */
		segs[i].vaddr = 0xffffc90000000000ULL + i * PG;
		segs[i].paddr = (i % 4) * PG;
		segs[i].size = PG;
		segs[i].data = 0;
	}
	/* The aliases must agree: each virtual page i maps file page i % 4. */
	b = build_qemu(segs, n, "OSRELEASE=x\nPAGESIZE=4096\n", &len, &data);
	{
		Elf64_Phdr ph;
		for (i = 0; i < n; i++) {
			memcpy(&ph, b + 64 + sizeof(Elf64_Shdr) + (i + 1) * sizeof(ph), sizeof(ph));
			ph.p_offset = data + (i % 4) * PG;
			memcpy(b + 64 + sizeof(Elf64_Shdr) + (i + 1) * sizeof(ph), &ph, sizeof(ph));
		}
	}
	ck_assert_uint_eq(((Elf64_Ehdr *)b)->e_phnum, PN_XNUM);
	ck_assert_msg(open_bytes(&o, "xnum.elf", b, len, &e) == 0, "%s", e.msg);
	expect_bytes(kvs_source_elfdump.read_phys, o.priv, 3 * PG + 8, data + 3 * PG + 8, 16);
	expect_bytes(kvs_source_elfdump.read_virt, o.priv, 0xffffc90000000000ULL + 69999 * PG,
	    data + (69999 % 4) * PG, 16);
	ck_assert_uint_eq(o.in.dumped_pages, 4);
	close_bytes(&o);
	/* PN_XNUM without a section header to hold the count. */
	((Elf64_Ehdr *)b)->e_shoff = 0;
	ck_assert_int_eq(open_bytes(&o, "xnum-bad.elf", b, len, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(e.msg, "PN_XNUM"));
	o.priv = NULL;
	close_bytes(&o);
	free(b);
	free(segs);
}
END_TEST

/* kdump's /proc/vmcore: the kernel image is a segment of its own, a copy of
 * RAM bytes at another file offset.  Equal copies are one range; a copy that
 * differs is refused. */
START_TEST(kdump_image_copy)
{
	static const struct qseg segs[] = {
		{ 0xffff888001000000ULL, 0x1000000, 4 * PG, 0 },        /* RAM */
		{ 0xffffffff81000000ULL, 0x1000000, 4 * PG, 1 },        /* image copy */
	};
	static const char vi[] = "OSRELEASE=x\nPAGESIZE=4096\n";
	struct opened o;
	struct kvs_error e;
	uint64_t data;
	size_t len;
	uint8_t *b = build_qemu(segs, 2, vi, &len, &data);

	memcpy(b + data + 4 * PG, b + data, 4 * PG);
	ck_assert_msg(open_bytes(&o, "kdump.elf", b, len, &e) == 0, "%s", e.msg);
	expect_bytes(kvs_source_elfdump.read_phys, o.priv, 0x1000000 + 3 * PG, data + 3 * PG, 16);
	close_bytes(&o);
	b[data + 4 * PG + 4 * PG - 1] ^= 0xff;          /* the copy's last byte differs */
	ck_assert_int_eq(open_bytes(&o, "kdump-bad.elf", b, len, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "different contents"));
	o.priv = NULL;
	close_bytes(&o);
	free(b);
}
END_TEST

/* Two segments claiming one physical range with different bytes: refused. */
START_TEST(conflicting_aliases)
{
	static const struct qseg segs[] = {
		{ 0, 0x0, 4 * PG, 0 },
		{ 0, 0x2000, 4 * PG, 1 },
	};
	struct opened o;
	struct kvs_error e;
	uint64_t data;
	size_t len;
	uint8_t *b = build_qemu(segs, 2, "OSRELEASE=x\nPAGESIZE=4096\n", &len, &data);

	ck_assert_int_eq(open_bytes(&o, "conflict.elf", b, len, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_FORMAT);
	ck_assert_ptr_nonnull(strstr(e.msg, "overlap with different contents"));
	o.priv = NULL;
	close_bytes(&o);
	free(b);
}
END_TEST

/* A truncated or lying VMCOREINFO note does not read past its segment. */
START_TEST(note_bounds)
{
	static const struct qseg segs[] = { { 0, 0x0, 4 * PG, 0 } };
	struct opened o;
	struct kvs_error e;
	uint64_t data;
	size_t len;
	uint8_t *b = build_qemu(segs, 1, "OSRELEASE=x\nPAGESIZE=4096\n", &len, &data);
	uint32_t huge = 0x7fffffff;
	size_t note_off = 64 + sizeof(Elf64_Shdr) + 2 * sizeof(Elf64_Phdr);

	memcpy(b + note_off + 4, &huge, 4);          /* descsz past the note */
	ck_assert_msg(open_bytes(&o, "note.elf", b, len, &e) == 0, "%s", e.msg);
	ck_assert_ptr_null(o.in.vmcoreinfo);
	close_bytes(&o);
	free(b);
}
END_TEST

static char *
list_text(kvs_t *kd, int which)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	size_t cap = 1 << 20, len = 0;
	char *t = malloc(cap);
	int rc;

	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(t);
	rc = which == ALLOCATOR_MALLOC ? memstat_kvm_malloc(l, kd) : memstat_kvm_uma(l, kd);
	ck_assert_msg(rc == 0, "%s", kvs_geterr(kd));
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
		unsigned c;
		len += (size_t)snprintf(t + len, cap - len, "%s %llu %llu %llu %llu %llu %llu\n",
		    memstat_get_name(mt), (unsigned long long)memstat_get_kaddr(mt),
		    (unsigned long long)memstat_get_numallocs(mt),
		    (unsigned long long)memstat_get_numfrees(mt),
		    (unsigned long long)memstat_get_bytes(mt),
		    (unsigned long long)memstat_get_count(mt),
		    (unsigned long long)memstat_get_free(mt));
		for (c = 0; c < memstat_get_maxcpus(mt); c++)
			len += (size_t)snprintf(t + len, cap - len, " %llu/%llu",
			    (unsigned long long)memstat_get_percpu_numallocs(mt, (int)c),
			    (unsigned long long)memstat_get_percpu_free(mt, (int)c));
		ck_assert_uint_lt(len, cap - 256);
	}
	memstat_mtl_free(l);
	return t;
}

START_TEST(virtual_only_core_equals_minidump)
{
	static const char *const dirs[] = { "fbsd14", "fbsd14-s2" };
	char errbuf[KVS_ERRBUF_SIZE], k[1024], a[1024], b[1024];
	kvs_t *kva, *md;
	uint64_t pa;
	int which;

	snprintf(k, sizeof(k), "%s", fixture_path("fbsd14/kernel"));
	snprintf(a, sizeof(a), "%s", fixture_path(dirs[_i]));
	strncat(a, "/vmcore.kva.elf", sizeof(a) - strlen(a) - 1);
	snprintf(b, sizeof(b), "%s", fixture_path(dirs[_i]));
	strncat(b, "/vmcore.minidump3", sizeof(b) - strlen(b) - 1);
	kva = kvs_open(k, a, 0, errbuf);
	ck_assert_msg(kva != NULL, "%s", errbuf);
	md = kvs_open(k, b, 0, errbuf);
	ck_assert_msg(md != NULL, "%s", errbuf);
	for (which = ALLOCATOR_MALLOC; which <= ALLOCATOR_UMA; which++) {
		char *x = list_text(kva, which), *y = list_text(md, which);
		ck_assert_uint_gt(strlen(x), 100);
		ck_assert_str_eq(x, y);
		free(x);
		free(y);
	}
	/* No physical memory: translation says so, naming the dump. */
	ck_assert_int_eq(kvs_kvtop(kva, 0xffffffff80200000ULL, &pa), -1);
	ck_assert_int_eq(kvs_errstatus(kva), KVS_E_UNMAPPED);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kva), "virtual addresses only"));
	kvs_close(kva);
	kvs_close(md);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("vmcore");
	TCase *tc = tcase_create("ELF vmcores");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, qemu_paging_layout);
	tcase_add_test(tc, pn_xnum);
	tcase_add_test(tc, conflicting_aliases);
	tcase_add_test(tc, kdump_image_copy);
	tcase_add_test(tc, note_bounds);
	tcase_add_loop_test(tc, virtual_only_core_equals_minidump, 0, 2);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
