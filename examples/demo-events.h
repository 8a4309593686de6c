/* SPDX-License-Identifier: MIT */
/*
 * demo-events.h - the events of the demo server, defined once each.
 */
#ifndef DEMO_EVENTS_H
#define DEMO_EVENTS_H

#include <tracekit/tracekit.h>

TK_EVENT(demo, request_start,
	TK_PROTO(uint32_t id, const char *path, uint32_t len),
	TK_ARGS(id, path, len),
	TK_FIELDS(
		tk_field_int(uint32_t, id, id)
		tk_field_string(path, path)
		tk_field_int(uint32_t, len, len)),
	TK_PRINT("id=%u path=%s len=%u", id, path, len))

TK_EVENT(demo, request_done,
	TK_PROTO(uint32_t id, int status, double ms),
	TK_ARGS(id, status, ms),
	TK_FIELDS(
		tk_field_int(uint32_t, id, id)
		tk_field_int(int32_t, status, status)
		tk_field_double(ms, ms)),
	TK_PRINT("id=%u status=%d took=%.3fms", id, status, ms))

TK_EVENT(demo, queue,
	TK_PROTO(unsigned depth, const char *worker),
	TK_ARGS(depth, worker),
	TK_FIELDS(
		tk_field_int(uint16_t, depth, depth)
		tk_field_chars(worker, worker, 12)),
	TK_PRINT("depth=%u worker=%s", depth, worker))

TK_EVENT(demo, cache_miss,
	TK_PROTO(const void *key, uint32_t keylen, const void *slot),
	TK_ARGS(key, keylen, slot),
	TK_FIELDS(
		tk_field_bytes(key, key, keylen)
		tk_field_ptr(slot, slot)),
	TK_PRINT("key=%s slot=%p", key, slot))

#endif
