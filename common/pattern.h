/* SPDX-License-Identifier: MIT */
/* pattern.h - enable patterns ("all", "provider", "provider:glob"). */
#ifndef TK_PATTERN_H
#define TK_PATTERN_H

#include <stdbool.h>

bool tk_pattern_match(const char *pattern, const char *full_name);

#endif /* TK_PATTERN_H */
