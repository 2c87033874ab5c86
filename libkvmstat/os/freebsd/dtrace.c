/*
 * walk_freebsd_dtrace.c - DTrace probe tables (dtrace.ko), the profile
 * provider's probes (profile.ko), and profil(2) state on allproc.
 *
 * dtrace_probes is an array of dtrace_nprobes pointers indexed by id - 1,
 * with NULL holes.  A profile probe's dtpr_arg is its profile_probe_t; its
 * interval is an sbintime, decoded to nanoseconds exactly as profile.c
 * converts (whole seconds, then the 32-bit fraction scaled and shifted).
 * The array size comes from the kernel, so it is capped and read in chunks:
 * a count beyond what memory holds is an error, not a huge allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "freebsd.h"
#include "kvmprof.h"

#define MAX_PROBES (1u << 20)
#define CHUNK 512
#define NANOSEC 1000000000ULL

struct kvmprof_probes {
	struct kvmprof_probe *v;
	size_t n, cap;
	unsigned maxcpus;
	char **strs;
	size_t nstrs, capstrs;
	uint64_t **fires;
	size_t nfires;
};

static const char *
keep(struct kvmprof_probes *p, const char *s)
{
	if (p->nstrs == p->capstrs) {
		size_t c = p->capstrs ? p->capstrs * 2 : 64;
		char **n = realloc(p->strs, c * sizeof(*n));
		if (n == NULL)
			return "";
		p->strs = n;
		p->capstrs = c;
	}
	p->strs[p->nstrs] = strdup(s);
	return p->strs[p->nstrs] ? p->strs[p->nstrs++] : "";
}

static uint64_t
sbt_to_nsec(uint64_t sbt)
{
	return (sbt >> 32) * NANOSEC + (((sbt & 0xffffffffULL) * NANOSEC) >> 32);
}

void
kvmprof_probes_free(kvmprof_probes_t *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	for (i = 0; i < p->nfires; i++)
		free(p->fires[i]);
	free(p->fires);
	free(p->strs);
	free(p->v);
	free(p);
}

size_t kvmprof_probes_count(const kvmprof_probes_t *p) { return p->n; }
unsigned kvmprof_probes_maxcpus(const kvmprof_probes_t *p) { return p->maxcpus; }

const struct kvmprof_probe *
kvmprof_probes_get(const kvmprof_probes_t *p, size_t i)
{
	return i < p->n ? &p->v[i] : NULL;
}

static int
str_at(kvs_t *kd, uint64_t va, char *buf, size_t len)
{
	if (va == 0) {
		buf[0] = '\0';
		return 0;
	}
	return kvs_read_string(kd, va, buf, len, NULL) < 0 ? -1 : 0;
}

/* Profile-provider details of one probe. */
static int
profile_details(kvs_t *kd, kvmprof_probes_t *p, struct kvmprof_probe *pr, uint64_t arg,
    const struct kcpus *cpus)
{
	static const char T[] = "profile_probe_t";
	struct kfield kind, interval, expected, pcpus, pexp;
	struct kvs_typeinfo ti;
	uint8_t buf[512];

	if (kvs_type(kd, T, &ti) != 0 || ti.size > sizeof(buf) ||
	    kfield(kd, T, "prof_kind", &kind, true) || kfield(kd, T, "prof_interval", &interval, true) ||
	    kfield(kd, T, "prof_expected", &expected, true) || kfield(kd, T, "prof_pcpus", &pcpus, true) ||
	    kfield(kd, "profile_probe_percpu_t", "profc_expected", &pexp, true))
		return kerr_push(&kd->err, "profile provider layout (is profile.ko added?)");
	if (kvs_read(kd, arg, buf, ti.size) != 0)
		return kerr_push(&kd->err, "profile probe %s at 0x%llx", pr->name, (unsigned long long)arg);
	pr->is_profile = 1;
	pr->kind = (int)(int32_t)kfield_get(buf, ti.size, &kind);
	pr->interval_sbt = kfield_get(buf, ti.size, &interval);
	pr->interval_ns = sbt_to_nsec(pr->interval_sbt);
	pr->hz = pr->interval_ns ? (double)NANOSEC / (double)pr->interval_ns : 0;
	if (!pr->enabled)
		return 0;
	if (pr->kind != 0) {
		pr->next_fire_ns = sbt_to_nsec(kfield_get(buf, ti.size, &expected));
		return 0;
	}
	uint64_t vec = kfield_get(buf, ti.size, &pcpus);
	if (vec == 0)
		return 0;
	uint64_t *f = calloc(p->maxcpus, sizeof(*f));
	uint64_t **nf = realloc(p->fires, (p->nfires + 1) * sizeof(*nf));
	if (f == NULL || nf == NULL) {
		free(f);
		if (nf != NULL)
			p->fires = nf;
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	}
	p->fires = nf;
	p->fires[p->nfires++] = f;
	for (int c = 0; c <= cpus->maxid; c++) {
		uint64_t pc, e;
		if (!kcpu_present(cpus, c))
			continue;
		if (kread_u64(kd, vec + 8ULL * (unsigned)c, &pc) != 0)
			return kerr_push(&kd->err, "per-CPU state of %s", pr->name);
		if (pc == 0)
			continue;
		if (kread_u64(kd, pc + pexp.off, &e) != 0)
			return kerr_push(&kd->err, "CPU %d state of %s", c, pr->name);
		f[c] = sbt_to_nsec(e);
	}
	pr->next_fire_percpu = f;
	return 0;
}

