/*
 * kvmstat.h - public interface of libkvmstat.
 *
 * A kvs_t handle binds a kernel image (ELF symbols + DWARF types) to a memory
 * source (a crash dump, a raw physical image or live memory), through the
 * kernel's architecture (amd64) and OS (FreeBSD).  Everything returned by the library is either copied into caller
 * buffers or borrowed from the handle until kvs_close(); see README
 * "Ownership".  One handle must be used by one thread at a time.
 */
#ifndef KVMSTAT_H
#define KVMSTAT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kvs kvs_t;

/* Size of the errbuf passed to kvs_open(). */
#define KVS_ERRBUF_SIZE 1024

/* kvs_open() flags. */
#define KVS_O_RAW      0x01 /* treat the core as a raw physical image */
#define KVS_O_NOVERIFY 0x02 /* skip the kernel/dump version match check */
/* Open the kernel alone, without memory: core is ignored, and only symbol
 * and type queries (kvs_symbol, kvs_type, kvs_type_members...) work; every
 * read fails with KVS_E_INVAL ("no memory: kernel opened without a dump").
 * No dump/kernel version check is made. */
#define KVS_O_KERNEL_ONLY 0x04
/* Draw a progress bar on stderr, when it is a terminal, for work that takes
 * longer than half a second (indexing a large kernel's DWARF). */
#define KVS_O_PROGRESS 0x08
/* Do not read or write the layout cache ($XDG_CACHE_HOME/kvmstat); the
 * environment variable KVS_NO_CACHE=1 does the same. */
#define KVS_O_NO_CACHE 0x10
/* Open the dump for its bytes alone, whatever kernel it holds: kernel must
 * be NULL, and no kernel is looked for (in the dump or installed).  The
 * dump's format, pages and physical memory answer (kvs_dumpinfo,
 * kvs_read_phys); kernel-virtual reads, symbols, types and the walkers
 * fail with KVS_E_INVAL saying why, except in a dump addressed by virtual
 * addresses only (an ELF core without physical addresses), which is read
 * as it is. */
#define KVS_O_FORMAT_ONLY 0x20

/* Coarse status codes; the message chain (kvs_geterr) carries the detail. */
typedef enum kvs_status {
	KVS_OK = 0,
	KVS_E_NOMEM,     /* allocation failed */
	KVS_E_IO,        /* system call failed (errno text in the message) */
	KVS_E_FORMAT,    /* file is not in a format we understand, or is corrupt */
	KVS_E_TRUNCATED, /* file shorter than its own headers claim */
	KVS_E_UNMAPPED,  /* virtual address has no translation */
	KVS_E_NOTDUMPED, /* physical page not present in the dump */
	KVS_E_NOSYMBOL,  /* symbol not found */
	KVS_E_NOTYPE,    /* DWARF type, member or variable not found */
	KVS_E_DWARF,     /* DWARF/ELF library error */
	KVS_E_MISMATCH,  /* kernel does not match the dump */
	KVS_E_DATA,      /* kernel data is inconsistent (cycle, absurd count...) */
	KVS_E_INVAL,     /* bad argument */
	KVS_E_VERSION,   /* unsupported kernel structure version */
	KVS_E__COUNT
} kvs_status_t;

/*
 * Open a kernel and a memory source.  kernel may be NULL when the dump
 * carries what its kernel needs (a Linux dump with VMCOREINFO: symbols from
 * kallsyms and types from the .BTF in memory); not with KVS_O_KERNEL_ONLY.  core == NULL or "/dev/mem" means live
 * memory.  On failure returns NULL and writes a message into errbuf
 * (KVS_ERRBUF_SIZE bytes) when errbuf is non-NULL.
 */
kvs_t *kvs_open(const char *kernel, const char *core, int flags, char *errbuf);
/* kvs_open, also saying why it failed: *status (when status is non-NULL)
 * is KVS_OK on success, else the status of the message in errbuf. */
