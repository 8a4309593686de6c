/* SPDX-License-Identifier: MIT */
/*
 * probe-spec.c - the spelling of dynamic probes (probes.h): split
 * "uprobe:PATH:FUNC+OFF(name:type, ...)" and its kin into parts, check
 * the names and types, read no file.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/visible.h"
#include "probes.h"

static const struct {
	const char *prefix;
	enum tk_probe_kind kind;
} kinds[] = {
	{ "uprobe:", TK_PROBE_UPROBE },
	{ "uretprobe:", TK_PROBE_URETPROBE },
	{ "usdt:", TK_PROBE_USDT },
};

bool tk_probe_spec_is(const char *text)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(text, kinds[i].prefix, strlen(kinds[i].prefix)))
			return true;
	return false;
}

bool tk_probe_type_ok(const char *type)
{
	static const char *const ok[] = {
		"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
		"x8", "x16", "x32", "x64", "string",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(type, ok[i]))
			return true;
	return false;
}

void tk_probe_spec_free(struct tk_probe_spec *s)
{
	for (unsigned i = 0; i < s->nargs; i++) {
		free(s->args[i].name);
		free(s->args[i].type);
	}
	free(s->args);
	free(s->path);
	free(s->func);
	free(s->provider);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

static char *trimmed(const char *p, size_t n)
{
	while (n && isspace((unsigned char)*p)) {
		p++;
		n--;
	}
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	return strndup(p, n);
}

/* ASCII only: isalnum() would take a locale's letters. */
static bool is_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

bool tk_probe_name_ok(const char *name, size_t max)
{
	return is_ident(name) && strlen(name) <= max;
}

/* What in @path the kernel cannot be given, in @why; or NULL. */
static const char *path_flaw(const char *path, char *why, size_t whylen)
{
	size_t n = strlen(path);

	if (path[0] != '/')
		return "it is not an absolute path";
	if (n > PATH_MAX - 1) {
		snprintf(why, whylen, "it is %zu bytes long", n);
		return why;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		const char *what = c == ' ' ? "a space" : c == '\t' ? "a tab" :
				   c == '\n' ? "a newline" : c == '\r' ? "a carriage return" :
				   c == '#' ? "'#' (a comment to the kernel)" :
				   c == '=' ? "'='" : c == 0xa0 ? "byte 0xa0 (a space to the kernel)" :
				   NULL;

		if (what)
			snprintf(why, whylen, "it holds %s at byte %zu", what, i);
		else if (c < 0x20 || c == 0x7f)
			snprintf(why, whylen, "it holds control character 0x%02x at byte %zu",
				 c, i);
		else
			continue;
		return why;
	}
	return NULL;
}

int tk_probe_path_ok(const char *spec, const char *path, char *err, size_t errlen)
{
	char why[128], shown[TK_PROBE_SPEC_MAX];
	const char *flaw = path_flaw(path, why, sizeof(why));

	if (!flaw)
		return 0;
	snprintf(err, errlen, "'%s': cannot probe '%s': %s, which a probe definition cannot carry",
		 spec, tk_visible(shown, sizeof(shown), path), flaw);
	return -EINVAL;
}

/* A name of @what (in @where) the kernel would not take. */
static int bad_name(const char *spec, const char *what, const char *name, size_t max,
		    char *err, size_t errlen)
{
	char shown[200];

	snprintf(err, errlen, "'%s': %s '%s' is not a name the kernel takes (a C identifier of at most %zu characters)",
		 spec, what, tk_visible(shown, sizeof(shown), name), max);
	return -EINVAL;
}

