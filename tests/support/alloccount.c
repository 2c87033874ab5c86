/*
 * alloccount.c - an LD_PRELOAD counter of a process's heap allocations, for
 * tests/check_steady_allocs.py: every malloc, calloc, realloc and aligned
 * allocation of the process (glibc lets a preloaded object replace its own,
 * for the libraries it calls too, qsort's buffer and stdio's included) is
 * counted, and each fflush(stdout) the program makes -- kvmtop's batch mode
 * ends every frame with one, tests/steady_meminfo.c every call -- appends
 * the count since the last one, as a decimal line, to the file named by
 * KVS_ALLOC_LOG, and starts counting again.  A test helper, not part of the
 * library: its counter is the process's own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static unsigned long allocs;

void *
malloc(size_t n)
{
	allocs++;
	return __libc_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	allocs++;
	return __libc_calloc(n, size);
}

void *
realloc(void *p, size_t n)
{
	allocs++;
	return __libc_realloc(p, n);
}

void *
memalign(size_t align, size_t n)
{
	allocs++;
	return __libc_memalign(align, n);
}

void *
aligned_alloc(size_t align, size_t n)
{
	allocs++;
	return __libc_memalign(align, n);
}

int
posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	allocs++;
	if ((p = __libc_memalign(align, n)) == NULL)
		return 12;      /* ENOMEM */
	*out = p;
	return 0;
}

int
fflush(FILE *f)
{
	static int (*real)(FILE *);
	static int fd = -2;
	char line[32];
	int i = (int)sizeof(line), r;
	unsigned long v;

	if (real == NULL)
		real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
	r = real(f);
	if (f != stdout)
		return r;
	v = allocs;
	if (fd == -2) {
		const char *path = getenv("KVS_ALLOC_LOG");
		fd = path != NULL ? open(path, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
	}
	if (fd >= 0) {
		line[--i] = '\n';
		do
			line[--i] = (char)('0' + v % 10);
		while ((v /= 10) != 0 && i > 0);
		if (write(fd, line + i, sizeof(line) - (size_t)i) < 0)
			fd = -1;
	}
	allocs = 0;
	return r;
}