kvs_t *kvs_open_status(const char *kernel, const char *core, int flags, char *errbuf,
    kvs_status_t *status);
void kvs_close(kvs_t *kd);

/* Read len bytes at kernel virtual address kva.  Returns 0, or -1 with the
 * error set (kvs_geterr, kvs_fault_addr).  Reads may cross page boundaries. */
int kvs_read(kvs_t *kd, uint64_t kva, void *buf, size_t len);
/* Read physical memory. */
int kvs_read_phys(kvs_t *kd, uint64_t pa, void *buf, size_t len);
/* Translate a kernel virtual address. */
int kvs_kvtop(kvs_t *kd, uint64_t kva, uint64_t *pa);
/* Read a NUL-terminated string of at most maxlen-1 bytes into buf (always
 * terminated).  Returns its length, or -1.  A string without a NUL within
 * maxlen bytes is truncated, and *truncated (if non-NULL) is set. */
ssize_t kvs_read_string(kvs_t *kd, uint64_t kva, char *buf, size_t maxlen,
    int *truncated);

/* Errors: cleared at every public entry point. */
const char *kvs_geterr(const kvs_t *kd);
kvs_status_t kvs_errstatus(const kvs_t *kd);
/* Faulting address of the last failed read (0 and *valid=0 if none). */
uint64_t kvs_fault_addr(const kvs_t *kd, int *valid);
const char *kvs_status_str(kvs_status_t st);

/* Symbols (ELF SHT_SYMTAB, local symbols included, leading '_' tolerated). */
int kvs_symbol(kvs_t *kd, const char *name, uint64_t *addr, uint64_t *size);
/* Symbol containing addr: returns borrowed name (valid until kvs_close) or
 * NULL; *off receives addr - symbol value. Only function/object symbols. */
const char *kvs_symbol_at(kvs_t *kd, uint64_t addr, uint64_t *off);

/* DWARF layouts. */
typedef enum kvs_kind {
	KVS_KIND_OTHER = 0,
	KVS_KIND_BASE,
	KVS_KIND_POINTER,
	KVS_KIND_ARRAY,
	KVS_KIND_STRUCT,
	KVS_KIND_UNION,
	KVS_KIND_ENUM,
	KVS_KIND_FUNCTION,
	KVS_KIND_VOID
} kvs_kind_t;

struct kvs_typeinfo {
	uint64_t offset;      /* member offset from the start of the outer type */
	uint64_t size;        /* byte size of the member / type (array: whole) */
	kvs_kind_t kind;      /* kind after typedefs and qualifiers are peeled */
	uint64_t count;       /* arrays: element count (0 = flexible/unknown) */
	uint64_t elem_size;   /* arrays: element byte size; pointers: target size (0 if void/unknown) */
	kvs_kind_t elem_kind; /* arrays: element kind; pointers: target kind */
	unsigned bit_size;    /* bitfields: width in bits, else 0 */
	unsigned bit_offset;  /* bitfields: bit offset within offset's byte */
	const char *type_name;/* borrowed: e.g. "struct malloc_type_stats *" */
};

/* Type by name: "struct x", "union x", "enum x", or a typedef/base name.
 * Fills size, kind, count (for array typedefs). */
int kvs_type(kvs_t *kd, const char *type, struct kvs_typeinfo *ti);
/* Member by dotted path ("ks_mti.mti_stats"), offsets accumulated. */
int kvs_member(kvs_t *kd, const char *type, const char *path,
    struct kvs_typeinfo *ti);
/* Non-throwing probe: 1 if the member exists, 0 if not, -1 on error. */
int kvs_has_member(kvs_t *kd, const char *type, const char *path);
/* Type of a global variable (offset = 0). */
int kvs_variable(kvs_t *kd, const char *var, struct kvs_typeinfo *ti);

/*
 * The members of a struct or union, in declaration order, as `ptype /o`
 * shows them.  An anonymous struct/union member is reported (name NULL)
 * and then its own members, depth one deeper.  Offsets are counted from
 * the start of the named type, inside anonymous members too.
 */
