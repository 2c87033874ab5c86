/*
 * cache_internal.h - what the layout cache's two files share: the store of
 * answers (struct kvs_lcache, its entries and keys: cache.c) and the file
 * format (the parser and the writer: cache_file.c).  Private to types/.
 */
#ifndef KVS_CACHE_INTERNAL_H
#define KVS_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "types.h"

#define LC_MAXSTR 4096u

struct lc_ent {
	char *key;                    /* question letter, a, '\x1f', b */
	uint8_t q, status;
	struct kvs_typeinfo ti;       /* type_name owned */
	char *msg;                    /* not found: the message */
	struct kvs_member_info *mem;  /* L: names and type_names owned */
	size_t nmem;
	bool fresh;                   /* not yet on disk */
};

struct kvs_lcache {
	char *dir, *path, *ident;
	struct lc_ent *ent;
	size_t n, cap;
	struct kvs_htab tab;
	size_t nfresh;
	bool warned;
	const struct kvs_notify *note;   /* the handle's */
};

/* FNV-1a 64 over bytes, from h (FNV0 to start): the file's checksum and
 * the identity's content hash. */
static inline uint64_t
fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}
#define FNV0 0xcbf29ce484222325ULL

/* A growing byte buffer: the file being written (nomem: a realloc failed). */
struct wr {
	uint8_t *p;
	size_t n, cap;
	bool nomem;
};

/* ----------------------------------------------- the store (cache.c) */

/* Free what e owns (not e). */
KVS_HIDDEN void lc_ent_free(struct lc_ent *e);
/* Free every entry, empty the table. */
KVS_HIDDEN void lc_store_clear(struct kvs_lcache *c);
/* The key of a question, malloc'ed; NULL on ENOMEM or a name that is never
 * cached (holds the separator, or longer than LC_MAXSTR). */
KVS_HIDDEN char *lc_make_key(char q, const char *a, const char *b);
/* Take e (its allocations) into the store; a key already there keeps its
 * entry and e is freed.  false: ENOMEM (e freed). */
KVS_HIDDEN bool lc_store_add(struct kvs_lcache *c, struct lc_ent *e);

/* ------------------------------------------ the format (cache_file.c) */

/* Parse a cache file's bytes into c (NULL: only check them).  want: the
 * identity the file must have, or NULL for any.  0, or -1 with *why set
 * (c as it was: records are added only once all have decoded). */
KVS_HIDDEN int lc_parse(struct kvs_lcache *c, const uint8_t *buf, size_t len,
    const char *want, char **ident_out, unsigned *nrec_out, const char **why);
/* The whole file for c's entries into w (empty); false: ENOMEM. */
KVS_HIDDEN bool lc_encode(const struct kvs_lcache *c, struct wr *w);

#endif
