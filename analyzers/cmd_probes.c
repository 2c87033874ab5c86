/*
 * cmd_probes.c - `kvmstat probes`: the DTrace profile provider's probes
 * (--all: every provider's) with interval in ns and Hz, enabled state and,
 * for enabled probes, when each CPU (profile-) or the one CPU (tick-) fires
 * next.  `kvmstat profil`: processes with profil(2) enabled.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvmprof.h"

static void
clean(char *dst, size_t len, const char *s)
{
	sanitize(dst, len, s, strlen(s), false);
}

int
cmd_probes(kvs_t *kd, const struct opts *o)
{
	kvmprof_probes_t *p;
	size_t i;
	unsigned c;

	if (wrong_family(kd, o, "FreeBSD", "probes", "FreeBSD DTrace probes",
	    "`profile`"))
		return 1;
	if ((p = kvmprof_probes_read(kd, o->all)) == NULL) {
		char e[4 * KVS_ERRBUF_SIZE];
		clean(e, sizeof(e), kvs_geterr(kd));
		fprintf(stderr, "kvmstat: %s\n", e);
		if (o->json)
			json_error("read", kvs_geterr(kd));
		return 1;
	}
	if (o->json) {
		struct emitter em;
		json_t *arr = json_array();
		emit_init(&em, true, stdout);
		for (i = 0; i < kvmprof_probes_count(p); i++) {
			const struct kvmprof_probe *pr = kvmprof_probes_get(p, i);
			json_t *r = json_object();
			json_object_set_new(r, "id", json_integer(pr->id));
			json_object_set_new(r, "provider", json_dumpstr(pr->provider));
			json_object_set_new(r, "module", json_dumpstr(pr->module));
			json_object_set_new(r, "function", json_dumpstr(pr->function));
			json_object_set_new(r, "name", json_dumpstr(pr->name));
			json_object_set_new(r, "enabled", json_boolean(pr->enabled));
			if (pr->is_profile) {
				json_object_set_new(r, "kind", json_string(pr->kind ? "tick" : "profile"));
				json_object_set_new(r, "interval_ns", json_integer((json_int_t)pr->interval_ns));
				json_object_set_new(r, "hz", json_real(pr->hz));
				if (pr->enabled && pr->kind)
					json_object_set_new(r, "next_fire_ns", json_integer((json_int_t)pr->next_fire_ns));
				if (pr->next_fire_percpu != NULL) {
					json_t *f = json_array();
					for (c = 0; c < kvmprof_probes_maxcpus(p); c++)
						if (pr->next_fire_percpu[c]) {
							json_t *cj = json_object();
							json_object_set_new(cj, "cpu", json_integer(c));
							json_object_set_new(cj, "next_fire_ns", json_integer((json_int_t)pr->next_fire_percpu[c]));
							json_array_append_new(f, cj);
						}
					json_object_set_new(r, "percpu", f);
				}
			}
			json_array_append_new(arr, r);
		}
		json_object_set_new(emit_json_root(&em), "probes", arr);
		kvmprof_probes_free(p);
		return emit_finish(&em);
	}
	printf("%5s %-10s %-12s %-16s %-16s %4s %14s %10s  %s\n", "ID", "PROVIDER", "MODULE",
	    "FUNCTION", "NAME", "ON", "INTERVAL(ns)", "HZ", "NEXT FIRE (s since boot)");
	for (i = 0; i < kvmprof_probes_count(p); i++) {
		const struct kvmprof_probe *pr = kvmprof_probes_get(p, i);
		char a[64], b[64], f[128], n[64];

		clean(a, sizeof(a), pr->provider);
		clean(b, sizeof(b), pr->module);
		clean(f, sizeof(f), pr->function);
		clean(n, sizeof(n), pr->name);
		printf("%5u %-10s %-12s %-16s %-16s %4s", pr->id, a, b, f, n, pr->enabled ? "yes" : "no");
		if (pr->is_profile) {
			printf(" %14" PRIu64 " %10.2f ", pr->interval_ns, pr->hz);
			if (pr->enabled && pr->kind)
				printf(" %.6f", pr->next_fire_ns / 1e9);
			if (pr->next_fire_percpu != NULL)
				for (c = 0; c < kvmprof_probes_maxcpus(p); c++)
					if (pr->next_fire_percpu[c])
						printf(" cpu%u:%.6f", c, pr->next_fire_percpu[c] / 1e9);
		}
		printf("\n");
	}
	kvmprof_probes_free(p);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
cmd_profil(kvs_t *kd, const struct opts *o)
{
	struct kvmprof_proc *v;
	size_t n, i;
	char name[128];

	if (wrong_family(kd, o, "FreeBSD", "profil", "FreeBSD processes' profil(2) buffers",
	    "`profile`"))
		return 1;
	if (kvmprof_profil_read(kd, &v, &n) != 0) {
		char e[4 * KVS_ERRBUF_SIZE];
		clean(e, sizeof(e), kvs_geterr(kd));
		fprintf(stderr, "kvmstat: %s\n", e);
		if (o->json)
			json_error("read", kvs_geterr(kd));
		return 1;
	}
	if (o->json) {
		struct emitter em;
		json_t *arr = json_array();
		emit_init(&em, true, stdout);
		for (i = 0; i < n; i++) {
			json_t *r = json_object();
			json_object_set_new(r, "pid", json_integer(v[i].pid));
			json_object_set_new(r, "comm", json_dumpstr(v[i].comm));
			json_object_set_new(r, "pr_base", json_kaddr(v[i].pr_base));
			json_object_set_new(r, "pr_size", json_integer((json_int_t)v[i].pr_size));
			json_object_set_new(r, "pr_off", json_integer((json_int_t)v[i].pr_off));
			json_object_set_new(r, "pr_scale", json_integer((json_int_t)v[i].pr_scale));
			json_array_append_new(arr, r);
		}
		json_object_set_new(emit_json_root(&em), "processes", arr);
		free(v);
		return emit_finish(&em);
	}
	printf("%7s %-20s %18s %10s %10s %10s\n", "PID", "COMMAND", "PR_BASE", "PR_SIZE",
	    "PR_OFF", "PR_SCALE");
	for (i = 0; i < n; i++) {
		clean(name, sizeof(name), v[i].comm);
		printf("%7d %-20s %#18" PRIx64 " %10" PRIu64 " %#10" PRIx64 " %#10" PRIx64 "\n",
		    v[i].pid, name, v[i].pr_base, v[i].pr_size, v[i].pr_off, v[i].pr_scale);
	}
	free(v);
	return 0;
}
