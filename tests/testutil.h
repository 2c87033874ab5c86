/* testutil.h - helpers shared by the Check suites. */
#ifndef TESTUTIL_H
#define TESTUTIL_H
#include <check.h>
#include <stddef.h>
#include <stdint.h>

/* $KVS_FIXTURES/<rel> in a static buffer (one of 256 rotating: copy a path
 * that must outlive many more calls). */
const char *fixture_path(const char *rel);
/* $KVS_BUILDDIR/<rel>. */
const char *build_path(const char *rel);
/* A fresh private temporary directory (removed at exit). */
const char *test_tmpdir(void);
/* Join dir and name into a static rotating buffer. */
const char *path_join(const char *dir, const char *name);
/* Write len bytes to path (creating/truncating). Returns 0 or -1. */
int write_file(const char *path, const void *buf, size_t len);
/* Read a whole file into a malloc'ed buffer; *len set. NULL on failure. */
void *read_file(const char *path, size_t *len);
/* read_file, then grown with zeros to `size` bytes (room for what a test
 * builds past the end of a fixture image); fails the test when the file is
 * missing or longer.  *len: the file's own length. */
void *read_file_grown(const char *path, size_t size, size_t *len);
/* Copy the first `len` bytes of src into dst (truncated copies for bad-input tests). */
int copy_prefix(const char *src, const char *dst, size_t len);
/* Run a shell command, capture stdout into a malloc'ed string; *status = exit status. */
char *run_capture(const char *cmd, int *status);
/* Run every test of s (CK_NORMAL output) and free the runner: EXIT_SUCCESS
 * when none failed, else EXIT_FAILURE.  A suite that sets up its runner
 * otherwise (fork status, log files) keeps its own. */
int run_suite(Suite *s);

/*
 * Oracles.  The external programs and fixture files each suite checks
 * against are listed per suite in testutil.c (oracle_reqs) and verified
 * before main() runs: a missing one fails the suite.  Only with
 * KVS_ALLOW_MISSING_ORACLES=1 does a missing program skip the suite instead
 * (exit 77, "SKIPPED: <tool> missing" on stderr, named by scripts/test.sh).
 */
/* 1 if name is an executable on $PATH (or an executable path). */
int have_tool(const char *name);
/* 1 if KVS_ALLOW_MISSING_ORACLES=1. */
int oracles_optional(void);
#endif

#include <jansson.h>
/* Load $KVS_FIXTURES/<rel> as JSON (aborts the test on failure). */
json_t *load_truth(const char *rel);
/* A truth number: JSON integer, or "0x..." string for values above INT64_MAX. */
uint64_t jnum(const json_t *v);
/* jnum(json_object_get(o, key)). */
uint64_t jget(const json_t *o, const char *key);

#include "kvmstat.h"
/* Offset of type.member from the kernel's types (aborts the test when the
 * kernel has no such member): for tests that patch kernel structures. */
uint64_t member_off(kvs_t *kd, const char *type, const char *member);
/* The u64 at the kernel address va (fails the test when it cannot be read). */
uint64_t rd64(kvs_t *kd, uint64_t va);
/* Write to dst a copy of the raw image $KVS_FIXTURES/<image> with, for each
 * i < n, the low width[i] bytes (8 when width is NULL) of val[i] at the
 * kernel address va[i], translated through $KVS_FIXTURES/<kernel> and the
 * image (fails the test when one is not in the image). */
void patch_image(const char *kernel, const char *image, const char *dst, const uint64_t *va,
    const uint64_t *val, const size_t *width, size_t n);