struct kvs_member_info {
	const char *name;       /* NULL for an anonymous member */
	uint64_t offset;        /* bytes from the start of the named type
	                         * (bit-field: the byte holding its first bit) */
	uint64_t bit_offset;    /* bits from the start of the named type */
	unsigned bit_size;      /* bit-fields: width in bits, else 0 */
	uint64_t size;          /* byte size of the member's type (a bit-field:
	                         * of its declared type, as gdb shows it) */
	const char *type_name;  /* borrowed (as kvs_typeinfo.type_name) */
	kvs_kind_t kind;        /* after typedefs and qualifiers are peeled */
	unsigned depth;         /* 0: a member of the named type; n: inside n
	                         * anonymous members */
};
/* Call cb for each member of type ("struct x", "union x" or a typedef of
 * one).  cb returns 0 to go on; a non-zero value stops the walk and is
 * returned.  Returns 0 when every member was seen, or -1 with the error set
 * (KVS_E_NOTYPE: no such type; KVS_E_INVAL: not a struct or union).  The
 * kernel's BTF answers when it has the type, DWARF otherwise; both give the
 * same members. */
int kvs_type_members(kvs_t *kd, const char *type,
    int (*cb)(void *arg, const struct kvs_member_info *m), void *arg);

/*
 * What a type is under its typedefs and qualifiers, for code that reads
 * values by their C type (the Python object layer): its name once every
 * typedef and qualifier is peeled ("pid_t" -> "int", "pgtable_t" ->
 * "struct page *"; an anonymous struct is "struct <anonymous>"), a
 * typedef's own target one step down (NULL when type is no typedef), and
 * how a base type's or an enum's bits read.  Strings are borrowed until
 * kvs_close().  Not kept in the layout cache: BTF or DWARF answers.
 */
typedef enum kvs_encoding {
	KVS_ENC_NONE = 0,     /* not a base type or enum */
	KVS_ENC_SIGNED,
	KVS_ENC_UNSIGNED,
	KVS_ENC_BOOL,
	KVS_ENC_FLOAT
} kvs_encoding_t;
struct kvs_typepeel {
	const char *name;
	const char *target;
	kvs_encoding_t encoding;
};
int kvs_type_peel(kvs_t *kd, const char *type, struct kvs_typepeel *p);
/* The enumerators of an enum type ("enum x", or a typedef of one), in
 * declaration order: cb(arg, name, value) returns 0 to go on, non-zero to
 * stop (returned).  An unsigned 64-bit enumerator's value is its bits.
 * 0, or -1 (KVS_E_NOTYPE: no such type; KVS_E_INVAL: not an enum). */
int kvs_type_enumerators(kvs_t *kd, const char *type,
    int (*cb)(void *arg, const char *name, int64_t value), void *arg);
/* The enumerator named name, of whichever enum declares it (as drgn's
 * prog['PG_slab']): its value and its enum type's name (borrowed until
 * kvs_close; "enum <anonymous>" for an unnamed one, which is then asked of
 * kvs_type_enumerators by no name).  0, or -1 (KVS_E_NOTYPE: no enum of
 * the kernel's BTF declares it; DWARF is not searched). */
int kvs_type_constant(kvs_t *kd, const char *name, int64_t *value, const char **enum_type);

/*
 * The layout cache: answers to type questions kept per kernel file under
 * $XDG_CACHE_HOME/kvmstat (default ~/.cache/kvmstat), so that a later
 * handle on the same kernel answers them without reading BTF or DWARF.
 * KVS_O_NO_CACHE or KVS_NO_CACHE=1 in the environment turn it off.
 */
struct kvs_cache_file {
	char path[4096];
	char identity[1024];    /* types source and kernel build-id (or file
	                         * size, mtime, hash); or why the file is bad */
	uint64_t size;          /* bytes */
	unsigned entries;       /* answers held */
	bool valid;
};
/* The directory (0), or -1 when no $XDG_CACHE_HOME or $HOME says where. */
int kvs_cache_dir(char *buf, size_t len);
/* cb for each cache file; 0, cb's non-zero value, or -1 (unreadable). */
int kvs_cache_list(int (*cb)(void *arg, const struct kvs_cache_file *f),
    void *arg);
