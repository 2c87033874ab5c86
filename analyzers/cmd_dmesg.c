/*
 * cmd_dmesg.c - `kvmstat dmesg`: the kernel message buffer, oldest first.
 *
 * The ring is read through the kernel's msgbuf structure (msgbufp), whose
 * write sequence tells where the oldest byte is.  Kernels before the sequence
 * numbers kept plain indexes (msg_bufx); both are detected from DWARF.  When
 * the buffer itself is unreadable, a minidump's msgbuf section is used.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MSGBUF_MAX (64u << 20)

struct ring {
	char *buf;
	size_t size;
	size_t start;   /* index of the oldest byte */
};

static int
field(kvs_t *kd, const char *m, struct kvs_typeinfo *ti)
{
	return kvs_member(kd, "struct msgbuf", m, ti);
}

static int
read_ring(kvs_t *kd, struct ring *r, char *why, size_t whylen)
{
	struct kvs_typeinfo ptr_f, size_f, pos_f;
	uint64_t addr, mbp, msg_ptr = 0, pos = 0;
	uint32_t size = 0;
	unsigned char hdr[256];
	const void *sect;
	size_t sect_len;
	bool seq;

	memset(r, 0, sizeof(*r));
	if (kvs_symbol(kd, "msgbufp", &addr, NULL) != 0 ||
	    kvs_read(kd, addr, &mbp, sizeof(mbp)) != 0 || mbp == 0)
		goto section;
	if (field(kd, "msg_ptr", &ptr_f) != 0 || field(kd, "msg_size", &size_f) != 0)
		goto section;
	seq = kvs_has_member(kd, "struct msgbuf", "msg_wseq") == 1;
	if (field(kd, seq ? "msg_wseq" : "msg_bufx", &pos_f) != 0)
		goto section;
	if (pos_f.offset + 4 > sizeof(hdr) || ptr_f.offset + 8 > sizeof(hdr) ||
	    size_f.offset + 4 > sizeof(hdr))
		goto section;
	{
		uint64_t need = ptr_f.offset + 8;
		if (size_f.offset + 4 > need)
			need = size_f.offset + 4;
		if (pos_f.offset + 4 > need)
			need = pos_f.offset + 4;
		if (kvs_read(kd, mbp, hdr, (size_t)need) != 0)
			goto section;
	}
	memcpy(&msg_ptr, hdr + ptr_f.offset, 8);
	memcpy(&size, hdr + size_f.offset, 4);
	{
		uint32_t p32;
		memcpy(&p32, hdr + pos_f.offset, 4);
		pos = p32;
	}
	if (size == 0 || size > MSGBUF_MAX) {
		snprintf(why, whylen, "msgbuf size %u is implausible", size);
		goto section;
	}
	r->buf = malloc(size);
	if (r->buf == NULL)
		return -1;
	if (kvs_read(kd, msg_ptr, r->buf, size) != 0) {
		snprintf(why, whylen, "%s", kvs_geterr(kd));
		free(r->buf);
		r->buf = NULL;
		goto section;
	}
	r->size = size;
	/* Sequence numbers run modulo a multiple of the size; the oldest byte
	 * sits where the next write will go.  Before the wrap, that position
	 * holds NULs, which the printer skips. */
	r->start = (size_t)(pos % size);
	return 0;
section:
	sect = kvs_msgbuf_section(kd, &sect_len);
	if (sect == NULL || sect_len == 0) {
		if (why[0] == '\0')
			snprintf(why, whylen, "%s", kvs_geterr(kd)[0] ? kvs_geterr(kd) :
			    "no message buffer found");
		return -1;
	}
	r->buf = malloc(sect_len);
	if (r->buf == NULL)
		return -1;
	memcpy(r->buf, sect, sect_len);
	r->size = sect_len;
	r->start = 0;
	if (msg_ptr != 0 && size == sect_len)
		r->start = (size_t)(pos % size);
	return 0;
}

int
cmd_dmesg(kvs_t *kd, const struct opts *o)
{
	struct ring r;
	char why[1024] = "";
	char *text;
	size_t i, n = 0;

	if (read_ring(kd, &r, why, sizeof(why)) != 0) {
		fprintf(stderr, "kvmstat: dmesg: %s\n", why);
		return 1;
	}
	/* Linearise oldest -> newest without NULs. */
	text = malloc(r.size + 1);
	if (text == NULL) {
		free(r.buf);
		fprintf(stderr, "kvmstat: dmesg: out of memory\n");
		return 1;
	}
	for (i = 0; i < r.size; i++) {
		char c = r.buf[(r.start + i) % r.size];
		if (c != '\0')
			text[n++] = c;
	}
	text[n] = '\0';
	free(r.buf);
	if (o->json) {
		struct emitter e;
		char *clean = malloc(4 * n + 1);
		json_t *lines = json_array();
		char *p, *save = NULL;

		emit_init(&e, true, stdout);
		if (clean == NULL) {
			free(text);
			return 1;
		}
		sanitize(clean, 4 * n + 1, text, n, true);
		json_object_set_new(emit_json_root(&e), "text", json_string(clean));
		for (p = strtok_r(clean, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
			json_array_append_new(lines, json_string(p));
		json_object_set_new(emit_json_root(&e), "lines", lines);
		free(clean);
		free(text);
		return emit_finish(&e);
	}
	fput_sanitized(stdout, text, n, true);
	if (n > 0 && text[n - 1] != '\n')
		putchar('\n');
	free(text);
	return fflush(stdout) == 0 ? 0 : 1;
}
