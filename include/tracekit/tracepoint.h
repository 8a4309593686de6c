/* SPDX-License-Identifier: MIT */
/*
 * tracekit/tracepoint.h - define an event once, in the kernel's five parts.
 *
 *   TK_EVENT(app, request,                          provider, name
 *       TK_PROTO(int id, const char *path),         prototype
 *       TK_ARGS(id, path),                          arguments
 *       TK_FIELDS(                                  record layout
 *           tk_field_int(int32_t, id, id)
 *           tk_field_string(path, path)),
 *       TK_PRINT("id=%d path=%s", id, path))        print format
 *
 * and fire it with   tk_trace(app, request, 42, "/index.html");
 *
 * Put the definitions in a header and include it wherever the events fire;
 * each module (program or shared object) gets one event object.  One
 * definition expands, through the passes in stages/, into:
 *
 *   struct tk_event tk__ev_app_request           weak: one per module
 *   tk__desc_app_request in section "tk_meta"    field metadata + print
 *                                                 format (stages/desc.h)
 *   tk__emit_app_request(int id, const char *path)
 *       filter values (stages/value.h), record size (stages/size.h),
 *       serializer (stages/write.h), then the connected probes
 *   tk_probe_app_request_t and tk_probe_connect/disconnect helpers
 *
 * Events need at least one argument.  The print format's arguments are
 * field names (at most 32), nothing else: the format is applied when the
 * trace is read, to the recorded fields; anything else fails to compile
 * (stages/check.h).  Compute a value in a field of its own instead:
 *
 *   tk_field_string(op, wr ? "write" : "read") ... TK_PRINT("%s", op)
 */
#ifndef TRACEKIT_TRACEPOINT_H
#define TRACEKIT_TRACEPOINT_H

#include <stddef.h>
#include "module.h"
#include "runtime.h"
#include "stages/seq.h"
#include "stages/fields.h"
#include "stages/desc.h"
#include "stages/size.h"
#include "stages/write.h"
#include "stages/value.h"
#include "stages/check.h"

/**
 * TK_PROTO() - the prototype part of TK_EVENT(): the event's parameters,
 *	as a function's ("int id, const char *path").
 * @...: the parameters.
 */
#define TK_PROTO(...) __VA_ARGS__
/**
 * TK_ARGS() - the argument part of TK_EVENT(): the parameters' names, in
 *	order ("id, path").
 * @...: the names.
 */
#define TK_ARGS(...) __VA_ARGS__
/**
 * TK_FIELDS() - the record layout part of TK_EVENT(): the fields, one
 *	tk_field_*() item each, not separated by commas (stages/fields.h).
 * @...: the items.
 */
#define TK_FIELDS(...) __VA_ARGS__
/**
 * TK_PRINT() - the print format part of TK_EVENT(), applied when the trace
 *	is read.
 * @fmt: a printf format ("" for "name=value ..." of every field).
 * @...: the names of the fields its conversions take, in order.
 */
#define TK_PRINT(fmt, ...) (fmt, #__VA_ARGS__, __VA_ARGS__)

/* The format, the arguments as text (kept in the descriptor), and as
 * tokens (checked: stages/check.h). */
#define TK__PFMT(print) TK__PFMT_I print
#define TK__PFMT_I(fmt, args, ...) fmt
#define TK__PARGS(print) TK__PARGS_I print
#define TK__PARGS_I(fmt, args, ...) args
#define TK__PRAW(print) TK__PRAW_I print
#define TK__PRAW_I(fmt, args, ...) __VA_ARGS__

#define TK__EV(p, n) tk__ev_##p##_##n

/* The event object: weak and hidden, so every file of a module that
 * includes the definition shares one, and each module has its own. */
#define TK__EVENT_OBJECT(p, n)                                                \
	TK__C_BEGIN __attribute__((weak, visibility("hidden")))              \
	struct tk_event TK__EV(p, n);                                        \
	TK__C_END

/* The descriptor (include/tracekit/desc.h): constant data only, so that
 * `tracekit list` can read it from the ELF file. */