int tk_probe_check(const struct tk_probe *p, const char *group, const char *line,
		   char *err, size_t errlen)
{
	char shown[64];

	if (tk_probe_path_ok(p->spec, p->path, err, errlen) < 0)
		return -EINVAL;
	if (!tk_probe_name_ok(group, TK_PROBE_EVENT_NAME_MAX))
		return bad_name(p->spec, "group", group, TK_PROBE_EVENT_NAME_MAX, err, errlen);
	if (!tk_probe_name_ok(p->event, TK_PROBE_EVENT_NAME_MAX))
		return bad_name(p->spec, "event", p->event, TK_PROBE_EVENT_NAME_MAX, err,
				errlen);
	if (p->nfields > TK_PROBE_FIELDS_MAX) {
		snprintf(err, errlen, "'%s': %u fields; the kernel takes at most %d", p->spec,
			 p->nfields, TK_PROBE_FIELDS_MAX);
		return -EINVAL;
	}
	for (unsigned i = 0; i < p->nfields; i++) {
		const struct tk_probe_field *f = &p->fields[i];

		if (!tk_probe_name_ok(f->name, TK_PROBE_FIELD_NAME_MAX))
			return bad_name(p->spec, "field", f->name, TK_PROBE_FIELD_NAME_MAX, err,
					errlen);
		if (!tk_probe_type_ok(f->type)) {
			snprintf(err, errlen, "'%s': field '%s' has type '%s', which is no fetch type",
				 p->spec, f->name, tk_visible(shown, sizeof(shown), f->type));
			return -EINVAL;
		}
		if ((f->loc == TK_LOC_REG || f->loc == TK_LOC_MEM) &&
		    !tk_probe_name_ok(f->reg, sizeof(f->reg) - 1))
			return bad_name(p->spec, "register", f->reg, sizeof(f->reg) - 1, err,
					errlen);
	}
	if (strlen(line) > TK_PROBE_LINE_MAX) {
		snprintf(err, errlen, "'%s': its definition is %zu bytes long; the kernel takes at most %d (a shorter path or fewer fields)",
			 p->spec, strlen(line), TK_PROBE_LINE_MAX);
		return -EINVAL;
	}
	if (strpbrk(line, "\n#")) {
		snprintf(err, errlen, "'%s': its definition holds a newline or '#'", p->spec);
		return -EINVAL;
	}
	return 0;
}

/* "name[:type], ..." between the parentheses. */
static int parse_args(const char *text, const char *p, const char *end,
		      struct tk_probe_spec *s, char *err, size_t errlen)
{
	s->has_args = true;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		const char *colon = memchr(p, ':', (size_t)(stop - p));
		struct tk_probe_arg *grown, *a;

		grown = realloc(s->args, (s->nargs + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->args = grown;
		a = &s->args[s->nargs++];
		a->name = trimmed(p, (size_t)((colon ? colon : stop) - p));
		a->type = colon ? trimmed(colon + 1, (size_t)(stop - colon - 1)) : NULL;
		if (!a->name || (colon && !a->type))
			return -ENOMEM;
		if (!*a->name && !colon && !comma && s->nargs == 1) {
			s->nargs = 0; /* "()" or "( )" */
			free(a->name);
			break;
		}
		if (!is_ident(a->name)) {
			snprintf(err, errlen, "'%s': '%s' is not an argument name", text,
				 a->name);
			return -EINVAL;
		}
		if (strlen(a->name) > TK_PROBE_FIELD_NAME_MAX) {
			snprintf(err, errlen, "'%s': argument name '%.20s...' is too long (the kernel takes at most %d characters)",
				 text, a->name, TK_PROBE_FIELD_NAME_MAX);
			return -EINVAL;
		}
		if (s->nargs > TK_PROBE_FIELDS_MAX) {
			snprintf(err, errlen, "'%s': more than %d arguments", text,
				 TK_PROBE_FIELDS_MAX);
			return -EINVAL;
		}
		for (unsigned i = 0; i + 1 < s->nargs; i++)
			if (!strcmp(s->args[i].name, a->name)) {
				snprintf(err, errlen, "'%s': argument '%s' is named twice",
					 text, a->name);
				return -EINVAL;
			}
		if (a->type && !tk_probe_type_ok(a->type)) {
			snprintf(err, errlen,
				 "'%s': unknown type '%s' for '%s' (types: u8..u64, s8..s64, x8..x64, string)",
				 text, a->type, a->name);
			return -EINVAL;
		}
		p = comma ? comma + 1 : end;
		if (comma && p == end) {
			snprintf(err, errlen, "'%s': an argument is missing after the last ','",
				 text);
			return -EINVAL;
		}
	}
	return 0;
}

static bool parse_number(const char *p, size_t n, uint64_t *out)
{
	char buf[32], *end;

	if (!n || n >= sizeof(buf) || !isdigit((unsigned char)*p))
		return false;
	memcpy(buf, p, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 0);
	return !errno && !*end;
}

/* FUNC, FUNC+OFF or 0xADDR. */
static int parse_location(const char *text, const char *p, const char *end,
			  struct tk_probe_spec *s, char *err, size_t errlen)
{
	const char *plus = NULL;
	uint64_t v;

