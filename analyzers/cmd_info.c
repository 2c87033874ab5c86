/* cmd_info.c - `kvmstat info`: what the dump is and which kernel it holds. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int
read_int_sym(kvs_t *kd, const char *name, int64_t *v)
{
	uint64_t addr;
	int32_t x;

	if (kvs_symbol(kd, name, &addr, NULL) != 0 || kvs_read(kd, addr, &x, sizeof(x)) != 0)
		return -1;
	*v = x;
	return 0;
}

int
cmd_info(kvs_t *kd, const struct opts *o)
{
	struct kvs_dumpinfo di;
	struct emitter e;
	char version[512], panic[512], fmt[64];
	uint64_t addr, ptr;
	int64_t ncpus = -1, maxid = -1;
	int have_version = 0, have_panic = 0;

	kvs_dumpinfo(kd, &di);
	if (kvs_symbol(kd, "version", &addr, NULL) == 0 &&
	    kvs_read_string(kd, addr, version, sizeof(version), NULL) >= 0) {
		version[strcspn(version, "\n")] = '\0';
		have_version = 1;
	}
	if (kvs_symbol(kd, "panicstr", &addr, NULL) == 0 &&
	    kvs_read(kd, addr, &ptr, sizeof(ptr)) == 0 && ptr != 0 &&
	    kvs_read_string(kd, ptr, panic, sizeof(panic), NULL) >= 0)
		have_panic = 1;
	read_int_sym(kd, "mp_ncpus", &ncpus);
	read_int_sym(kd, "mp_maxid", &maxid);

	emit_init(&e, o->json, stdout);
	emit_str(&e, "dump", "dump:", di.path);
	emit_str(&e, "kernel", "kernel:", di.kernel);
	if (di.format_version != 0)
		snprintf(fmt, sizeof(fmt), "%s v%u", di.format, di.format_version);
	else
		snprintf(fmt, sizeof(fmt), "%s", di.format);
	if (e.json) {
		emit_str(&e, "format", "format:", di.format);
		if (di.format_version != 0)
			emit_u64(&e, "format_version", "", di.format_version);
	} else
		emit_str(&e, "format", "format:", fmt);
	emit_u64(&e, "page_size", "page size:", di.page_size);
	emit_u64(&e, "dumped_pages", "dumped pages:", di.dumped_pages);
	if (!di.live)
		emit_u64(&e, "file_bytes", "file bytes:", di.source_bytes);
	emit_str(&e, "version", "version:", have_version ? version : NULL);
	if (e.json)
		json_object_set_new(emit_json_root(&e), "panicstr",
		    have_panic ? json_string(sanitize(version, sizeof(version), panic,
		    strlen(panic), true)) : json_null());
	else
		emit_str(&e, "panicstr", "panic:", have_panic ? panic : "none");
	if (ncpus >= 0)
		emit_u64(&e, "ncpus", "cpus:", (uint64_t)ncpus);
	if (maxid >= 0)
		emit_u64(&e, "mp_maxid", "mp_maxid:", (uint64_t)maxid);
	if (di.dwarf_version > 0)
		emit_u64(&e, "dwarf_version", "dwarf:", (uint64_t)di.dwarf_version);
	return emit_finish(&e);
}