/* Remove every cache file; 0 or -1.  *nremoved: files removed. */
int kvs_cache_clear(unsigned *nremoved);

/* Dump description (for `kvmstat info`). Strings borrowed from the handle. */
struct kvs_dumpinfo {
	const char *format;     /* "minidump", "elf", "raw", "live" */
	unsigned format_version;/* minidump version, else 0 */
	unsigned page_size;
	uint64_t dumped_pages;  /* pages present in the source */
	uint64_t source_bytes;  /* size of the core file (0 for live) */
	int live;
	const char *path;
	const char *kernel;
	int dwarf_version;      /* highest DWARF version seen, 0 if none */
};
int kvs_dumpinfo(kvs_t *kd, struct kvs_dumpinfo *di);
/* Formats storing compressed pages (kdump): the cache of decompressed pages,
 * hits and misses since the dump was opened (0 and 0 for the others). */
int kvs_dump_cache_stats(kvs_t *kd, uint64_t *hits, uint64_t *misses);

/*
 * Kernel modules.  Symbols local to a module (dtrace.ko's dtrace_probes...)
 * are not in the kernel's symbol table: kvs_add_module() asks the kernel's
 * OS layer where the module was loaded (FreeBSD: its linker_files entry,
 * matched by the file's base name) and how its linker laid out the file's
 * sections, and from then on kvs_symbol() and the type queries also search
 * the module's symbols and DWARF.  kvs_add_module_dir() adds every loaded
 * module found in a directory.  Both return the number of modules added, or
 * -1.
 */
int kvs_add_module(kvs_t *kd, const char *path);
int kvs_add_module_dir(kvs_t *kd, const char *dir);

/* What the library has to say to a person rather than to the program, as
 * it happens: today, that a layout cache file could not be used or saved
 * (once per handle; the answers are right either way).  By default it goes
 * to stderr as "libkvmstat: warning: <msg>"; kvs_set_notify sends each
 * message (no prefix, no newline) to fn(arg, msg) instead, or drops it when
 * fn is NULL.  Per handle, from the call on; fn may be called from within
 * kvs_close (a cache that could not be saved), so arg must live until it
 * returns. */
typedef void (*kvs_notify_fn)(void *arg, const char *msg);
void kvs_set_notify(kvs_t *kd, kvs_notify_fn fn, void *arg);

/* Non-fatal problems met by the last walk (e.g. a malloc type skipped for a
 * bad magic, a row kept with figures the dump does not hold): their count,
 * and the first message (borrowed) in *first - the first about data the
 * dump does not hold when there is one, else the first of all. */
unsigned kvs_warnings(const kvs_t *kd, const char **first);

/* What the kernel in memory says about itself, whatever its OS.  Strings are
 * borrowed from the handle until the next call or kvs_close(); a field the
 * kernel does not give is NULL (strings) or -1 (numbers). */
struct kvs_kernelinfo {
	const char *os;          /* "FreeBSD", "Linux" */
	const char *version;     /* version banner, first line only */
	const char *panic;       /* panic message, NULL when the kernel did not panic */
	int ncpus;               /* CPUs the kernel counted */
	int maxid;               /* highest CPU id */
	const char *arch;        /* "amd64", "arm64"; NULL when not known
	                          * (a dump opened for its bytes alone) */
};
int kvs_kernel_info(kvs_t *kd, struct kvs_kernelinfo *ki);

/* The kernel message buffer as text, oldest byte first, NUL padding dropped.
 * *text is malloc'ed and NUL-terminated (the caller frees it), *len its
 * length.  Returns 0, or -1 with the error set when no buffer is readable. */
int kvs_msgbuf(kvs_t *kd, char **text, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