	if (p == end) {
		snprintf(err, errlen, "'%s': no function named", text);
		return -EINVAL;
	}
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		if (!parse_number(p, (size_t)(end - p), &s->addr)) {
			snprintf(err, errlen, "'%s': '%.*s' is not an address", text,
				 (int)(end - p), p);
			return -EINVAL;
		}
		s->has_addr = true;
		return 0;
	}
	for (const char *q = end; q > p; q--)
		if (q[-1] == '+') {
			plus = q - 1;
			break;
		}
	if (plus && parse_number(plus + 1, (size_t)(end - plus - 1), &v)) {
		s->offset = v;
		end = plus;
	} else if (plus && plus + 1 < end && isdigit((unsigned char)plus[1])) {
		snprintf(err, errlen, "'%s': '%.*s' is not an offset", text,
			 (int)(end - plus - 1), plus + 1);
		return -EINVAL;
	}
	s->func = strndup(p, (size_t)(end - p));
	if (!s->func)
		return -ENOMEM;
	if (!*s->func) {
		snprintf(err, errlen, "'%s': no function named", text);
		return -EINVAL;
	}
	return 0;
}

int tk_probe_spec_parse(const char *text, struct tk_probe_spec *out,
			char *err, size_t errlen)
{
	const char *p = NULL, *end, *open, *c1, *c2;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	/* every message quotes the probe: one that long would hide why */
	if (strlen(text) > TK_PROBE_SPEC_MAX) {
		snprintf(err, errlen, "'%.40s...': a probe of %zu characters; at most %d",
			 text, strlen(text), TK_PROBE_SPEC_MAX);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(text, kinds[i].prefix, strlen(kinds[i].prefix))) {
			out->kind = kinds[i].kind;
			p = text + strlen(kinds[i].prefix);
			break;
		}
	if (!p) {
		snprintf(err, errlen, "'%s' is not a uprobe, uretprobe or usdt probe", text);
		return -EINVAL;
	}
	end = p + strlen(p);
	open = strchr(p, '(');
	if (open) {
		if (end[-1] != ')' || memchr(open + 1, '(', (size_t)(end - open - 2)) ||
		    memchr(open + 1, ')', (size_t)(end - open - 2))) {
			snprintf(err, errlen, "'%s': the arguments go in one '(...)' at the end",
				 text);
			return -EINVAL;
		}
		ret = parse_args(text, open + 1, end - 1, out, err, errlen);
		if (ret)
			goto fail;
		end = open;
	}
	c1 = memchr(p, ':', (size_t)(end - p));
	if (out->kind != TK_PROBE_USDT) {
		if (!c1 || c1 == p) {
			snprintf(err, errlen, "'%s': give the file and the function, as %sPATH:FUNC",
				 text, kinds[out->kind].prefix);
			ret = -EINVAL;
			goto fail;
		}
		out->path = strndup(p, (size_t)(c1 - p));
		ret = out->path ? parse_location(text, c1 + 1, end, out, err, errlen)
				: -ENOMEM;
		if (!ret && out->kind == TK_PROBE_URETPROBE && out->offset) {
			snprintf(err, errlen, "'%s': a uretprobe is on a function's entry, not at an offset",
				 text);
			ret = -EINVAL;
		}
		if (!ret && out->kind == TK_PROBE_URETPROBE && out->nargs > 1) {
			snprintf(err, errlen, "'%s': a uretprobe has one value to name, the return value",
				 text);
			ret = -EINVAL;
		}
		if (ret)
			goto fail;
		return 0;
	}
	c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	if (!c1 || (c2 && memchr(c2 + 1, ':', (size_t)(end - c2 - 1)))) {
		snprintf(err, errlen, "'%s': give usdt:PROVIDER:NAME or usdt:PATH:PROVIDER:NAME",
			 text);
		ret = -EINVAL;
		goto fail;
	}
	if (c2) {
		out->path = strndup(p, (size_t)(c1 - p));
		p = c1 + 1;
		c1 = c2;
	}
	out->provider = strndup(p, (size_t)(c1 - p));
	out->name = strndup(c1 + 1, (size_t)(end - c1 - 1));
	if (!out->provider || !out->name || (c2 && !out->path)) {
		ret = -ENOMEM;
		goto fail;
	}
	if (!*out->provider || !*out->name || (out->path && !*out->path)) {
		snprintf(err, errlen, "'%s': give usdt:PROVIDER:NAME or usdt:PATH:PROVIDER:NAME",
			 text);
		ret = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	tk_probe_spec_free(out);
	return ret;
}
