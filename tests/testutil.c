#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char rot[256][4096];
static unsigned rot_i;

static char *
next_buf(void)
{
	return rot[rot_i++ % 256];
}

const char *
path_join(const char *dir, const char *name)
{
	char *b = next_buf();
	snprintf(b, 4096, "%s/%s", dir, name);
	return b;
}

const char *
fixture_path(const char *rel)
{
	const char *d = getenv("KVS_FIXTURES");
	return path_join(d ? d : "fixtures/cores", rel);
}

const char *
build_path(const char *rel)
{
	const char *d = getenv("KVS_BUILDDIR");
	return path_join(d ? d : "build", rel);
}

static char tmpdir[256];

static void
rm_tmpdir(void)
{
	char cmd[300];
	if (tmpdir[0] != '\0' && getenv("KVS_KEEP_TMP") == NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
}

const char *
test_tmpdir(void)
{
	if (tmpdir[0] == '\0') {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/kvstest.XXXXXX");
		if (mkdtemp(tmpdir) == NULL) {
			perror("mkdtemp");
			abort();
		}
		atexit(rm_tmpdir);
	}
	return tmpdir;
}

int
write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	if (len > 0 && fwrite(buf, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

void *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *nb;
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int
copy_prefix(const char *src, const char *dst, size_t len)
{
	size_t n;
	char *b = read_file(src, &n);
	int rc;
	if (b == NULL)
		return -1;
	rc = write_file(dst, b, len < n ? len : n);
	free(b);
	return rc;
}

char *
run_capture(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;
	int st;

	if (p == NULL)
		return NULL;
	for (;;) {
		if (n + 4096 > cap) {
			char *nb;
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (nb == NULL)
				break;
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, p);
		n += r;
		if (r == 0)
			break;
	}
	st = pclose(p);
	if (buf != NULL)
		buf[n] = '\0';
	if (status != NULL)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

json_t *
load_truth(const char *rel)
{
	json_error_t err;
	json_t *j = json_load_file(fixture_path(rel), 0, &err);

	if (j == NULL) {
		fprintf(stderr, "%s: %s (line %d)\n", rel, err.text, err.line);
		abort();
	}
	return j;
}

uint64_t
jnum(const json_t *v)
{
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 0);
	fprintf(stderr, "truth value is not a number\n");
	abort();
}

uint64_t
jget(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL) {
		fprintf(stderr, "truth has no '%s'\n", key);
		abort();
	}
	return jnum(v);
}
