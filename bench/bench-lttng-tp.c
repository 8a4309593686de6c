/* SPDX-License-Identifier: MIT */
/* bench-lttng-tp.c - the LTTng-UST tracepoint provider of bench-lttng,
 * linked statically into the program. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench-lttng-tp.h"
