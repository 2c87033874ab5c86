/* arch.c - the architectures, found by the kernel's ELF machine. */
#include <stddef.h>

#include "arch.h"

static const struct kvs_arch_ops *const arches[] = {
	&kvs_arch_amd64,
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
