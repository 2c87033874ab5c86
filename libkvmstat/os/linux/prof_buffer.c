/*
 * prof_buffer.c - the kernel profile buffer of a kernel booted with profile=N
 * (kernel/profile.c), as a kvmprof histogram.
 *
 * prof_buffer holds prof_len 32-bit counters; a sample at pc counts in
 * counter (pc - _stext) >> prof_shift, and one that falls outside the text
 * (module code) counts in the last one, which readprofile reports as
 * *unknown*.  prof_on says which event samples (1 CPU, 2 schedule, 4 KVM);
 * 0 means profiling is off and there is no buffer.
 *
 * The rate is the timer tick's (HZ, from tick_nsec), per CPU.
 *
 * Older kernels (SMP, with /proc; 5.10 still) also kept each CPU's recent hits
 * in two pages of {bin, hits} pairs (per-CPU cpu_profile_hits[2]), and
 * added them to prof_buffer only when a group of pairs filled or when
 * /proc/profile was read; readprofile's counts are the buffer plus those
 * pages.  The pages are summed in when the kernel has the symbol.
 *
 * The variables' widths differ between kernels (prof_shift has been int and
 * unsigned short) and a dump without debug file has no type for them, so
 * the shift is taken from what must hold: prof_len == (_etext - _stext) >>
 * prof_shift, and checked against the variable's low byte.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "kvmprof.h"
#include "linux.h"
#include "profile.h"

#define PROF_MAX_BINS (64u << 20)

static int
sym_u64(kvs_t *kd, const char *name, uint64_t *addr)
{
	if (kvs_symbol(kd, name, addr, NULL) != 0)
		return kerr_push(&kd->err, "no kernel profile buffer (%s)", name);
	return 0;
}

/* Samples come with the timer tick: HZ, from tick_nsec (the tick's length
 * in ns, NTP-adjusted: rounded to the nearest whole rate); 0 if unknown. */
static int
tick_rate(kvs_t *kd)
{
	uint64_t a, ns;
	struct kvs_error saved = kd->err;
	int hz = 0;

	if (kvs_symbol(kd, "tick_nsec", &a, NULL) == 0 && kread_u64(kd, a, &ns) == 0 &&
	    ns >= 100000 && ns <= 100000000)
		hz = (int)((1000000000ULL + ns / 2) / ns);
	kd->err = saved;
	return hz;
}

#define HIT_PAGE_MAX 65536

/* Add the hits still held in each online CPU's two hash pages into bins
 * (little-endian counters, len of them).  0 (also when the kernel has no
 * such pages), or -1 with the error set. */
