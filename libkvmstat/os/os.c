/* os.c - the kernel families, in the order they are probed. */
#include "kvs_private.h"
#include "memstat.h"

const struct kvs_os_ops *const kvs_os_table[] = {
	&kvs_os_freebsd,
	&kvs_os_linux,
};
const size_t kvs_os_count = sizeof(kvs_os_table) / sizeof(kvs_os_table[0]);

/* The kernel's own allocators, whichever family it is. */
int
memstat_kvm_all(struct memory_type_list *list, void *kvm_handle)
{
	kvs_t *kd = kvm_handle;

	return kd->os->memstat_all(list, kd);
}
