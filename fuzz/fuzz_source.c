/*
 * fuzz_source.c - libFuzzer harness for one dump format, built once per
 * format (-DFZ_SRC=minidump|elfdump|kdump|raw -> fuzz_<format>).  Each input
 * is a whole dump file:
 *   1. the format's own probe and parse (its ops table, on the input bytes
 *      as the mapping, so ASan sees every byte read past them), then its
 *      description, page count and reads of pages spread over the space it
 *      claims;
 *   2. the whole open path (kvs_open) with the format's fixture kernel, on
 *      the same bytes as a file: OS discovery, translation, then what
 *      `kvmstat info` and `dmesg` read.
 * The kernel: a Linux fixture vmlinux when the input carries VMCOREINFO or
 * is kdump, else the FreeBSD fbsd14 kernel.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"
#include "fz.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define OPS CAT(kvs_source_, FZ_SRC)
/* A raw image is opened as one (KVS_O_RAW): raw accepts anything. */
#define FZ_IS_raw 1
#if CAT(FZ_IS_, FZ_SRC)
#define OPEN_FLAGS KVS_O_RAW
#else
#define OPEN_FLAGS 0
#endif

static struct fz_file file;
static const char *fbsd_kernel, *linux_kernel;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_file_init(&file, "fuzzdump");
	fbsd_kernel = strdup(fz_fixture("fbsd14/kernel"));
	linux_kernel = strdup(fz_fixture("linux-kaslr/vmlinux"));
	return 0;
}

/* The format's ops on the bytes as they are. */
static void
source_alone(const uint8_t *data, size_t size, const struct stat *st)
{
	struct kvs_open_args a = { .path = file.path, .fd = file.fd, .st = st,
	    .map = size ? data : NULL, .map_len = size, .flags = 0 };
	struct kvs_src_info info;
	struct kvs_error e;
	uint8_t page[4096 + 64];
	void *priv = NULL;
	uint64_t n;

	kerr_clear(&e);
	if (OPS.open(&a, &priv, &e) != 0)
		return;
	OPS.info(priv, &info);
	n = OPS.dumped_pages != NULL ? OPS.dumped_pages(priv) : info.dumped_pages;
	(void)n;
	if (info.pt != NULL && info.pt_entries > 0) {
		/* The page-table section is borrowed from the mapping: its
		 * first and last entries must be inside it. */
		volatile uint64_t x = info.pt[0] ^ info.pt[info.pt_entries - 1];
		(void)x;
	}
	if (info.vmcoreinfo != NULL && info.vmcoreinfo_len > 0) {
		volatile char c = info.vmcoreinfo[0] ^ info.vmcoreinfo[info.vmcoreinfo_len - 1];
		(void)c;
	}
	if (info.msgbuf != NULL && info.msgbuf_len > 0) {
		volatile uint8_t c = ((const uint8_t *)info.msgbuf)[0] ^
		    ((const uint8_t *)info.msgbuf)[info.msgbuf_len - 1];
		(void)c;
	}
	if (OPS.refresh != NULL)
		OPS.refresh(priv);
	/* Pages at the start, across a page boundary, in the first MiBs, and
	 * far away; then an address the input names. */
	static const uint64_t pas[] = { 0, 4096, 4096 - 8, 0x1000 * 7 + 100, 0x100000,
	    0x200000 - 16, 0x5ff000, 0x100000000ULL, ~0ULL - 4095 };
	for (size_t i = 0; i < sizeof(pas) / sizeof(pas[0]); i++) {
		kerr_clear(&e);
		(void)OPS.read_phys(priv, pas[i], page, sizeof(page), &e);
	}
	if (size >= 8) {
		kerr_clear(&e);
		(void)OPS.read_phys(priv, fz_le64(data + size - 8) & 0xffffffffffULL, page, 4096,
		    &e);
	}
	if (OPS.read_virt != NULL) {
		static const uint64_t vas[] = { 0xffffffff80000000ULL, 0xffffffff81000000ULL,
		    0xfffff80000000000ULL, 0xffff888000000000ULL, 0 };
		for (size_t i = 0; i < sizeof(vas) / sizeof(vas[0]); i++) {
			kerr_clear(&e);
			(void)OPS.read_virt(priv, vas[i], page, sizeof(page), &e);
		}
	}
	OPS.close(priv);
}
/* What `kvmstat info` and `dmesg` do after kvs_open. */
static void
whole_open(const char *kernel, int flags)
{
	char err[KVS_ERRBUF_SIZE], buf[256];
	struct kvs_dumpinfo di;
	struct kvs_kernelinfo ki;
	uint64_t a, pa;
	char *text;
	size_t len;
	kvs_t *kd;

	kd = kvs_open(kernel, file.path, flags | KVS_O_NOVERIFY | FZ_OPEN, err);
	if (kd == NULL)
		return;
	(void)kvs_dumpinfo(kd, &di);
	(void)kvs_kernel_info(kd, &ki);
	if (kvs_msgbuf(kd, &text, &len) == 0)
		free(text);
	if (kvs_symbol(kd, "version", &a, NULL) == 0)
		(void)kvs_read_string(kd, a, buf, sizeof(buf), NULL);
	if (kvs_symbol(kd, "linux_banner", &a, NULL) == 0)
		(void)kvs_read_string(kd, a, buf, sizeof(buf), NULL);
	(void)kvs_kvtop(kd, 0xffffffff80200000ULL, &pa);
	(void)kvs_read(kd, 0xfffff80000001000ULL, buf, sizeof(buf));
	(void)kvs_read(kd, 0xffffffff80801ff0ULL, buf, 64);
	(void)kvs_read_phys(kd, 0x1ff8, buf, 64);
	kvs_close(kd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stat st;
	int linux_input;

	fz_file_set(&file, data, size);
	if (fstat(file.fd, &st) != 0)
		return 0;
	source_alone(data, size, &st);
	linux_input = fz_has(data, size, "VMCOREINFO") || fz_has(data, size, "OSRELEASE=") ||
	    (size >= 8 && memcmp(data, "KDUMP   ", 8) == 0) ||
	    (size >= 13 && memcmp(data, "makedumpfile", 12) == 0);
	whole_open(linux_input ? linux_kernel : fbsd_kernel, OPEN_FLAGS);
	return 0;
}
