/*
 * source_devmem.c - live physical memory through a character device
 * (/dev/mem, or any other character device given as the core).  Every read
 * is a pread() on the descriptor kvs.c opened read-only: nothing is cached,
 * nothing written, so each refresh sees memory as it is now.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"

struct devmem {
	int fd;
};

static int
devmem_open(const struct kvs_open_args *a, void **priv, struct kvs_error *e)
{
	struct devmem *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return kerr_set(e, KVS_E_NOMEM, "out of memory");
	d->fd = a->fd;
	*priv = d;
	return 0;
}

static int
devmem_read(void *priv, uint64_t pa, void *buf, size_t len, struct kvs_error *e)
{
	struct devmem *d = priv;
	size_t got = 0;

	if (pa > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - pa) {
		kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx beyond any device offset",
		    (unsigned long long)pa);
		kerr_fault(e, pa);
		return -1;
	}
	while (got < len) {
		ssize_t n = pread(d->fd, (uint8_t *)buf + got, len - got, (off_t)(pa + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				kerr_errno(e, errno, "physical 0x%llx", (unsigned long long)(pa + got));
			else
				kerr_set(e, KVS_E_NOTDUMPED, "physical 0x%llx: end of device",
				    (unsigned long long)(pa + got));
			kerr_fault(e, pa + got);
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

static void
devmem_info(void *priv, struct kvs_src_info *out)
{
	(void)priv;
	memset(out, 0, sizeof(*out));
	out->format = "live";
	out->page_size = 4096;
	out->live = true;
}

static void
devmem_close(void *priv)
{
	free(priv);     /* the fd belongs to kvs.c */
}

const struct kvs_source_ops kvs_source_devmem = {
	.name = "live",
	.open = devmem_open,
	.read_phys = devmem_read,
	.info = devmem_info,
	.close = devmem_close,
};
