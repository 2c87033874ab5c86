/*
 * kstack.c - the thread whose kernel stack holds an address (whatis):
 * allproc's processes (p_list), each one's threads (p_threads, td_plist),
 * each thread's stack [td_kstack, td_kstack + td_kstack_pages pages).  Both
 * walks are bounded; a kernel without allproc or struct thread has no
 * answer here.
 */
#include <stdio.h>
#include <string.h>

#include "census.h"
#include "freebsd.h"

#define PAGE_SZ 4096ULL
#define MAX_PROCS (1ULL << 22)
#define MAX_THREADS (1ULL << 22)
#define MAX_KSTACK_PAGES 1024

/* 1 found (w filled), 0 not a stack, -1 error. */
int
freebsd_kstack_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w)
{
	static const char P[] = "struct proc", T[] = "struct thread";
	struct kfield p_list, p_threads, p_pid, p_comm, td_plist, td_tid, td_kstack, td_pages;
	struct kwalk wp, wt;
	uint64_t head, p;

	if (kvs_symbol(kd, "allproc", &head, NULL) != 0 ||
	    kfield(kd, P, "p_list.le_next", &p_list, true) ||
	    kfield(kd, P, "p_threads.tqh_first", &p_threads, true) ||
	    kfield(kd, P, "p_pid", &p_pid, true) || kfield(kd, P, "p_comm", &p_comm, true) ||
	    kfield(kd, T, "td_plist.tqe_next", &td_plist, true) ||
	    kfield(kd, T, "td_tid", &td_tid, true) || kfield(kd, T, "td_kstack", &td_kstack, true) ||
	    kfield(kd, T, "td_kstack_pages", &td_pages, true)) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (kread_u64(kd, head, &p) != 0)
		return kerr_push(&kd->err, "allproc");
	kwalk_init(&wp, MAX_PROCS);
	for (; p != 0; ) {
		uint64_t td;
		if (kwalk_step(kd, &wp, p, "allproc") != 0 ||
		    kread_u64(kd, p + p_threads.off, &td) != 0)
			return -1;
		kwalk_init(&wt, MAX_THREADS);
		for (; td != 0; ) {
			uint64_t st, np, v;
			if (kwalk_step(kd, &wt, td, "p_threads") != 0 ||
			    kread_u64(kd, td + td_kstack.off, &st) != 0 ||
			    kread_uint(kd, td + td_pages.off, (unsigned)td_pages.size, &np) != 0)
				return -1;
			if (np <= MAX_KSTACK_PAGES && addr >= st && addr - st < np * PAGE_SZ) {
				w->kind = KVS_WHATIS_STACK;
				w->task = td;
				if (kread_uint(kd, p + p_pid.off, 4, &v) == 0)
					w->pid = (int)v;
				if (kread_uint(kd, td + td_tid.off, 4, &v) == 0)
					w->tid = (int)v;
				if (kvs_read(kd, p + p_comm.off, w->comm, p_comm.size < sizeof(w->comm) ?
				    p_comm.size : sizeof(w->comm) - 1) != 0)
					snprintf(w->comm, sizeof(w->comm), "?");
				w->comm[sizeof(w->comm) - 1] = '\0';
				kerr_clear(&kd->err);
				return 1;
			}
			if (kread_u64(kd, td + td_plist.off, &td) != 0)
				return -1;
		}
		if (kread_u64(kd, p + p_list.off, &p) != 0)
			return -1;
	}
	return 0;
}
