/*
 * check_compressed.c - dumps as savecore -z leaves them (source/compressed.c).
 *
 * The fixture dumps are compressed here, at test time, by Debian's own gzip
 * and zstd (the oracles: testutil.c requires them), in every shape the layer
 * handles: one gzip member, several members, a zstd frame with its size (the
 * frame index), a zstd stream without it (decompressed once to a temporary
 * file), many small zstd frames.  kvmstat's output on each must be the
 * uncompressed dump's output, byte for byte (the dump's path aside).
 * Random reads through the layer equal the original bytes, and truncated,
 * corrupt and not-a-dump inputs fail with messages that say so.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvs_private.h"
#include "testutil.h"

static void
sh(const char *fmt, const char *a, const char *b)
{
	char cmd[8192];
	int st;

	snprintf(cmd, sizeof(cmd), fmt, a, b, a, b);
	st = system(cmd);
	ck_assert_msg(st == 0, "'%s' failed (%d)", cmd, st);
}

/* kvmstat's output (stdout and stderr) with the dump's path replaced. */
static char *
kvmstat(const char *kernel, const char *core, const char *args, int *status)
{
	char cmd[8192], *out, *p;
	size_t n = strlen(core);

	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s %s 2>&1", build_path("analyzers/kvmstat"), kernel,
	    core, args);
	out = run_capture(cmd, status);
	ck_assert_ptr_nonnull(out);
	while ((p = strstr(out, core)) != NULL) {
		memcpy(p, "CORE", 4);
		memmove(p + 4, p + n, strlen(p + n) + 1);
	}
	return out;
}

/* Every compressed shape of `dump` gives kvmstat's output on the dump for
 * each command. */
static void
same_output(const char *kernel_rel, const char *dump_rel, const char *const *cmds)
{
	char kernel[1024], dump[1024], z[7][1024];
	const char *dir = test_tmpdir();
	static const char *const shapes[] = {
		"gzip -c %s > %s",
		/* Two members: the halves, each gzipped. */
		"f=%s; o=%s; n=$(( $(stat -c %%s $f) / 2 )); head -c $n $f | gzip -c > $o; "
		    "tail -c +$((n + 1)) $f | gzip -c >> $o",
		"gzip -1 -c %s > %s",
		"zstd -q -c %s > %s",                        /* one frame, size stated */
		"zstd -q -c < %s > %s",                      /* size unknown: decompressed once */
		/* 256 KiB frames, each with its size: the frame index. */
		"f=%s; o=%s; : > $o; s=$(stat -c %%s $f); i=0; while [ $((i * 262144)) -lt $s ]; do "
		    "dd if=$f bs=262144 skip=$i count=1 of=$o.r 2>/dev/null; zstd -q -c $o.r >> $o; "
		    "i=$((i + 1)); done; rm -f $o.r",
		"zstd -q --no-check -6 -c %s > %s",
	};
	size_t i, k;

	snprintf(kernel, sizeof(kernel), "%s", fixture_path(kernel_rel));
	snprintf(dump, sizeof(dump), "%s", fixture_path(dump_rel));
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "shape%zu.%s", i, i < 3 ? "gz" : "zst");
		snprintf(z[i], sizeof(z[i]), "%s", path_join(dir, name));
		sh(shapes[i], dump, z[i]);
	}
	for (k = 0; cmds[k] != NULL; k++) {
		int st0;
		char *want = kvmstat(kernel, dump, cmds[k], &st0);
		ck_assert_msg(st0 == 0, "kvmstat %s on %s failed: %s", cmds[k], dump_rel, want);
		for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			int st;
			char *got = kvmstat(kernel, z[i], cmds[k], &st);
			ck_assert_msg(st == 0 && strcmp(got, want) == 0,
			    "kvmstat %s on %s, compressed as '%s' (exit %d):\n%.1500s\nwant:\n%.1500s", cmds[k],
			    dump_rel, shapes[i], st, got, want);
			free(got);
		}
		free(want);
	}
}

START_TEST(minidump_same_output)
{
	static const char *const cmds[] = { "malloc", "zone", "info", "dmesg", NULL };
	same_output("fbsd14/kernel", "fbsd14/vmcore.minidump3", cmds);
}
END_TEST

START_TEST(minidump_v1_same_output)
{
	static const char *const cmds[] = { "malloc", "info", NULL };
	same_output("fbsd14/kernel", "fbsd14/vmcore.minidump1", cmds);
}
END_TEST

START_TEST(elf_same_output)
{
	static const char *const cmds[] = { "malloc", "zone", "info", NULL };
	same_output("fbsd14/kernel", "fbsd14/vmcore.elf", cmds);
	same_output("fbsd14/kernel", "fbsd14/vmcore.kva.elf", cmds);
}
END_TEST

START_TEST(linux_same_output)
{
	static const char *const cmds[] = { "slab", "info", NULL };
	same_output("linux-kaslr/vmlinux", "linux-nokaslr/vmcore", cmds);
}
END_TEST

