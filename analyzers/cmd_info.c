/* cmd_info.c - `kvmstat info`: what the dump is and which kernel it holds. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int
cmd_info(kvs_t *kd, const struct opts *o)
{
	struct kvs_dumpinfo di;
	struct kvs_kernelinfo ki;
	struct emitter e;
	char fmt[64];

	kvs_dumpinfo(kd, &di);
	kvs_kernel_info(kd, &ki);

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
	if (ki.arch != NULL)
		emit_str(&e, "arch", "arch:", ki.arch);
	emit_str(&e, "version", "version:", ki.version);
	if (e.json)
		json_object_set_new(emit_json_root(&e), "panicstr", json_dumpstr(ki.panic));
	else
		emit_str(&e, "panicstr", "panic:", ki.panic ? ki.panic : "none");
	if (ki.ncpus >= 0)
		emit_u64(&e, "ncpus", "cpus:", (uint64_t)ki.ncpus);
	if (ki.maxid >= 0)
		emit_u64(&e, "mp_maxid", "mp_maxid:", (uint64_t)ki.maxid);
	if (di.dwarf_version > 0)
		emit_u64(&e, "dwarf_version", "dwarf:", (uint64_t)di.dwarf_version);
	if (o->stats) {
		uint64_t hits, misses;
		kvs_dump_cache_stats(kd, &hits, &misses);
		emit_u64(&e, "page_cache_hits", "page cache hits:", hits);
		emit_u64(&e, "page_cache_misses", "page cache misses:", misses);
	}
	return emit_finish(&e);
}
