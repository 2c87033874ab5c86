/*
 * elfcore.h - headers of a synthetic FreeBSD ELF full dump (a core whose
 * PT_LOAD segments are physical memory), shared by the source tests and the
 * open benchmark.  The caller writes the segment data at the offsets given.
 */
#ifndef ELFCORE_H
#define ELFCORE_H

#include <stddef.h>
#include <stdint.h>

#define ELFCORE_PAGE 4096u

struct elfcore_seg {
	uint64_t paddr, vaddr, filesz, memsz;
};

/* Bytes the ELF header and n program headers take (before page rounding). */
size_t elfcore_hdr_size(size_t n);

/*
 * Write the ELF header and one PT_LOAD per segment into hdr, which must hold
 * elfcore_hdr_size(n) bytes, the way FreeBSD writes them: zeroed header,
 * EI_OSABI 255, e_version 0, p_flags PF_R, data page-aligned after the
 * headers, each segment's data page-rounded.  The file offset of segment i's
 * data goes to off[i] (off may be NULL); returns the length of the whole file.
 */
uint64_t elfcore_headers(void *hdr, const struct elfcore_seg *s, size_t n, uint64_t *off);

#endif