kvmprof_probes_t *
kvmprof_probes_read(kvs_t *kd, int all)
{
	static const char P[] = "dtrace_probe_t";
	struct kfield ecb, arg, prov, mod, func, name, id, pvname;
	struct kvs_typeinfo ti;
	struct kcpus cpus;
	kvmprof_probes_t *p;
	uint64_t arr, nprobes, i;
	uint8_t buf[512];
	uint64_t chunk[CHUNK];

	kerr_clear(&kd->err);
	kvs_tlb_flush(kd);
	if (kread_sym_uint(kd, "dtrace_nprobes", &nprobes) != 0 ||
	    kvs_symbol(kd, "dtrace_probes", &arr, NULL) != 0 || kread_u64(kd, arr, &arr) != 0) {
		kerr_push(&kd->err, "DTrace probe table (dtrace.ko loaded? pass it with -K)");
		return NULL;
	}
	nprobes = (uint64_t)(int32_t)nprobes;
	if ((int64_t)nprobes < 0 || nprobes > MAX_PROBES) {
		kerr_set(&kd->err, KVS_E_DATA, "dtrace_nprobes %lld is implausible (limit %u)",
		    (long long)(int64_t)nprobes, MAX_PROBES);
		return NULL;
	}
	if (kvs_type(kd, P, &ti) != 0 || ti.size > sizeof(buf) ||
	    kfield(kd, P, "dtpr_ecb", &ecb, true) || kfield(kd, P, "dtpr_arg", &arg, true) ||
	    kfield(kd, P, "dtpr_provider", &prov, true) || kfield(kd, P, "dtpr_mod", &mod, true) ||
	    kfield(kd, P, "dtpr_func", &func, true) || kfield(kd, P, "dtpr_name", &name, true) ||
	    kfield(kd, P, "dtpr_id", &id, true) ||
	    kfield(kd, "dtrace_provider_t", "dtpv_name", &pvname, true)) {
		kerr_push(&kd->err, "DTrace layouts");
		return NULL;
	}
	if (kcpus_read(kd, &cpus) != 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->maxcpus = (unsigned)cpus.maxid + 1;
	for (i = 0; i < nprobes; i += CHUNK) {
		size_t k, n = nprobes - i < CHUNK ? (size_t)(nprobes - i) : CHUNK;

		if (kvs_read(kd, arr + i * 8, chunk, n * 8) != 0) {
			kerr_push(&kd->err, "dtrace_probes[%llu..] (dtrace_nprobes %llu is more than "
			    "the array in memory?)", (unsigned long long)i, (unsigned long long)nprobes);
			goto fail;
		}
		for (k = 0; k < n; k++) {
			struct kvmprof_probe pr;
			char s1[128], s2[128], s3[128], s4[128];

			if (chunk[k] == 0)
				continue;
			if (kvs_read(kd, chunk[k], buf, ti.size) != 0 ||
			    str_at(kd, kfield_get(buf, ti.size, &mod), s1, sizeof(s1)) ||
			    str_at(kd, kfield_get(buf, ti.size, &func), s2, sizeof(s2)) ||
			    str_at(kd, kfield_get(buf, ti.size, &name), s3, sizeof(s3))) {
				kerr_push(&kd->err, "probe %llu of dtrace_nprobes %llu at 0x%llx",
				    (unsigned long long)(i + k + 1), (unsigned long long)nprobes,
				    (unsigned long long)chunk[k]);
				goto fail;
			}
			uint64_t pv = kfield_get(buf, ti.size, &prov), pvn;
			if (pv == 0 || kread_u64(kd, pv + pvname.off, &pvn) != 0 ||
			    str_at(kd, pvn, s4, sizeof(s4)) != 0) {
				kerr_push(&kd->err, "provider of probe %s", s3);
				goto fail;
			}
			if (!all && strcmp(s4, "profile") != 0)
				continue;
			memset(&pr, 0, sizeof(pr));
			pr.id = (uint32_t)kfield_get(buf, ti.size, &id);
			pr.provider = keep(p, s4);
			pr.module = keep(p, s1);
			pr.function = keep(p, s2);
			pr.name = keep(p, s3);
			pr.enabled = kfield_get(buf, ti.size, &ecb) != 0;
			if (strcmp(s4, "profile") == 0 && kfield_get(buf, ti.size, &arg) != 0 &&
			    profile_details(kd, p, &pr, kfield_get(buf, ti.size, &arg), &cpus) != 0)
				goto fail;
			if (p->n == p->cap) {
				size_t c = p->cap ? p->cap * 2 : 64;
				struct kvmprof_probe *nv = realloc(p->v, c * sizeof(*nv));
				if (nv == NULL)
					goto fail;
				p->v = nv;
				p->cap = c;
			}
			p->v[p->n++] = pr;
		}
	}
	return p;
fail:
	kvmprof_probes_free(p);
	return NULL;
}

int
kvmprof_profil_read(kvs_t *kd, struct kvmprof_proc **out, size_t *n)
{
	static const char T[] = "struct proc";
	struct kfield next, flag, pid, comm, stats, prof;
	struct kvs_typeinfo ti;
	struct kwalk w;
	uint8_t buf[2048];
	uint64_t p;
	size_t cap = 0;

	kerr_clear(&kd->err);
	*out = NULL;
	*n = 0;
	if (kvs_symbol(kd, "allproc", &p, NULL) != 0 || kread_u64(kd, p, &p) != 0)
		return kerr_push(&kd->err, "process list");
	if (kvs_type(kd, T, &ti) != 0 || ti.size > sizeof(buf) ||
	    kfield(kd, T, "p_list.le_next", &next, true) || kfield(kd, T, "p_flag", &flag, true) ||
	    kfield(kd, T, "p_pid", &pid, true) || kfield(kd, T, "p_comm", &comm, true) ||
	    kfield(kd, T, "p_stats", &stats, true) ||
	    kfield(kd, "struct pstats", "p_prof", &prof, true))
		return kerr_push(&kd->err, "process layouts");
	kwalk_init(&w, 1u << 22);
	for (; p != 0; p = kfield_get(buf, ti.size, &next)) {
		uint64_t up[4];
		struct kvmprof_proc *pp;

		if (kwalk_step(kd, &w, p, "allproc") != 0 || kvs_read(kd, p, buf, ti.size) != 0)
			goto fail;
		if (!(kfield_get(buf, ti.size, &flag) & 0x20))      /* P_PROFIL */
			continue;
		if (kvs_read(kd, kfield_get(buf, ti.size, &stats) + prof.off, up, sizeof(up)) != 0) {
			kerr_push(&kd->err, "p_stats of pid %d", (int)kfield_get(buf, ti.size, &pid));
			goto fail;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			struct kvmprof_proc *np = realloc(*out, cap * sizeof(*np));
			if (np == NULL)
				goto fail;
			*out = np;
		}
		pp = &(*out)[(*n)++];
		memset(pp, 0, sizeof(*pp));
		pp->pid = (int)(int32_t)kfield_get(buf, ti.size, &pid);
		memcpy(pp->comm, buf + comm.off, comm.size < sizeof(pp->comm) ? comm.size : sizeof(pp->comm));
		pp->comm[sizeof(pp->comm) - 1] = '\0';
		pp->pr_base = up[0];
		pp->pr_size = up[1];
		pp->pr_off = up[2];
		pp->pr_scale = up[3];
	}
	return 0;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}
