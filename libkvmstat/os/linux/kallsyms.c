/*
 * kallsyms.c - the kernel's own symbol table, read from memory, for dumps
 * opened without a kernel file.
 *
 * VMCOREINFO names the arrays (SYMBOL(kallsyms_*), since Linux 6.0; before,
 * kallsyms_find.c finds them by their shapes): kallsyms_num_syms
 * (an unsigned int), kallsyms_names (per symbol a length, then that many
 * token numbers), kallsyms_token_table (the tokens, NUL-terminated, back to
 * back) with kallsyms_token_index (256 u16 offsets into it), and the
 * addresses as 32-bit kallsyms_offsets from kallsyms_relative_base.
 *
 * Two encodings are met and told apart by the data, not by the version:
 * - a length byte with its top bit set is the low 7 bits of a two-byte
 *   length, whose second byte holds the bits above (6.1 and later; a plain
 *   byte below 0x80 before and after);
 * - offsets are either unsigned distances above the base, or (absolute
 *   per-CPU symbols, x86_64 SMP) non-negative values that are absolute
 *   addresses and negative ones that count down from base - 1.  Both are
 *   decoded; the one that puts _stext where VMCOREINFO's SYMBOL(_stext)
 *   says wins (without that key, any negative offset means the second).
 * A name's first character is its nm-style type (T t: text, D d B b R r:
 * data, W w V v: weak, A a: absolute).
 *
 * VMCOREINFO's SYMBOL(name)=address lines join the table (kallsyms wins
 * where both name a symbol): a kernel without CONFIG_KALLSYMS_ALL names no
 * data in kallsyms, and those lines are what it has (nodata.c).
 */
#include <elf.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "linux.h"

#define KALLSYMS_MAX_SYMS (4u << 20)
#define KALLSYMS_MAX_NAMES (64u << 20)
#define TOKEN_TABLE_MAX 65536
#define NAME_MAX_LEN 1024

static const char *const keys[] = {
	"SYMBOL(kallsyms_num_syms)", "SYMBOL(kallsyms_names)", "SYMBOL(kallsyms_token_table)",
	"SYMBOL(kallsyms_token_index)", "SYMBOL(kallsyms_offsets)",
	"SYMBOL(kallsyms_relative_base)",
};
enum { K_NUM, K_NAMES, K_TTAB, K_TIDX, K_OFFS, K_BASE, K_COUNT };

struct blob {
	char *p;
	size_t len, cap;
};

static int
blob_add(struct blob *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : (1u << 20);
		char *np;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

static void *
read_array(kvs_t *kd, uint64_t va, size_t len, const char *what)
{
	void *b = malloc(len ? len : 1);

	if (b == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "kallsyms: out of memory for %s", what);
		return NULL;
	}
	if (linux_image_read(kd, va, b, len) != 0) {
		kerr_push(&kd->err, "kallsyms: reading %s (%zu bytes at 0x%llx)", what, len,
		    (unsigned long long)va);
		free(b);
		return NULL;
	}
	return b;
}

static unsigned char
sym_type(char c)
{
	switch (c) {
	case 't': case 'T': case 'w': case 'W':
		return STT_FUNC;
	case 'd': case 'D': case 'b': case 'B': case 'r': case 'R': case 'v': case 'V':
	case 'g': case 'G': case 's': case 'S':
		return STT_OBJECT;
	default:
		return STT_NOTYPE;
	}
}

static unsigned char
sym_bind(char c)
{
	if (c == 'w' || c == 'W' || c == 'v' || c == 'V')
		return STB_WEAK;
	return c >= 'A' && c <= 'Z' ? STB_GLOBAL : STB_LOCAL;
}

/* VMCOREINFO's symbols that kallsyms (defs[0..num), names at nameoff in
 * nb) lacks, after them: *total in all.  Addresses are run-time ones,
 * kept at link addresses as kallsyms' are. */
static int
add_vmcoreinfo(kvs_t *kd, struct kvs_symdef *defs, size_t *nameoff, size_t num,
    struct blob *nb, size_t *total)
{
	const char *vp = linux_vmcoreinfo_text(kd);
	char vn[128];
	uint64_t va, stext = 0;
	size_t n = num, i;

