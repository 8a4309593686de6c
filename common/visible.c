/* SPDX-License-Identifier: MIT */
/*
 * visible.c - text made safe to print (visible.h).  A name read from a
 * file (an ELF note, a DWARF string, a path a symbolic link spells) may
 * hold terminal escape sequences or newlines: printed raw, it would
 * rewrite the user's terminal or forge lines of output.
 */
#include <string.h>
#include "visible.h"

/* The length of the well-formed UTF-8 sequence at @s that is no control
 * character (U+0080..U+009F), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned cp;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF, C1 controls */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp < 0xa0)
		return 0;
	return n;
}

char *tk_visible(char *out, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!len)
		return out;
	while (*p) {
		size_t n = *p >= 0x80 ? utf8_len(p) : 0;

		if (n) {
			if (o + n >= len)
				break;
			memcpy(out + o, p, n);
			o += n;
			p += n;
		} else if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
			if (o + 1 >= len)
				break;
			out[o++] = (char)*p++;
		} else if (*p == '\\') {
			if (o + 2 >= len)
				break;
			out[o++] = '\\';
			out[o++] = '\\';
			p++;
		} else {
			if (o + 4 >= len)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
			p++;
		}
	}
	out[o] = '\0';
	return out;
}

char *tk_visible_name(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		size_t n = *p >= 0x80 ? utf8_len(p) : 0;

		if (n) {
			p += n;
			continue;
		}
		if (*p < 0x20 || *p >= 0x7f)
			*p = '?';
		p++;
	}
	return s;
}

bool tk_is_visible(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = *p >= 0x80 ? utf8_len(p) : 0;

		if (n)
			p += n;
		else if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			p++;
		else
			return false;
	}
	return true;
}
