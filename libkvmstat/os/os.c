/* os.c - the kernel families, in the order they are probed. */
#include "kvs_private.h"
#include "kvmprof.h"
#include "memstat.h"

const struct kvs_os_ops *const kvs_os_table[] = {
	&kvs_os_freebsd,
	&kvs_os_linux,
};
const size_t kvs_os_count = sizeof(kvs_os_table) / sizeof(kvs_os_table[0]);

/* The kernel's profile buffer, whichever family it is. */
kvmprof_gmon_t *
kvmprof_gmon_read(kvs_t *kd)
{
	kerr_clear(&kd->err);
	if (kd->os->profile_read == NULL) {
		kerr_set(&kd->err, KVS_E_NOSYMBOL, "kvmstat reads no kernel profile buffer of %s "
		    "kernels", kd->os->name);
		return NULL;
	}
	return kd->os->profile_read(kd);
}

/* The kernel's own allocators, whichever family it is. */
int
memstat_kvm_all(struct memory_type_list *list, void *kvm_handle)
{
	kvs_t *kd = kvm_handle;

	return kd->os->memstat_all(list, kd);
}
