/* SPDX-License-Identifier: MIT */
/*
 * printf-spec.c - split one printf conversion into its parts
 * (printf-spec.h).
 */
#include <string.h>
#include "printf-spec.h"

/* A decimal width or precision at fmt[*i]; -1 when above the limit. */
static int spec_number(const char *fmt, size_t *i)
{
	int v = 0;

	while (fmt[*i] >= '0' && fmt[*i] <= '9') {
		if (v <= TK_SPEC_WIDTH_MAX)
			v = v * 10 + (fmt[*i] - '0');
		(*i)++;
	}
	return v > TK_SPEC_WIDTH_MAX ? -1 : v;
}

enum tk_spec_error tk_spec_parse(const char *fmt, size_t at,
				 struct tk_spec *spec)
{
	size_t i = at + 1;

	spec->flags = 0;
	spec->width = -1;
	spec->prec = -1;
	spec->conv = '\0';
	for (;; i++) {
		if (fmt[i] == '-')
			spec->flags |= TK_SPEC_MINUS;
		else if (fmt[i] == '+')
			spec->flags |= TK_SPEC_PLUS;
		else if (fmt[i] == ' ')
			spec->flags |= TK_SPEC_SPACE;
		else if (fmt[i] == '#')
			spec->flags |= TK_SPEC_HASH;
		else if (fmt[i] == '0')
			spec->flags |= TK_SPEC_ZERO;
		else
			break;
	}
	if (fmt[i] == '*')
		return TK_SPEC_E_STAR;
	if (fmt[i] >= '1' && fmt[i] <= '9') {
		spec->width = spec_number(fmt, &i);
		if (spec->width < 0)
			return TK_SPEC_E_WIDTH;
	}
	if (fmt[i] == '.') {
		i++;
		if (fmt[i] == '*')
			return TK_SPEC_E_STAR;
		spec->prec = spec_number(fmt, &i);
		if (spec->prec < 0)
			return TK_SPEC_E_PREC;
	}
	spec->len = fmt + i;
	while (fmt[i] && strchr("hlzjtLq", fmt[i]))
		i++;
	spec->nlen = (unsigned)(fmt + i - spec->len);

	spec->conv = fmt[i];
	if (!fmt[i])
		return TK_SPEC_E_END;
	if (!strchr("diuxXocspfFeEgGaA", fmt[i]))
		return TK_SPEC_E_CONV;
	spec->end = i + 1;
	return TK_SPEC_OK;
}
