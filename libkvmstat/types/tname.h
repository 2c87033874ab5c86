/*
 * tname.h - the C spelling of a type ("struct x *", "char [32]",
 * "int (*)(int)") is built from the inside out, as a declaration is read:
 * a declarator grows by prefixes ("*") and suffixes ("[32]").  The two
 * string steps, shared by dwarf_tname.c and btf.c so that both spell a type the
 * same way.  A result that would not fit in n bytes leaves buf as it was.
 */
#ifndef KVS_TNAME_H
#define KVS_TNAME_H

#include <stddef.h>
#include <string.h>

static inline void
kvs_tn_prepend(char *buf, size_t n, const char *pre)
{
	size_t lp = strlen(pre), lb = strlen(buf);

	if (lp + lb + 1 > n)
		return; /* too long: keep what we have */
	/* byte by byte from the end: the same as memmove(buf + lp, buf, lb + 1),
	 * which gcc's bounds check misjudges at -O2 with the sanitizers */
	for (size_t i = lb + 1; i-- > 0;)
		buf[i + lp] = buf[i];
	memcpy(buf, pre, lp);
}

static inline void
kvs_tn_append(char *buf, size_t n, const char *s)
{
	size_t lb = strlen(buf), ls = strlen(s);

	if (lb + ls < n)
		memcpy(buf + lb, s, ls + 1);
}

#endif
