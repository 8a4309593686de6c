/* SPDX-License-Identifier: MIT */
/*
 * plugin.c - a shared module (libtkplugin.so) with events of its own, for
 * the dlopen test (dlopen.c).  Its events exist only in this file: the
 * program that loads it does not know them.
 */
#include <stdint.h>
#include <tracekit/tracekit.h>

TK_EVENT(plugin, hello,
	TK_PROTO(int32_t round, const char *greeting),
	TK_ARGS(round, greeting),
	TK_FIELDS(
		tk_field_int(int32_t, round, round)
		tk_field_string(greeting, greeting)),
	TK_PRINT("round=%d greeting=%s", round, greeting))

TK_EVENT(plugin, value,
	TK_PROTO(int32_t round, uint64_t i, double half),
	TK_ARGS(round, i, half),
	TK_FIELDS(
		tk_field_int(int32_t, round, round)
		tk_field_int(uint64_t, i, i)
		tk_field_double(half, half)),
	TK_PRINT("round=%d i=%lu half=%g", round, i, half))

/* Fires plugin:hello once and plugin:value n times; returns n + 1. */
__attribute__((visibility("default"))) int plugin_run(int round, int n)
{
	tk_trace(plugin, hello, round, "hi from the plugin");
	for (int i = 0; i < n; i++)
		tk_trace(plugin, value, round, (uint64_t)i, i / 2.0);
	return n + 1;
}
