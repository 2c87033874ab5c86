/* os.c - the kernel families, in the order they are probed. */
#include "kvs_private.h"

const struct kvs_os_ops *const kvs_os_table[] = {
	&kvs_os_freebsd,
	&kvs_os_linux,
};
const size_t kvs_os_count = sizeof(kvs_os_table) / sizeof(kvs_os_table[0]);
