/* arch.c - the architectures, found by the kernel's ELF machine. */
#include <stddef.h>
#include <stdio.h>

#include "arch.h"

static const struct kvs_arch_ops *const arches[] = {
	&kvs_arch_amd64,
	&kvs_arch_arm64,
};

const struct kvs_arch_ops *
kvs_arch_find(unsigned elf_machine)
{
	size_t i;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i]->elf_machine == elf_machine)
			return arches[i];
	return NULL;
}

void
kvs_arch_names(char *buf, size_t len)
{
	size_t i, o = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < sizeof(arches) / sizeof(arches[0]) && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "/" : "", arches[i]->name);
}
