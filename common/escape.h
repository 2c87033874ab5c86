/*
 * escape.h - what kvmstat and kvmtop share: nothing read from a dump reaches
 * a terminal raw.
 */
#ifndef KVS_COMMON_ESCAPE_H
#define KVS_COMMON_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Terminal-safe copy of untrusted bytes: control characters, C1 controls and
 * invalid UTF-8 become \xNN escapes.  keep_newlines keeps '\n' and '\t'.
 * Stops at the first NUL or after srclen bytes.  Returns dst (always
 * NUL-terminated; truncated to dstlen).  4 * srclen + 1 bytes always fit. */
char *sanitize(char *dst, size_t dstlen, const char *src, size_t srclen, bool keep_newlines);
/* For a JSON string: valid UTF-8, control characters included, is kept (the
 * encoder escapes them as \u001b); only bytes that are not UTF-8 become \xNN
 * text.  Same sizes and stopping rule as sanitize(). */
char *sanitize_json(char *dst, size_t dstlen, const char *src, size_t srclen);
/* Write sanitized bytes to f, skipping NULs (message buffers are NUL-padded). */
void fput_sanitized(FILE *f, const char *src, size_t len, bool keep_newlines);

#endif
