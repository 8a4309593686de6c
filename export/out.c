/* SPDX-License-Identifier: MIT */
/*
 * out.c - the output of `convert`: one buffer written to a file
 * descriptor, and the writers of numbers and strings the formats share.
 * Numbers are written without printf (format/number.h): a conversion
 * writes several per event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "export.h"
#include "format/number.h"

void tk_out_flush(struct tk_out *o)
{
	size_t done = 0;

	while (!o->error && done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			o->error = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	o->written += done;
	o->len = 0;
}

void tk_out_u64(struct tk_out *o, uint64_t v)
{
	char tmp[TK_NUM_MAX], *end = tmp + sizeof(tmp), *s = tk_num_dec(end, v);

	tk_out_mem(o, s, (size_t)(end - s));
}

void tk_out_s64(struct tk_out *o, int64_t v)
{
	if (v < 0) {
		tk_out_char(o, '-');
		tk_out_u64(o, (uint64_t)0 - (uint64_t)v);
		return;
	}
	tk_out_u64(o, (uint64_t)v);
}

void tk_out_us(struct tk_out *o, uint64_t ns)
{
	char tmp[TK_NUM_MAX], *end = tmp + sizeof(tmp), *s = tk_num_dec(end, ns / 1000);
	unsigned frac = (unsigned)(ns % 1000);

	tk_out_reserve(o, 32);
	memcpy(o->buf + o->len, s, (size_t)(end - s));
	o->len += (size_t)(end - s);
	o->buf[o->len] = '.';
	o->buf[o->len + 1] = (char)('0' + frac / 100);
	memcpy(o->buf + o->len + 2, tk_num_pairs + 2 * (frac % 100), 2);
	o->len += 4;
}

void tk_out_printf(struct tk_out *o, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		tk_out_mem(o, small, (size_t)n);
		return;
	}
	va_start(ap, fmt);
	n = vasprintf(&big, fmt, ap);
	va_end(ap);
	if (n >= 0)
		tk_out_mem(o, big, (size_t)n);
	free(big);
}

/* The length of the valid UTF-8 sequence at s[0..len), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	if (!n || n > len || s[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0; /* overlong, surrogate, beyond U+10FFFF */
	return n;
}

void tk_out_json_str(struct tk_out *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t start = 0;

	tk_out_char(o, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];
		size_t n = 2;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			continue;
		if (c >= 0x80) {
			size_t u = utf8_len((const unsigned char *)s + i, len - i);

			if (u) {
				i += u - 1;
				continue;
			}
			/* not UTF-8: the byte as the code point of its value */
		}
		tk_out_mem(o, s + start, i - start);
		start = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\t': esc[1] = 't'; break;
		case '\r': esc[1] = 'r'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		tk_out_mem(o, esc, n);
	}
	tk_out_mem(o, s + start, len - start);
	tk_out_char(o, '"');
}

size_t tk_utf8_cut(const char *s, size_t len, size_t chars)
{
	size_t i = 0;

	for (; i < len && chars; chars--) {
		size_t u = (unsigned char)s[i] >= 0x80
				   ? utf8_len((const unsigned char *)s + i, len - i) : 1;

		i += u ? u : 1;
	}
	return i;
}

void tk_out_xml_str(struct tk_out *o, const char *s, size_t len)
{
	size_t start = 0, skip;

	for (size_t i = 0; i < len; i += skip) {
		const unsigned char *u = (const unsigned char *)s + i;
		const char *rep;

		skip = 1;
		switch (s[i]) {
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '&': rep = "&amp;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&apos;"; break;
		default:
			if (u[0] >= 0x80) {
				skip = utf8_len(u, len - i);
				/* U+FFFE and U+FFFF are no XML characters */
				if (skip && !(skip == 3 && u[0] == 0xef && u[1] == 0xbf &&
					      u[2] >= 0xbe))
					continue;
				/* not UTF-8: an XML parser stops at it */
				skip = skip ? skip : 1;
				rep = "\xef\xbf\xbd"; /* U+FFFD */
				break;
			}
			if (u[0] >= 0x20 || s[i] == '\t' || s[i] == '\n')
				continue;
			rep = "?"; /* not allowed in XML 1.0 */
		}
		tk_out_mem(o, s + start, i - start);
		start = i + skip;
		tk_out_str(o, rep);
	}
	tk_out_mem(o, s + start, len - start);
}
