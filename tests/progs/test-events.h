/* SPDX-License-Identifier: MIT */
/* test-events.h - events shared by the test programs. */
#ifndef TEST_EVENTS_H
#define TEST_EVENTS_H

#include <tracekit/tracekit.h>

/* One event per iteration: which thread, its sequence number, a short
 * string derived from it (so the reader can check every field). */
TK_EVENT(test, seq,
	TK_PROTO(uint32_t thread, uint64_t seq, const char *msg),
	TK_ARGS(thread, seq, msg),
	TK_FIELDS(
		tk_field_int(uint32_t, thread, thread)
		tk_field_int(uint64_t, seq, seq)
		tk_field_string(msg, msg)),
	TK_PRINT("thread=%u seq=%lu msg=%s", thread, seq, msg))

/* Every field kind, with values the tests know. */
TK_EVENT(test, kinds,
	TK_PROTO(int8_t a, int16_t b, int32_t c, int64_t d, uint8_t e,
		 uint16_t f, uint32_t g, uint64_t h, const void *p, double x,
		 const char *comm, const char *s, const void *bytes,
		 uint32_t nbytes),
	TK_ARGS(a, b, c, d, e, f, g, h, p, x, comm, s, bytes, nbytes),
	TK_FIELDS(
		tk_field_int(int8_t, a, a)
		tk_field_int(int16_t, b, b)
		tk_field_int(int32_t, c, c)
		tk_field_int(int64_t, d, d)
		tk_field_int(uint8_t, e, e)
		tk_field_int(uint16_t, f, f)
		tk_field_int(uint32_t, g, g)
		tk_field_int(uint64_t, h, h)
		tk_field_ptr(p, p)
		tk_field_double(x, x)
		tk_field_chars(comm, comm, 8)
		tk_field_string(s, s)
		tk_field_bytes(bytes, bytes, nbytes)),
	TK_PRINT("a=%d b=%d c=%d d=%ld e=%u f=%u g=%u h=%lu p=%p x=%g comm=%s s=%s",
		 a, b, c, d, e, f, g, h, p, x, comm, s))

TK_EVENT(test, phase,
	TK_PROTO(const char *name),
	TK_ARGS(name),
	TK_FIELDS(tk_field_string(name, name)),
	TK_PRINT("%s", name))

#endif