	/* A line whose value lies below the image is no symbol's address but
	 * a pointer's value (SYMBOL(mem_section) of SPARSEMEM_EXTREME gives
	 * the array the pointer holds, in the direct map): not a symbol. */
	linux_vi_u64(kd, "SYMBOL(_stext)", 16, &stext);
	while ((vp = linux_vi_symbol_next(vp, vn, sizeof(vn), &va)) != NULL) {
		size_t vl = strlen(vn);
		if (va < stext)
			continue;
		for (i = 0; i < num; i++)
			if (strncmp(nb->p + nameoff[i], vn, vl + 1) == 0)
				break;
		if (i < num)
			continue;
		if (kd->slide != 0 && va >= kd->slide_min && va - kd->slide >= kd->slide_min)
			va -= kd->slide;
		nameoff[n] = nb->len;
		if (blob_add(nb, vn, vl + 1) != 0)
			return kerr_set(&kd->err, KVS_E_NOMEM, "kallsyms: out of memory");
		defs[n].value = va;
		defs[n].type = STT_NOTYPE;
		defs[n].bind = STB_GLOBAL;
		n++;
	}
	*total = n;
	return 0;
}

int
linux_kallsyms_load(kvs_t *kd, struct kvs_symtab **out)
{
	uint64_t a[K_COUNT], base, stext_want = 0, stext_abs = 0, stext_rel = 0;
	uint32_t num;
	int32_t *offs = NULL;
	uint16_t tidx[256];
	uint8_t *names = NULL;
	char *ttab = NULL, name[NAME_MAX_LEN + 1];
	struct kvs_symdef *defs = NULL;
	struct blob nb = { NULL, 0, 0 };
	size_t *nameoff = NULL, ttab_len, names_len, pos, i, k, negatives = 0, nvi = 0, total = 0;
	bool have_stext_want, absolute_percpu;
	int rc = -1;

	for (k = 0; k < K_COUNT; k++)
		if (!linux_vi_u64(kd, keys[k], 16, &a[k]))
			break;
	/* Kernels before 6.0 do not name the tables: found by their shapes. */
	if (k < K_COUNT && linux_kallsyms_find(kd, a) != 0)
		return -1;
	have_stext_want = linux_vi_u64(kd, "SYMBOL(_stext)", 16, &stext_want);
	if (linux_image_read(kd, a[K_NUM], &num, sizeof(num)) != 0 ||
	    linux_image_read(kd, a[K_BASE], &base, sizeof(base)) != 0 ||
	    linux_image_read(kd, a[K_TIDX], tidx, sizeof(tidx)) != 0)
		return kerr_push(&kd->err, "kallsyms: reading its header words");
	num = le32toh(num);
	base = le64toh(base);
	if (num == 0 || num > KALLSYMS_MAX_SYMS)
		return kerr_set(&kd->err, KVS_E_DATA, "kallsyms_num_syms is %u: not a symbol "
		    "count (at most %u)", num, KALLSYMS_MAX_SYMS);
	/* The token table ends where the index begins in every layout met;
	 * otherwise read what the largest offset needs. */
	ttab_len = 0;
	for (k = 0; k < 256; k++) {
		tidx[k] = le16toh(tidx[k]);
		if (tidx[k] > ttab_len)
			ttab_len = tidx[k];
	}
	ttab_len += 256;
	if (a[K_TIDX] > a[K_TTAB] && a[K_TIDX] - a[K_TTAB] < TOKEN_TABLE_MAX &&
	    a[K_TIDX] - a[K_TTAB] > ttab_len - 256)
		ttab_len = (size_t)(a[K_TIDX] - a[K_TTAB]);
	if (ttab_len > TOKEN_TABLE_MAX)
		return kerr_set(&kd->err, KVS_E_DATA, "kallsyms_token_index points %zu bytes "
		    "into the token table: implausible", ttab_len);
	/* The names end before the token table (markers lie between). */
	if (a[K_TTAB] <= a[K_NAMES] || a[K_TTAB] - a[K_NAMES] > KALLSYMS_MAX_NAMES)
		return kerr_set(&kd->err, KVS_E_DATA, "kallsyms_names at 0x%llx and "
		    "kallsyms_token_table at 0x%llx: the names' extent is implausible",
		    (unsigned long long)a[K_NAMES], (unsigned long long)a[K_TTAB]);
	names_len = (size_t)(a[K_TTAB] - a[K_NAMES]);
	if ((ttab = read_array(kd, a[K_TTAB], ttab_len + 1, "kallsyms_token_table")) == NULL ||
	    (names = read_array(kd, a[K_NAMES], names_len, "kallsyms_names")) == NULL ||
	    (offs = read_array(kd, a[K_OFFS], (size_t)num * 4, "kallsyms_offsets")) == NULL)
		goto out;
	ttab[ttab_len] = '\0';
	{
		char vn[128];
		uint64_t va;
		const char *vp = linux_vmcoreinfo_text(kd);
		while ((vp = linux_vi_symbol_next(vp, vn, sizeof(vn), &va)) != NULL)
			nvi++;
	}
	defs = calloc(num + nvi, sizeof(*defs));
	nameoff = calloc(num + nvi, sizeof(*nameoff));
	if (defs == NULL || nameoff == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "kallsyms: out of memory");
		goto out;
	}
	for (i = 0, pos = 0; i < num; i++) {
		size_t len, n = 0;
		if (pos >= names_len)
			goto corrupt;
		len = names[pos++];
		if (len & 0x80) {
			if (pos >= names_len)
				goto corrupt;
			len = (len & 0x7f) | ((size_t)names[pos++] << 7);
		}
		if (len == 0 || pos + len > names_len)
			goto corrupt;
		for (k = 0; k < len; k++) {
			const char *t = ttab + tidx[names[pos + k]];
			size_t tl = strlen(t);
			if (n + tl > NAME_MAX_LEN)
				goto corrupt;
			memcpy(name + n, t, tl);
			n += tl;
		}
		pos += len;
		if (n < 2)
			goto corrupt;
		nameoff[i] = nb.len;
		if (blob_add(&nb, name + 1, n - 1) != 0 || blob_add(&nb, "", 1) != 0) {
			kerr_set(&kd->err, KVS_E_NOMEM, "kallsyms: out of memory");
			goto out;
		}
		defs[i].type = sym_type(name[0]);
		defs[i].bind = sym_bind(name[0]);
		offs[i] = (int32_t)le32toh((uint32_t)offs[i]);
		if (offs[i] < 0)
			negatives++;
		if (n - 1 == 6 && memcmp(name + 1, "_stext", 6) == 0) {
			stext_abs = offs[i] >= 0 ? (uint64_t)offs[i] : base - 1 - (uint64_t)(int64_t)offs[i];
			stext_rel = base + (uint32_t)offs[i];
		}
	}
	if (have_stext_want && stext_want == stext_abs)
		absolute_percpu = true;
	else if (have_stext_want && stext_want == stext_rel)
		absolute_percpu = false;
	else if (have_stext_want) {
		kerr_set(&kd->err, KVS_E_DATA, "kallsyms decodes _stext at 0x%llx or 0x%llx, "
		    "VMCOREINFO says 0x%llx: not a kallsyms layout this reader knows",
		    (unsigned long long)stext_abs, (unsigned long long)stext_rel,
		    (unsigned long long)stext_want);
		goto out;
	} else
		absolute_percpu = negatives > 0;
	for (i = 0; i < num; i++) {
		uint64_t v;
		if (!absolute_percpu)
			v = base + (uint32_t)offs[i];
		else if (offs[i] >= 0)
			v = (uint64_t)offs[i];
		else
			v = base - 1 - (uint64_t)(int64_t)offs[i];
		/* Stored at link addresses, as a kernel file's are: the handle
		 * adds the slide back. */
		if (kd->slide != 0 && v >= kd->slide_min && v - kd->slide >= kd->slide_min)
			v -= kd->slide;
		defs[i].value = v;
	}
	if (add_vmcoreinfo(kd, defs, nameoff, num, &nb, &total) != 0)
		goto out;
	for (i = 0; i < total; i++)
		defs[i].name = nb.p + nameoff[i];
	rc = kvs_symtab_from_list(out, nb.p, defs, total, &kd->err);
	nb.p = NULL;
	goto out;
corrupt:
	kerr_set(&kd->err, KVS_E_DATA, "kallsyms_names is corrupt at symbol %zu of %u "
	    "(byte %zu of %zu)", i, num, pos, names_len);
out:
	free(nb.p);
	free(defs);
	free(nameoff);
	free(offs);
	free(names);
	free(ttab);
	return rc;
}
