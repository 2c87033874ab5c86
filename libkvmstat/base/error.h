/*
 * error.h - the status + message chain every layer reports through
 * (error.c).  Lower layers fill a struct kvs_error; the handle owns one.
 */
#ifndef KVS_ERROR_H
#define KVS_ERROR_H

#include <stdbool.h>
#include <stdint.h>

#include "kvmstat.h"

#define KVS_HIDDEN __attribute__((visibility("hidden")))

#define KVS_MSG_MAX 1024

/* Private status used by source probes: "this file is not my format". */
#define KVS_NOTMINE (-2)

struct kvs_error {
	kvs_status_t status;
	bool fault_valid;
	uint64_t fault_addr;
	char msg[KVS_MSG_MAX];
};

/* Clear the error (done at every public entry). */
KVS_HIDDEN void kerr_clear(struct kvs_error *e);
/* Set the innermost error; returns -1 so callers can `return kerr_set(...)`. */
KVS_HIDDEN int kerr_set(struct kvs_error *e, kvs_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, appending ": strerror(errno_val)". */
KVS_HIDDEN int kerr_errno(struct kvs_error *e, int errno_val, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix context to the chain: "context: previous message". Returns -1. */
KVS_HIDDEN int kerr_push(struct kvs_error *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Record the faulting address of a failed read (kept by kerr_push). */
KVS_HIDDEN void kerr_fault(struct kvs_error *e, uint64_t addr);

#endif
