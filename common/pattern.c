/* SPDX-License-Identifier: MIT */
/*
 * pattern.c - which events an enable pattern names.
 *
 *   all               every event
 *   app, ap*          every event of the providers matched
 *   app:req_*         a glob over "provider:event" (fnmatch)
 *
 * Used by the runtime (session rules) and by the tools (checking -e).
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <string.h>
#include "pattern.h"

bool tk_pattern_match(const char *pattern, const char *full_name)
{
	const char *colon;
	char provider[256];
	size_t n;

	if (strcmp(pattern, "all") == 0)
		return true;
	if (strchr(pattern, ':'))
		return fnmatch(pattern, full_name, 0) == 0;
	/* no colon: a provider name or glob */
	colon = strchr(full_name, ':');
	n = colon ? (size_t)(colon - full_name) : strlen(full_name);
	if (n >= sizeof(provider))
		return false;
	memcpy(provider, full_name, n);
	provider[n] = '\0';
	return fnmatch(pattern, provider, 0) == 0;
}
