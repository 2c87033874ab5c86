/* elfcore.c - see elfcore.h. */
#include <elf.h>
#include <string.h>

#include "elfcore.h"

#define RNDPG(x) (((uint64_t)(x) + ELFCORE_PAGE - 1) & ~(uint64_t)(ELFCORE_PAGE - 1))

size_t
elfcore_hdr_size(size_t n)
{
	return sizeof(Elf64_Ehdr) + n * sizeof(Elf64_Phdr);
}

uint64_t
elfcore_headers(void *hdr, const struct elfcore_seg *s, size_t n, uint64_t *off)
{
	uint8_t *b = hdr;
	uint64_t at = RNDPG(elfcore_hdr_size(n));
	Elf64_Ehdr eh;
	size_t i;

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = 255;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = 0;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)n;
	eh.e_shentsize = 64;
	memcpy(b, &eh, sizeof(eh));
	for (i = 0; i < n; i++) {
		Elf64_Phdr ph;

		memset(&ph, 0, sizeof(ph));
		ph.p_type = PT_LOAD;
		ph.p_flags = PF_R;
		ph.p_offset = at;
		ph.p_vaddr = s[i].vaddr;
		ph.p_paddr = s[i].paddr;
		ph.p_filesz = s[i].filesz;
		ph.p_memsz = s[i].memsz;
		ph.p_align = ELFCORE_PAGE;
		memcpy(b + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
		if (off != NULL)
			off[i] = at;
		at += RNDPG(s[i].filesz);
	}
	return at;
}
