/* SPDX-License-Identifier: MIT */
/* value.h - struct tk_value; the public header defines it for the macros. */
#ifndef TK_VALUE_H
#define TK_VALUE_H
#include "tracekit/value.h"
#endif
