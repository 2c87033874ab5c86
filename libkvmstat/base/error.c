/*
 * error.c - status codes and the per-handle message chain.
 *
 * The innermost failure sets the message ("page 0x1000 not in dump"); each
 * layer on the way out prefixes its context ("reading malloc type at
 * 0xffff...: ").  The fault address of the first failed read survives the
 * prefixing so callers can ask for it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static const char *const status_names[KVS_E__COUNT] = {
	[KVS_OK] = "no error",
	[KVS_E_NOMEM] = "out of memory",
	[KVS_E_IO] = "I/O error",
	[KVS_E_FORMAT] = "bad or unknown format",
	[KVS_E_TRUNCATED] = "file truncated",
	[KVS_E_UNMAPPED] = "address not mapped",
	[KVS_E_NOTDUMPED] = "page not in dump",
	[KVS_E_NOSYMBOL] = "symbol not found",
	[KVS_E_NOTYPE] = "type or member not found",
	[KVS_E_DWARF] = "debug information error",
	[KVS_E_MISMATCH] = "kernel does not match dump",
	[KVS_E_DATA] = "inconsistent kernel data",
	[KVS_E_INVAL] = "invalid argument",
	[KVS_E_VERSION] = "unsupported structure version",
};

const char *
kvs_status_str(kvs_status_t st)
{
	if ((unsigned)st >= KVS_E__COUNT)
		return "unknown status";
	return status_names[st];
}

void
kerr_clear(struct kvs_error *e)
{
	e->status = KVS_OK;
	e->fault_valid = false;
	e->fault_addr = 0;
	e->msg[0] = '\0';
}

int
kerr_set(struct kvs_error *e, kvs_status_t st, const char *fmt, ...)
{
	va_list ap;

	e->status = st;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int
kerr_errno(struct kvs_error *e, int errno_val, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	e->status = errno_val == ENOMEM ? KVS_E_NOMEM : KVS_E_IO;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	if (n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(errno_val));
	return -1;
}

int
kerr_push(struct kvs_error *e, const char *fmt, ...)
{
	char ctx[KVS_MSG_MAX], old[KVS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	/* ctx, then ": old" if there was an inner message, truncated to fit. */
	size_t n = strlen(ctx);
	if (n >= sizeof(e->msg))
		n = sizeof(e->msg) - 1;
	memcpy(e->msg, ctx, n);
	e->msg[n] = '\0';
	if (old[0] != '\0' && n + 2 < sizeof(e->msg)) {
		size_t m = strlen(old);
		memcpy(e->msg + n, ": ", 2);
		n += 2;
		if (m > sizeof(e->msg) - 1 - n)
			m = sizeof(e->msg) - 1 - n;
		memcpy(e->msg + n, old, m);
		e->msg[n + m] = '\0';
	}
	if (e->status == KVS_OK)
		e->status = KVS_E_DATA;
	return -1;
}

void
kerr_fault(struct kvs_error *e, uint64_t addr)
{
	if (!e->fault_valid) {
		e->fault_valid = true;
		e->fault_addr = addr;
	}
}
