/*
 * fuzz_types.c - libFuzzer harness for type lookup over a mutated kernel,
 * built twice:
 *   fuzz_dwarf (-DFZ_DWARF): the input is a kernel ELF, opened without a
 *     dump (KVS_O_KERNEL_ONLY) with KVS_TYPES=dwarf, so every question goes
 *     to DWARF: symbols, then the walkers' types, members, variables and
 *     whole member lists;
 *   fuzz_btf: an input that is an ELF file is opened the same way (BTF
 *     asked first); anything else is raw BTF bytes (as a dump's
 *     __start_BTF..__stop_BTF) for the BTF reader alone.
 * The layout cache is off (FZ_OPEN): every question reaches the reader,
 * also for inputs that keep the build-id of a kernel asked before.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"
#include "fz.h"

static struct fz_file file;

/* The types, members and variables the walkers and `kvmstat type` ask
 * for, and the test objects' shapes. */
static const char *const types[] = {
	"struct malloc_type", "struct malloc_type_internal", "struct malloc_type_stats",
	"struct uma_zone", "struct uma_keg", "struct uma_cache", "struct uma_bucket",
	"struct gmonparam", "struct dtrace_probe", "struct dtrace_provider", "struct pcpu",
	"struct msgbuf", "struct linker_file", "struct proc",
	"struct kmem_cache", "struct kmem_cache_cpu", "struct kmem_cache_node", "struct slab",
	"struct page", "struct printk_ringbuffer", "struct prb_desc", "struct list_head",
	"struct outer", "struct inner", "struct bits", "union uu", "struct with_flex_char",
	"struct zero_len", "struct fwd", "outer_t", "row_t", "cv_ulong", "handler_t",
	"enum e", "int", "unsigned long", "u_long", "char", "void",
};
static const char *const members[][2] = {
	{ "struct malloc_type", "ks_next" }, { "struct malloc_type", "ks_shortdesc" },
	{ "struct malloc_type_internal", "mti_stats" }, { "struct uma_zone", "uz_link.le_next" },
	{ "struct uma_keg", "uk_link" }, { "struct uma_zone", "uz_cpu" },
	{ "struct gmonparam", "kcount" }, { "struct pcpu", "pc_cpuid" },
	{ "struct kmem_cache", "cpu_slab" }, { "struct kmem_cache", "node" },
	{ "struct kmem_cache", "list.next" }, { "struct slab", "freelist" },
	{ "struct outer", "in.a" }, { "struct outer", "u.x" }, { "struct bits", "b" },
	{ "outer_t", "in" }, { "struct list_head", "next" },
};
static const char *const vars[] = {
	"kmemstatistics", "uma_kegs", "_gmonparam", "mp_maxid", "msgbufp", "dtrace_probes",
	"slab_caches", "__per_cpu_offset", "prb", "pcpu_stats", "the_outer", "version",
};

static int
count(void *arg, const struct kvs_member_info *m)
{
	size_t *n = arg;

	*n += (m->name != NULL ? strlen(m->name) : 0) + strlen(m->type_name);
	return 0;
}

static void
ask(kvs_t *kd, struct kvs_btf *b)
{
	struct kvs_typeinfo ti;
	struct kvs_error e;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		kerr_clear(&e);
		if (kd != NULL) {
			if (kvs_type(kd, types[i], &ti) == 0)
				n += strlen(ti.type_name);
			(void)kvs_type_members(kd, types[i], count, &n);
		} else {
			if (kvs_btf_type(b, types[i], &ti, &e) == 0)
				n += strlen(ti.type_name);
			(void)kvs_btf_members(b, types[i], count, &n, &e);
		}
	}
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		kerr_clear(&e);
		if (kd != NULL) {
			if (kvs_member(kd, members[i][0], members[i][1], &ti) == 0)
				n += strlen(ti.type_name);
			(void)kvs_has_member(kd, members[i][0], members[i][1]);
		} else if (kvs_btf_member(b, members[i][0], members[i][1], &ti, &e) == 0)
			n += strlen(ti.type_name);
	}
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		uint64_t a;
		kerr_clear(&e);
		if (kd != NULL) {
			if (kvs_variable(kd, vars[i], &ti) == 0)
				n += strlen(ti.type_name);
			(void)kvs_symbol(kd, vars[i], &a, NULL);
			(void)kvs_symbol_at(kd, 0xffffffff80200000ULL + i * 64, &a);
		} else if (kvs_btf_variable(b, vars[i], &ti, &e) == 0)
			n += strlen(ti.type_name);
	}
	if (kd != NULL) {
		struct kvs_dumpinfo di;
		(void)kvs_dumpinfo(kd, &di);
	}
	(void)n;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
#ifdef FZ_DWARF
	setenv("KVS_TYPES", "dwarf", 1);
#endif
	fz_file_init(&file, "fuzzkernel");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KVS_ERRBUF_SIZE];

#ifndef FZ_DWARF
	if (size < 4 || memcmp(data, "\177ELF", 4) != 0) {
		struct kvs_btf *b = NULL;
		struct kvs_error e;
		kerr_clear(&e);
		if (kvs_btf_open_mem(&b, data, size, &e) == 0 && b != NULL) {
			ask(NULL, b);
			kvs_btf_close(b);
		}
		return 0;
	}
#endif
	fz_file_set(&file, data, size);
	kvs_t *kd = kvs_open(file.path, NULL, KVS_O_KERNEL_ONLY | FZ_OPEN, err);
	if (kd == NULL)
		return 0;
	ask(kd, NULL);
	kvs_close(kd);
	return 0;
}
