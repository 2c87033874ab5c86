/*
 * member.c - print one member of a kernel structure, found by name.
 *
 *   member KERNEL CORE TYPE MEMBER ADDRESS|SYMBOL
 *   member vmlinux vmcore kmem_cache size 0xffff888003c41000
 *   member kernel vmcore.0 'struct malloc_type' ks_shortdesc M_DEVBUF
 *
 * The member's offset, size and kind come from the kernel's debugging
 * information (kvs_member), so the program knows no kernel layout.  Integers
 * print in decimal, pointers in hex (and, for a char pointer, the string).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvmstat.h>

int
main(int argc, char **argv)
{
	char err[KVS_ERRBUF_SIZE], type[256], str[256];
	struct kvs_typeinfo ti;
	uint64_t addr, size, v = 0;
	unsigned char buf[8];
	char *end;
	kvs_t *kd;

	if (argc != 6) {
		fprintf(stderr, "usage: member KERNEL CORE TYPE MEMBER ADDRESS|SYMBOL\n");
		return 2;
	}
	if ((kd = kvs_open(argv[1], argv[2], 0, err)) == NULL) {
		fprintf(stderr, "member: %s\n", err);
		return 1;
	}
	/* "kmem_cache" or "struct kmem_cache": try the name as given first. */
	snprintf(type, sizeof(type), "%s", argv[3]);
	if (kvs_type(kd, type, &ti) != 0 && strchr(argv[3], ' ') == NULL)
		snprintf(type, sizeof(type), "struct %s", argv[3]);
	addr = strtoull(argv[5], &end, 0);
	if (*end != '\0' && kvs_symbol(kd, argv[5], &addr, &size) != 0)
		goto fail;
	if (kvs_member(kd, type, argv[4], &ti) != 0)
		goto fail;
	if (ti.kind != KVS_KIND_BASE && ti.kind != KVS_KIND_ENUM &&
	    ti.kind != KVS_KIND_POINTER) {
		fprintf(stderr, "member: %s.%s is a %s, not a number\n", type, argv[4],
		    ti.type_name);
		kvs_close(kd);
		return 1;
	}
	if (ti.size > sizeof(buf) || kvs_read(kd, addr + ti.offset, buf, ti.size) != 0)
		goto fail;
	for (size_t i = ti.size; i-- > 0;)     /* amd64: little-endian */
		v = v << 8 | buf[i];
	if (ti.bit_size != 0)
		v = (v >> ti.bit_offset) & ((UINT64_C(1) << ti.bit_size) - 1);
	if (ti.kind == KVS_KIND_POINTER) {
		printf("%s.%s = 0x%" PRIx64, type, argv[4], v);
		if (strstr(ti.type_name, "char *") != NULL && v != 0 &&
		    kvs_read_string(kd, v, str, sizeof(str), NULL) >= 0)
			printf(" \"%s\"", str);
		printf("\n");
	} else
		printf("%s.%s = %" PRIu64 "\n", type, argv[4], v);
	kvs_close(kd);
	return 0;
fail:
	fprintf(stderr, "member: %s\n", kvs_geterr(kd));
	kvs_close(kd);
	return 1;
}
