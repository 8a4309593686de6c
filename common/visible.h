/* SPDX-License-Identifier: MIT */
/* visible.h - text from files and other programs (paths, symbol and
 * probe names), made safe to print on one line of a terminal. */
#ifndef TK_VISIBLE_H
#define TK_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * @s written into @out (at most @len bytes, always NUL-terminated when
 * @len > 0; cut before an escape that would not fit): printable ASCII
 * and well-formed UTF-8 as they are; a backslash as "\\"; any other
 * byte (control characters, DEL, C1 controls, bytes that are no UTF-8)
 * as "\xNN".  Returns @out.
 */
char *tk_visible(char *out, size_t len, const char *s);

/* @s made printable in place, its length kept (a thread or process
 * name, of a fixed size): each byte that tk_visible() would escape
 * becomes '?'.  Returns @s. */
char *tk_visible_name(char *s);

/* Whether tk_visible() would print @s unchanged. */
bool tk_is_visible(const char *s);

#endif /* TK_VISIBLE_H */
