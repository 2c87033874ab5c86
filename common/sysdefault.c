/*
 * sysdefault.c - the running system's kernel, and the bundled demo dump.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __FreeBSD__
#include <sys/types.h>
#include <sys/sysctl.h>
#endif

#include "sysdefault.h"

static int
exists(const char *p)
{
	return access(p, R_OK) == 0;
}

int
sys_default_kernel(char *buf, size_t len)
{
#ifdef __FreeBSD__
	char boot[PATH_MAX];
	size_t bl = sizeof(boot);

	if (sysctlbyname("kern.bootfile", boot, &bl, NULL, 0) != 0 || bl == 0)
		snprintf(boot, sizeof(boot), "/boot/kernel/kernel");
	if (exists(boot)) {
		snprintf(buf, len, "%s", boot);
		return 0;
	}
	snprintf(buf, len, "no -N kernel given and the booted kernel %s cannot be read; "
	    "give -N, or --demo for the bundled demo dump", boot);
	return -1;
#else
	/* Linux: the booted kernel's vmlinux with symbols, where Debian's
	 * -dbg packages, distributions and kernel builds put it.  The
	 * compressed /boot/vmlinuz has no symbols and is no use; the BTF in
	 * /sys/kernel/btf/vmlinux carries types but no symbol table. */
	static const char *const where[] = {
		"/usr/lib/debug/boot/vmlinux-%s",
		"/boot/vmlinux-%s",
		"/usr/lib/debug/lib/modules/%s/vmlinux",
		"/lib/modules/%s/build/vmlinux",
	};
	struct utsname u;
	char p[PATH_MAX];
	size_t i;

	if (uname(&u) != 0) {
		snprintf(buf, len, "no -N kernel given and uname failed; give -N, or --demo "
		    "for the bundled demo dump");
		return -1;
	}
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(p, sizeof(p), where[i], u.release);
		if (exists(p)) {
			snprintf(buf, len, "%s", p);
			return 0;
		}
	}
	snprintf(buf, len, "no -N kernel given and no vmlinux with symbols found for the "
	    "running kernel %s (looked in /usr/lib/debug/boot/vmlinux-%s and /boot/vmlinux-%s; "
	    "Debian: apt-get install linux-image-%s-dbg; /sys/kernel/btf/vmlinux has types "
	    "but no symbols); give -N, or --demo for the bundled demo dump", u.release,
	    u.release, u.release, u.release);
	return -1;
#endif
}

/* Fill kernel/core from dir when both files are there. */
static int
try_dir(const char *dir, char *kernel, char *core, size_t len)
{
	char k[PATH_MAX + 32], c[PATH_MAX + 32], rk[PATH_MAX], rc[PATH_MAX];

	snprintf(k, sizeof(k), "%s/kernel", dir);
	snprintf(c, sizeof(c), "%s/vmcore.minidump3", dir);
	if (!exists(k) || !exists(c))
		return -1;
	/* Shown by `info`: the path without its "bin/../". */
	snprintf(kernel, len, "%s", realpath(k, rk) != NULL ? rk : k);
	snprintf(core, len, "%s", realpath(c, rc) != NULL ? rc : c);
	return 0;
}

int
sys_demo_paths(const char *argv0, const char *datadir, char *kernel, char *core,
    size_t len)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n > 0)
		exe[n] = '\0';
	else if (argv0 == NULL || strchr(argv0, '/') == NULL ||
	    realpath(argv0, exe) == NULL)
		exe[0] = '\0';
	if (exe[0] != '\0' && (slash = strrchr(exe, '/')) != NULL) {
		*slash = '\0';
		snprintf(dir, sizeof(dir), "%s/demo", exe);
		if (try_dir(dir, kernel, core, len) == 0)
			return 0;
		snprintf(dir, sizeof(dir), "%s/../share/kvmstat/demo", exe);
		if (try_dir(dir, kernel, core, len) == 0)
			return 0;
	}
	if (datadir != NULL && try_dir(datadir, kernel, core, len) == 0)
		return 0;
	snprintf(kernel, len, "the demo dump (kernel, vmcore.minidump3) is neither beside "
	    "the program nor in %s: was kvmstat installed with meson install?",
	    datadir != NULL ? datadir : "the data directory");
	return -1;
}
