/* SPDX-License-Identifier: MIT */
/*
 * fuzz-trace-input.h - the input layout fuzz-trace and fuzz-convert share
 * (tests/fuzz/make-seeds.sh writes it): a flags byte, the lengths of the
 * manifest part and of the descriptor file (u16 each, little-endian),
 * then the manifest part, the descriptors and the stream.  Without flag
 * bit 0 the manifest is fixed_manifest followed by the manifest part.
 */
#ifndef TK_FUZZ_TRACE_INPUT_H
#define TK_FUZZ_TRACE_INPUT_H

#include <stddef.h>
#include <stdint.h>

static const char fixed_manifest[] =
	"tracekit version=1\n"
	"clock source=tsc freq=1000000000 tsc_start=0 mono_start=0 "
	"real_start=0\n"
	"process pid=1 class=1 comm=x exe=/x events=events/1.desc\n"
	"stream file=user/s pid=1 tid=1 class=1\n";

static void check(int ok)
{
	if (!ok)
		__builtin_trap();
}

static size_t take_u16(const uint8_t *data, size_t size, size_t at)
{
	uint16_t v = 0;

	if (at < size)
		v |= data[at];
	if (at + 1 < size)
		v |= (uint16_t)(data[at + 1] << 8);
	return v;
}

/* Write the three files of input data[0..size) with @put (a file's
 * content is a then b): @names[0] the manifest, [1] the descriptors,
 * [2] the stream.  Lengths past the end of the input are cut to it. */
static void fuzz_trace_write(const uint8_t *data, size_t size,
			     const char *const names[3],
			     void (*put)(const char *name, const void *a, size_t na,
					 const void *b, size_t nb))
{
	int fixed = !(size && (data[0] & 1));
	size_t nman = take_u16(data, size, 1), ndesc = take_u16(data, size, 3);
	size_t off = size < 5 ? size : 5;

	if (nman > size - off)
		nman = size - off;
	put(names[0], fixed ? fixed_manifest : "",
	    fixed ? sizeof(fixed_manifest) - 1 : 0, data + off, nman);
	off += nman;
	if (ndesc > size - off)
		ndesc = size - off;
	put(names[1], data + off, ndesc, "", 0);
	off += ndesc;
	put(names[2], data + off, size - off, "", 0);
}

#endif /* TK_FUZZ_TRACE_INPUT_H */
