/*
 * fz.h - what the libFuzzer harnesses share: fixture paths, a memory file
 * (memfd) the library opens by path, and the patch list the walker harnesses
 * decode.  Header-only: each harness is one translation unit.
 */
#ifndef FZ_H
#define FZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FZ_FIXTURES
#define FZ_FIXTURES "fixtures/cores"
#endif

/* $KVS_FIXTURES/<rel> (else the source tree's fixtures/cores), in one of 8
 * rotating static buffers. */
static inline const char *
fz_fixture(const char *rel)
{
	static char buf[8][4096];
	static unsigned n;
	const char *dir = getenv("KVS_FIXTURES");
	char *b = buf[n++ % 8];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir != NULL ? dir : FZ_FIXTURES, rel);
	return b;
}

static inline void
fz_die(const char *what, const char *path)
{
	fprintf(stderr, "fuzz: %s %s: %s\n", what, path, strerror(errno));
	abort();
}

/* A whole file into memory (aborts on failure: a harness without its
 * fixture is not running). */
static inline void *
fz_slurp(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0)
		fz_die("open", path);
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL || read(fd, buf, (size_t)st.st_size) != st.st_size)
		fz_die("read", path);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* A file in memory the library opens by name (/proc/self/fd/N): no disk
 * write per execution, and a mapping of it sees later writes. */
struct fz_file {
	int fd;
	char path[64];
};

static inline void
fz_file_init(struct fz_file *f, const char *name)
{
	f->fd = memfd_create(name, MFD_CLOEXEC);
	if (f->fd < 0)
		fz_die("memfd_create", name);
	snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
}

static inline void
fz_file_set(struct fz_file *f, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t off = 0;

	if (ftruncate(f->fd, 0) != 0)
		fz_die("ftruncate", f->path);
	while (off < len) {
		ssize_t n = pwrite(f->fd, p + off, len - off, (off_t)off);
		if (n <= 0)
			fz_die("pwrite", f->path);
		off += (size_t)n;
	}
}

/* Whether the input holds the bytes s (a cheap look at the first 1 MiB). */
static inline int
fz_has(const uint8_t *data, size_t size, const char *s)
{
	return memmem(data, size < (1U << 20) ? size : (1U << 20), s, strlen(s)) != NULL;
}

static inline uint64_t
fz_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint32_t
fz_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The layout cache.  Harnesses open with KVS_O_NO_CACHE (FZ_OPEN), so that
 * every question reaches BTF or DWARF and nothing is written under the
 * user's ~/.cache.  A harness that exercises the cache itself calls
 * fz_private_cache() once: $XDG_CACHE_HOME becomes a directory of its own
 * (made under $TMPDIR, else /tmp), emptied and removed at exit.
 */
#define FZ_OPEN KVS_O_NO_CACHE

static char fz_cache_home[256];

/* Remove every file under dir (two levels: <dir>/kvmstat/<files>), then
 * dir itself when rm_top. */
static inline void
fz_rm_tree(const char *dir, int rm_top)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[1024];

	if (d != NULL) {
		while ((de = readdir(d)) != NULL) {
			struct stat st;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= sizeof(p))
				continue;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				fz_rm_tree(p, 1);
			else
				unlink(p);
		}
		closedir(d);
	}
	if (rm_top)
		rmdir(dir);
}

static inline void
fz_private_cache_remove(void)
{
	if (fz_cache_home[0] != '\0')
		fz_rm_tree(fz_cache_home, 1);
}

static inline const char *
fz_private_cache(void)
{
	const char *tmp = getenv("TMPDIR");

	if (fz_cache_home[0] != '\0')
		return fz_cache_home;
	snprintf(fz_cache_home, sizeof(fz_cache_home), "%s/kvs-fuzz-cache.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(fz_cache_home) == NULL)
		fz_die("mkdtemp", fz_cache_home);
	if (setenv("XDG_CACHE_HOME", fz_cache_home, 1) != 0)
		fz_die("setenv", fz_cache_home);
	atexit(fz_private_cache_remove);
	return fz_cache_home;
}

#endif
