/* SPDX-License-Identifier: MIT */
/*
 * ctf-metadata.c - the TSDL (CTF 1.8) description of the user streams.
 *
 * One stream class per process, since event ids are the process's own
 * registry ids.  Packet header, context and event header match
 * struct tk_packet_header and the compact or extended event header of
 * common/ringbuf-layout.h.  Field names get a leading underscore, which CTF
 * readers strip, so that no field name can collide with a TSDL keyword.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "trace.h"

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void put_header(FILE *f, const struct tk_trace *t)
{
	const struct tk_trace_clock *c = &t->clock;
	/* offset: the epoch time at which the clock read 0 */
	unsigned __int128 start_ns =
		(unsigned __int128)c->tsc_start * 1000000000u / c->freq;
	int64_t origin = (int64_t)c->real_start - (int64_t)start_ns;
	int64_t offset_s = origin / 1000000000;
	int64_t offset_ticks = (int64_t)((unsigned __int128)(origin % 1000000000) *
					 c->freq / 1000000000u);

	fprintf(f,
		"/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n"
		"\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n"
		"env {\n\thostname = \"");
	put_escaped(f, t->host);
	fprintf(f, "\";\n\tdomain = \"ust\";\n\ttracer_name = \"tracekit\";\n"
		"\ttracer_major = 0;\n\ttracer_minor = 1;\n};\n\n");
	fprintf(f, "clock {\n\tname = \"%s\";\n\tdescription = \"%s\";\n"
		"\tfreq = %" PRIu64 ";\n\toffset_s = %" PRId64 ";\n"
		"\toffset = %" PRId64 ";\n};\n\n",
		c->tsc ? "tsc" : "monotonic",
		c->tsc ? "x86 time stamp counter" : "CLOCK_MONOTONIC",
		c->freq, offset_s, offset_ticks);
	fprintf(f,
		"typealias integer { size = 64; align = 8; signed = false; map = clock.%s.value; } := uint64_clock_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; map = clock.%s.value; } := uint32_clock_t;\n\n",
		c->tsc ? "tsc" : "monotonic", c->tsc ? "tsc" : "monotonic");
}

static void put_stream_class(FILE *f, uint32_t id)
{
	fprintf(f,
		"stream {\n\tid = %u;\n"
		"\tevent.header := struct {\n"
		"\t\tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n"
		"\t\tvariant <id> {\n"
		"\t\t\tstruct { uint32_clock_t timestamp; } compact;\n"
		"\t\t\tstruct { uint16_t id; uint64_clock_t timestamp; } extended;\n"
		"\t\t} v;\n\t};\n"
		"\tpacket.context := struct {\n"
		"\t\tuint64_clock_t timestamp_begin;\n"
		"\t\tuint64_clock_t timestamp_end;\n"
		"\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
		"\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
		"\t\tuint32_t cpu_id;\n\t\tuint32_t _pid;\n\t\tuint32_t _tid;\n"
		"\t\tuint32_t _pad;\n\t};\n};\n\n",
		id);
}

static void put_field(FILE *f, const struct tk_field_desc *fd)
{
	switch (fd->kind) {
	case TK_KIND_INT:
	case TK_KIND_UINT:
		fprintf(f, "\t\tinteger { size = %u; align = 8; signed = %s; "
			"byte_order = le; base = 10; } _%s;\n",
			fd->size * 8, fd->kind == TK_KIND_INT ? "true" : "false",
			fd->name);
		break;
	case TK_KIND_PTR:
		fprintf(f, "\t\tinteger { size = 64; align = 8; signed = false; "
			"byte_order = le; base = 16; } _%s;\n", fd->name);
		break;
	case TK_KIND_DOUBLE:
		fprintf(f, "\t\tfloating_point { exp_dig = 11; mant_dig = 53; "
			"align = 8; byte_order = le; } _%s;\n", fd->name);
		break;
	case TK_KIND_CHARS:
		fprintf(f, "\t\tinteger { size = 8; align = 8; signed = false; "
			"encoding = UTF8; } _%s[%u];\n", fd->name, fd->array_len);
		break;
	case TK_KIND_STRING:
		fprintf(f, "\t\tstring { encoding = UTF8; } _%s;\n", fd->name);
		break;
	case TK_KIND_BYTES:
		fprintf(f, "\t\tuint32_t __%s_length;\n"
			"\t\tuint8_t _%s[__%s_length];\n",
			fd->name, fd->name, fd->name);
		break;
	}
}

static void put_event(FILE *f, const struct tk_event_info *ev, uint32_t class)
{
	fprintf(f, "event {\n\tname = \"");
	put_escaped(f, ev->full_name);
	fprintf(f, "\";\n\tid = %u;\n\tstream_id = %u;\n"
		"\tfields := struct {\n", ev->id, class);
	for (unsigned i = 0; i < ev->nfields; i++)
		put_field(f, &ev->fields[i]);
	fprintf(f, "\t};\n};\n\n");
}

void tk_ctf_put_class(FILE *f, const struct tk_trace_process *p)
{
	put_stream_class(f, p->class_id);
	for (unsigned j = 0; j < p->nevents; j++)
		put_event(f, &p->events[j], p->class_id);
}

int tk_ctf_write_metadata(FILE *f, const struct tk_trace *t)
{
	put_header(f, t);
	for (unsigned i = 0; i < t->nprocesses; i++)
		if (!t->processes[i].desc_only)
			tk_ctf_put_class(f, &t->processes[i]);
	if (t->done.classes_len)
		fwrite(t->done.classes, 1, t->done.classes_len, f);
	return ferror(f) ? -EIO : 0;
}