START_TEST(raw_same_output)
{
	static const char *const cmds[] = { "--raw malloc", "--raw zone", NULL };
	same_output("fbsd14/kernel", "fbsd14/mem.raw", cmds);
}
END_TEST

/*
 * Random reads through the layer (raw inside, so a physical address is an
 * offset of the stream) equal the original bytes: 24 MiB of mixed data
 * (runs, text, noise), so gzip has many restart points and the cache and
 * the live stream are both exercised, forwards and backwards; most of it
 * repeats what lies 20,000 bytes back.
 */
START_TEST(random_reads)
{
	const char *dir = test_tmpdir();
	char orig[1024], gz[1024], zs[1024];
	size_t len = 24u << 20, i;
	uint8_t *data = malloc(len), *buf = malloc(1 << 20);
	uint64_t x = 88172645463325252ULL;
	const char *files[2];
	size_t f;

	snprintf(orig, sizeof(orig), "%s", path_join(dir, "mixed.bin"));
	snprintf(gz, sizeof(gz), "%s", path_join(dir, "mixed.bin.gz"));
	snprintf(zs, sizeof(zs), "%s", path_join(dir, "mixed.bin.zst"));
	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* 64 KiB regions: zeros, a repeating text, or noise; past the
		 * first 20,000 bytes, 15 KiB of every 16 KiB repeat what lies
		 * 20,000 back, so matches reach deep into the 32 KiB window a
		 * gzip restart point must restore in order, and a wrong byte
		 * there carries on to the end. */
		if (i >= 20000 && i % 16384 >= 1024)
			data[i] = data[i - 20000];
		else switch ((i >> 16) % 3) {
		case 0: data[i] = 0; break;
		case 1: data[i] = (uint8_t)("kernel memory "[i % 14]); break;
		default: data[i] = (uint8_t)x; break;
		}
	}
	ck_assert_int_eq(write_file(orig, data, len), 0);
	sh("gzip -c %s > %s", orig, gz);
	sh("zstd -q -c < %s > %s", orig, zs);
	files[0] = gz;
	files[1] = zs;
	for (f = 0; f < 2; f++) {
		struct kvs_open_args a;
		struct kvs_error e;
		struct stat st;
		void *priv = NULL, *map;
		int fd = open(files[f], O_RDONLY);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(fstat(fd, &st), 0);
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		ck_assert(map != MAP_FAILED);
		memset(&a, 0, sizeof(a));
		memset(&e, 0, sizeof(e));
		a.path = files[f];
		a.fd = fd;
		a.st = &st;
		a.map = map;
		a.map_len = (uint64_t)st.st_size;
		a.flags = KVS_O_RAW;
		ck_assert_msg(kvs_source_compressed.open(&a, &priv, &e) == 0, "%s: %s", files[f], e.msg);
		for (i = 0; i < 400; i++) {
			uint64_t off, n;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			n = 1 + x % (i % 7 == 0 ? (1u << 20) : 5000);
			off = (x >> 20) % (len - n);
			if (i % 5 == 4)                     /* sequential runs too */
				off = (off / 4096) * 4096;
			ck_assert_msg(kvs_source_compressed.read_phys(priv, off, buf, n, &e) == 0,
			    "read 0x%llx+%llu: %s", (unsigned long long)off, (unsigned long long)n, e.msg);
			ck_assert_msg(memcmp(buf, data + off, n) == 0, "%s: bytes differ at 0x%llx+%llu",
			    files[f], (unsigned long long)off, (unsigned long long)n);
		}
		/* The last byte reads; one past it is an error naming the offset. */
		ck_assert_int_eq(kvs_source_compressed.read_phys(priv, len - 1, buf, 1, &e), 0);
		ck_assert_int_eq(buf[0], data[len - 1]);
		ck_assert_int_ne(kvs_source_compressed.read_phys(priv, len - 1, buf, 2, &e), 0);
		ck_assert_msg(strstr(e.msg, "0x1800000") != NULL, "%s", e.msg);
		kvs_source_compressed.close(priv);
		munmap(map, (size_t)st.st_size);
		close(fd);
	}
	free(data);
	free(buf);
}
END_TEST

/* kvmstat on a broken compressed file: non-zero exit, and the message. */
static void
fails_with(const char *kernel_rel, const char *core, const char *cmd, const char *const *want)
{
	char kernel[1024];
	int st, i;
	char *out;

	snprintf(kernel, sizeof(kernel), "%s", fixture_path(kernel_rel));
	out = kvmstat(kernel, core, cmd, &st);
	ck_assert_msg(st != 0, "kvmstat %s on %s succeeded:\n%s", cmd, core, out);
	for (i = 0; want[i] != NULL; i++)
		ck_assert_msg(strstr(out, want[i]) != NULL, "kvmstat %s on %s: no '%s' in:\n%s", cmd,
		    core, want[i], out);
	free(out);
}

