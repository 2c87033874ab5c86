/* source.c - the dump formats a regular file is probed for, in order. */
#include "source.h"

const struct kvs_source_ops *const kvs_source_table[] = {
	&kvs_source_compressed, /* gzip, zstd: a layer, probes the others inside */
	&kvs_source_minidump,
	&kvs_source_elfdump,
	&kvs_source_kdump,
	&kvs_source_raw,        /* accepts anything: last */
};
const size_t kvs_source_count = sizeof(kvs_source_table) / sizeof(kvs_source_table[0]);