#define TK__EVENT_DESC(p, n, fields, print)                                   \
	struct tk__desc_type_##p##_##n {                                     \
		struct tk_desc_head head;                                    \
		struct tk_field_desc field[TK__SEQ_COUNT(fields)];           \
		char provider[sizeof(#p)];                                   \
		char name[sizeof(#n)];                                       \
		char fmt[sizeof(TK__PFMT(print))];                           \
		char args[sizeof(TK__PARGS(print))];                         \
	} __attribute__((aligned(8)));                                       \
	static const struct tk__desc_type_##p##_##n tk__desc_##p##_##n       \
		__attribute__((section("tk_meta"), used, aligned(8))) = {    \
			{ TK_DESC_MAGIC, TK_DESC_VERSION,                    \
			  (uint16_t)TK__SEQ_COUNT(fields),                   \
			  (uint32_t)sizeof(struct tk__desc_type_##p##_##n),  \
			  0,                                                 \
			  offsetof(struct tk__desc_type_##p##_##n, provider), \
			  offsetof(struct tk__desc_type_##p##_##n, name),    \
			  offsetof(struct tk__desc_type_##p##_##n, fmt),     \
			  offsetof(struct tk__desc_type_##p##_##n, args),    \
			  &TK__EV(p, n) },                                   \
			{ TK__SEQ_DESC(fields) },                            \
			#p,                                                  \
			#n,                                                  \
			TK__PFMT(print),                                     \
			TK__PARGS(print),                                    \
	};

/* The out-of-line part of a call site: the recording (behind its filter),
 * then the probes.  The filter is the recorder's: it decides what is
 * recorded, before any buffer space is reserved; the program's own probes
 * see every hit, whatever the recorder filters. */
#define TK__EVENT_EMIT(p, n, proto, args, fields)                            \
	typedef void (*tk_probe_##p##_##n##_t)(void *data, proto);           \
	TK__NOTRACE __attribute__((unused)) static inline void               \
	tk__emit_##p##_##n(proto)                                            \
	{                                                                    \
		struct tk_event *tk__ev = &TK__EV(p, n);                     \
		uint8_t tk__rec = __atomic_load_n(&tk__ev->record,           \
						  __ATOMIC_RELAXED);         \
		if (TK__LIKELY(tk__rec)) {                                   \
			int tk__pass = 1;                                    \
			if (TK__UNLIKELY(__atomic_load_n(&tk__ev->filter,    \
							 __ATOMIC_RELAXED) != NULL)) { \
				struct tk_value                              \
					tk__vals[TK__SEQ_COUNT(fields) + 1]; \
				struct tk_value *tk__vp = tk__vals;          \
				TK__SEQ_VALUE(fields)                        \
				(void)tk__vp;                                \
				tk__pass = tk__filter_pass(tk__ev, tk__vals); \
			}                                                    \
			if (TK__LIKELY(tk__pass)) {                          \
				TK__SEQ_LOCALS(fields)                       \
				uint32_t tk__size = 0 TK__SEQ_SIZE(fields);  \
				char *tk__p = tk__reserve(tk__size, tk__ev->id); \
				if (TK__LIKELY(tk__p != NULL)) {             \
					TK__SEQ_WRITE(fields)                \
					tk__commit(tk__p);                   \
					if (TK__UNLIKELY(tk__rec &           \
							 TK__RECORD_STACK))  \
						tk__thread.stack_tsc =       \
							tk__thread.last_tsc; \
				}                                            \
			}                                                    \
		}                                                            \
		if (TK__UNLIKELY(__atomic_load_n(&tk__ev->probes,            \
						 __ATOMIC_RELAXED) != NULL)) { \
			struct tk__probe_array *tk__a =                      \
				tk__probes_begin(tk__ev);                    \
			for (unsigned tk__i = 0; tk__a && tk__i < tk__a->count; \
			     tk__i++)                                        \
				((tk_probe_##p##_##n##_t)tk__a->probe[tk__i].fn)( \
					tk__a->probe[tk__i].data, args);     \
			tk__probes_end();                                    \
		}                                                            \
	}                                                                    \
	TK__NOTRACE __attribute__((unused)) static inline int                \
	tk_probe_connect_##p##_##n(tk_probe_##p##_##n##_t fn, void *data)    \
	{                                                                    \
		return tk_probe_connect_raw(&TK__EV(p, n), (tk__probe_fn)fn, \
					    data);                           \
	}                                                                    \
	TK__NOTRACE __attribute__((unused)) static inline int                \
	tk_probe_disconnect_##p##_##n(tk_probe_##p##_##n##_t fn, void *data) \
	{                                                                    \
		return tk_probe_disconnect_raw(&TK__EV(p, n),                \
					       (tk__probe_fn)fn, data);      \
	}

/**
 * TK_EVENT() - define an event.
 * @provider: the provider's name, a C identifier ("app").
 * @name: the event's name, a C identifier ("request").
 * @proto: TK_PROTO(): the parameters of tk_trace() for this event.
 * @args: TK_ARGS(): their names.
 * @fields: TK_FIELDS(): what is recorded, computed from the arguments.
 * @print: TK_PRINT(): how `tracekit report` prints it.
 *
 * Put it in a header included wherever the event fires; each module
 * (program or shared object) gets one event object and one descriptor.
 * The event needs at least one parameter.
 */
#define TK_EVENT(provider, name, proto, args, fields, print)                  \
	TK__EVENT_OBJECT(provider, name)                                     \
	TK__EVENT_CHECK(provider, name, fields, print)                       \
	TK__EVENT_DESC(provider, name, fields, print)                        \
	TK__EVENT_EMIT(provider, name, TK_PROTO(proto), TK_ARGS(args), fields)

/**
 * tk_trace() - fire an event.
 * @provider: the event's provider, as in its TK_EVENT().
 * @name: the event's name.
 * @...: the arguments its TK_PROTO() takes.
 *
 * While the event is off this costs a 5-byte NOP where code can be
 * patched (runtime.h, TK__SITE), else a predicted test of one byte; the
 * arguments are evaluated only when it is on.  When it is on, the
 * filter runs first, then the record is written (or counted as lost),
 * then the connected probes are called.
 *
 * Context: any thread.  Recording never blocks and is safe in a signal
 * handler (an event that interrupts another of the same thread is counted
 * as lost); probes run as they are written.
 */
#define tk_trace(provider, name, ...)                                         \
	do {                                                                 \
		if (TK__UNLIKELY(TK__SITE(&TK__EV(provider, name)))) {       \
			tk__emit_##provider##_##name(__VA_ARGS__);           \
			/* here, so that the stack starts at this call */   \
			if (TK__UNLIKELY(tk__thread.stack_tsc))              \
				tk__user_stack();                            \
		}                                                            \
	} while (0)

/**
 * tk_enabled() - whether an event is on.
 * @provider: the event's provider.
 * @name: the event's name.
 *
 * Guards work done only to compute an event's arguments.
 *
 * Return: true while the event is recorded, filtered or probed.
 */
#define tk_enabled(provider, name)                                            \
	TK__UNLIKELY(__atomic_load_n(&TK__EV(provider, name).enabled,        \
				     __ATOMIC_RELAXED))

/**
 * tk_probe_connect() - call a function on every hit of an event.
 * @provider: the event's provider.
 * @name: the event's name.
 * @fn: a function of type tk_probe_<provider>_<name>_t, that is
 *	void fn(void *data, <the event's TK_PROTO()>).
 * @data: passed to @fn.
 *
 * The typed form of tk_probe_connect_raw(), which see.
 *
 * Return: as tk_probe_connect_raw().
 */
#define tk_probe_connect(provider, name, fn, data)                            \
	tk_probe_connect_##provider##_##name(fn, data)
/**
 * tk_probe_disconnect() - stop calling a probe tk_probe_connect() connected.
 * @provider: the event's provider.
 * @name: the event's name.
 * @fn: the function given to tk_probe_connect().
 * @data: the data given with it.
 *
 * Return: as tk_probe_disconnect_raw().
 */
#define tk_probe_disconnect(provider, name, fn, data)                         \
	tk_probe_disconnect_##provider##_##name(fn, data)

#endif /* TRACEKIT_TRACEPOINT_H */