START_TEST(broken_inputs)
{
	const char *dir = test_tmpdir();
	char md[1024], lx[1024], readme[1024], p[16][1024];
	static const char *const names[] = { "md.gz", "md.trunc.gz", "md.bad.gz", "lx.gz", "lx.trunc.gz",
		"lx.bad.gz", "readme.gz", "readme.zst", "lx.zst", "lx.trunc.zst", "lx.bad.zst",
		"lx.stream.zst", "lx.stream.trunc.zst", "empty.gz" };
	size_t i;

	snprintf(md, sizeof(md), "%s", fixture_path("fbsd14/vmcore.minidump3"));
	snprintf(lx, sizeof(lx), "%s", fixture_path("linux-nokaslr/vmcore"));
	snprintf(readme, sizeof(readme), "%s/README.md", getenv("KVS_SRCDIR"));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		snprintf(p[i], sizeof(p[i]), "%s", path_join(dir, names[i]));
	sh("gzip -c %s > %s", md, p[0]);
	sh("f=%s; o=%s; head -c $(( $(stat -c %%s $f) / 2 )) $f > $o", p[0], p[1]);
	/* Corrupt: bytes in the middle of the deflate data overwritten. */
	sh("cp %s %s", p[0], p[2]);
	sh("f=%s; o=%s; printf '\\377\\377\\377\\377\\377\\377\\377\\377' | dd of=$o bs=1 "
	    "seek=$(( $(stat -c %%s $f) / 3 )) conv=notrunc 2>/dev/null", p[0], p[2]);
	sh("gzip -c %s > %s", lx, p[3]);
	sh("f=%s; o=%s; head -c $(( $(stat -c %%s $f) / 2 )) $f > $o", p[3], p[4]);
	sh("cp %s %s", p[3], p[5]);
	sh("f=%s; o=%s; printf '\\377\\377\\377\\377\\377\\377\\377\\377' | dd of=$o bs=1 "
	    "seek=$(( $(stat -c %%s $f) / 3 )) conv=notrunc 2>/dev/null", p[3], p[5]);
	sh("gzip -c %s > %s", readme, p[6]);
	sh("zstd -q -c %s > %s", readme, p[7]);
	sh("zstd -q -c %s > %s", lx, p[8]);
	sh("f=%s; o=%s; head -c $(( $(stat -c %%s $f) / 2 )) $f > $o", p[8], p[9]);
	sh("cp %s %s", p[8], p[10]);
	sh("f=%s; o=%s; printf '\\377\\377\\377\\377\\377\\377\\377\\377' | dd of=$o bs=1 "
	    "seek=$(( $(stat -c %%s $f) / 3 )) conv=notrunc 2>/dev/null", p[8], p[10]);
	sh("zstd -q -c < %s > %s", lx, p[11]);
	sh("f=%s; o=%s; head -c $(( $(stat -c %%s $f) / 2 )) $f > $o", p[11], p[12]);
	sh("printf '' | gzip -c > %s%s", p[13], "");

	{
		static const char *const w0[] = { "gzip file is truncated", "compressed byte",
			"minidump truncated", NULL };
		fails_with("fbsd14/kernel", p[1], "malloc", w0);
	}
	{
		static const char *const w[] = { "gzip data corrupt at compressed byte", NULL };
		fails_with("fbsd14/kernel", p[2], "malloc", w);
		fails_with("linux-kaslr/vmlinux", p[5], "slab", w);
	}
	{
		static const char *const w[] = { "gzip file is truncated", "past end of file", NULL };
		fails_with("linux-kaslr/vmlinux", p[4], "slab", w);
	}
	{
		static const char *const w[] = { "gzip-compressed file, but what it holds", "not a dump",
			NULL };
		fails_with("fbsd14/kernel", p[6], "malloc", w);
	}
	{
		static const char *const w[] = { "zstd-compressed file, but what it holds", "not a dump",
			NULL };
		fails_with("fbsd14/kernel", p[7], "malloc", w);
	}
	{
		static const char *const w[] = { "zstd file is truncated", "past end of file", NULL };
		fails_with("linux-kaslr/vmlinux", p[9], "slab", w);
		fails_with("linux-kaslr/vmlinux", p[12], "slab", w);
	}
	{
		static const char *const w[] = { "zstd", "corrupt", NULL };
		fails_with("linux-kaslr/vmlinux", p[10], "slab", w);
	}
	{
		static const char *const w[] = { "gzip-compressed file, but what it holds (0x0 bytes)", NULL };
		fails_with("fbsd14/kernel", p[13], "malloc", w);
	}
	/* The evidence is untouched: the compressed file is read, never written. */
	{
		char cmd[2048], *a, *b;
		snprintf(cmd, sizeof(cmd), "sha256sum %s", p[0]);
		a = run_capture(cmd, NULL);
		free(kvmstat(fixture_path("fbsd14/kernel"), p[0], "malloc", NULL));
		b = run_capture(cmd, NULL);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("compressed");
	TCase *tc = tcase_create("compressed");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, minidump_same_output);
	tcase_add_test(tc, minidump_v1_same_output);
	tcase_add_test(tc, elf_same_output);
	tcase_add_test(tc, linux_same_output);
	tcase_add_test(tc, raw_same_output);
	tcase_add_test(tc, random_reads);
	tcase_add_test(tc, broken_inputs);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
