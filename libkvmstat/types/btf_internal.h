/*
 * btf_internal.h - what btf.c (open, type resolution, description, name
 * lookup) shares with btf_members.c (member paths and members lists): the
 * handle and the three steps a member query is built from.  Private to
 * types/.
 */
#ifndef KVS_BTF_INTERNAL_H
#define KVS_BTF_INTERNAL_H

#include <bpf/btf.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "types.h"

/* Guards against malformed (cyclic) type chains, as in dwarf.c. */
#define MAX_TYPE_DEPTH 64

/* String -> small record: the records in a dense array, the library's one
 * hash table (base/hashtab.h) holding index + 1; the keys are the handle's
 * own copies. */
struct sent {
	char *key;
	uint32_t id;        /* names: the type id, 0 = not found */
};

struct smap {
	struct sent *ent;   /* [n], room for cap */
	size_t n, cap;
	struct kvs_htab tab;
};

struct kvs_btf {
	struct btf *btf;
	uint64_t ptr_size;
	struct smap strs;   /* interned type_name strings */
	struct smap names;  /* "kind/fwd/name" -> first such type, or 0 */
};

/* Peel typedefs and qualifiers starting at id (0 = void), and replace a
 * struct/union declaration by its definition when one exists.  *out = the
 * final id (0 = void), *tp its type (NULL for void). */
KVS_HIDDEN int bt_peel(struct kvs_btf *b, uint32_t id, uint32_t *out,
    const struct btf_type **tp, struct kvs_error *e);
/* Fill ti (all but offset and bit-field fields) for the type id. */
KVS_HIDDEN int bt_describe(struct kvs_btf *b, uint32_t id,
    struct kvs_typeinfo *ti, struct kvs_error *e);
/* The C spelling of type id (0: "void"), interned; NULL with e set. */
KVS_HIDDEN const char *bt_name(struct kvs_btf *b, uint32_t id, struct kvs_error *e);
/* The defined type for a type name, or -1 with KVS_E_NOTYPE. */
KVS_HIDDEN int bt_find_type(struct kvs_btf *b, const char *type, uint32_t *id,
    struct kvs_error *e);

#endif