static int
add_cpu_hits(kvs_t *kd, uint32_t *bins, uint64_t len)
{
	uint64_t sym, pgsz = 4096, ptr;
	struct lnx_cpus c;
	uint8_t *page;
	unsigned cpu, half;
	size_t k;
	int rc = 0;

	if (kvs_symbol(kd, "cpu_profile_hits", &sym, NULL) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (!linux_vi_u64(kd, "PAGESIZE", 10, &pgsz) || pgsz < 4096 || pgsz > HIT_PAGE_MAX)
		pgsz = 4096;
	if (linux_cpus(kd, &c) != 0)
		return kerr_push(&kd->err, "the per-CPU profile hits");
	if ((page = malloc(pgsz)) == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	for (cpu = 0; cpu < c.n && rc == 0; cpu++) {
		if (!c.online[cpu])
			continue;
		for (half = 0; half < 2 && rc == 0; half++) {
			if (kread_u64(kd, sym + c.off[cpu] + 8 * half, &ptr) != 0 ||
			    (ptr != 0 && kvs_read(kd, ptr, page, pgsz) != 0)) {
				rc = kerr_push(&kd->err, "CPU %u's profile hits", cpu);
				break;
			}
			for (k = 0; ptr != 0 && k + 8 <= pgsz; k += 8) {
				uint32_t pc, hits;
				memcpy(&pc, page + k, 4);
				memcpy(&hits, page + k + 4, 4);
				pc = le32toh(pc);
				hits = le32toh(hits);
				if (hits == 0)
					continue;
				if (pc >= len) {
					rc = kerr_set(&kd->err, KVS_E_DATA, "CPU %u's profile hits "
					    "name bin %u of %llu", cpu, pc, (unsigned long long)len);
					break;
				}
				bins[pc] = htole32(le32toh(bins[pc]) + hits);
			}
		}
	}
	free(page);
	return rc;
}

struct kvmprof_gmon *
linux_profile_read(kvs_t *kd)
{
	uint64_t a_on, a_shift, a_len, a_buf, stext, etext, len, buf, text;
	uint8_t on, shift_lo;
	unsigned shift;
	uint32_t *bins;
	struct kvmprof_gmon *g;

	kerr_clear(&kd->err);
	kvs_tlb_flush(kd);
	if (sym_u64(kd, "prof_on", &a_on) != 0 || sym_u64(kd, "prof_shift", &a_shift) != 0 ||
	    sym_u64(kd, "prof_len", &a_len) != 0 || sym_u64(kd, "prof_buffer", &a_buf) != 0 ||
	    sym_u64(kd, "_stext", &stext) != 0 || sym_u64(kd, "_etext", &etext) != 0)
		return NULL;
	if (kvs_read(kd, a_on, &on, 1) != 0 || kvs_read(kd, a_shift, &shift_lo, 1) != 0 ||
	    kread_u64(kd, a_len, &len) != 0 || kread_u64(kd, a_buf, &buf) != 0) {
		kerr_push(&kd->err, "reading the profile buffer's variables");
		return NULL;
	}
	if (on == 0 || buf == 0) {
		kerr_set(&kd->err, KVS_E_NOSYMBOL, "no kernel profile: prof_on is %u and "
		    "prof_buffer 0x%llx (boot the kernel with profile=N)", on,
		    (unsigned long long)buf);
		return NULL;
	}
	if (etext <= stext || len < 2 || len > PROF_MAX_BINS) {
		kerr_set(&kd->err, KVS_E_DATA, "prof_len %llu for a text of %llu bytes is "
		    "implausible", (unsigned long long)len, (unsigned long long)(etext - stext));
		return NULL;
	}
	text = etext - stext;
	for (shift = 0; shift < 64 && (text >> shift) > len; shift++)
		;
	if (shift >= 64 || (text >> shift) != len || shift_lo != shift) {
		kerr_set(&kd->err, KVS_E_DATA, "prof_len %llu is not the text's %llu bytes "
		    "shifted by prof_shift (%u)", (unsigned long long)len,
		    (unsigned long long)text, shift_lo);
		return NULL;
	}
	bins = malloc((size_t)len * 4);
	if (bins == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory for %llu profile counters",
		    (unsigned long long)len);
		return NULL;
	}
	if (kvs_read(kd, buf, bins, (size_t)len * 4) != 0) {
		kerr_push(&kd->err, "reading prof_buffer (%llu counters at 0x%llx)",
		    (unsigned long long)len, (unsigned long long)buf);
		free(bins);
		return NULL;
	}
	if (add_cpu_hits(kd, bins, len) != 0) {
		free(bins);
		return NULL;
	}
	g = kvmprof_gmon_hist(kd, KVMPROF_ON, tick_rate(kd), 32, stext, len << shift,
	    (uint8_t *)bins, (size_t)len * 4, true);
	/* Bin against the kernel's own list (kallsyms: what readprofile's
	 * System.map lists, assembler labels included), also when a kernel
	 * file gave the handle its ELF symbols. */
	if (g != NULL && kd->elf != NULL) {
		struct kvs_symtab *st;
		struct kvs_error saved = kd->err;
		if (linux_kallsyms_load(kd, &st) == 0)
			kvmprof_gmon_set_symbols(g, st, kd->slide);
		kd->err = saved;
	}
	return g;
}
