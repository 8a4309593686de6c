/* SPDX-License-Identifier: MIT */
/*
 * config.c - parse and check the recorder's CONFIG message (config.h).
 *
 *   struct tk_msg_config, then nrules times "pattern\0filter\0", then with
 *   TK_CONFIG_FUNCTRACE the function tracer's "key=value\0" strings
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "common/protocol.h"
#include "common/ringbuf-layout.h"

#define MAX_RULES 4096

void tk_rules_free(struct tk_rule *rules, unsigned n)
{
	for (unsigned i = 0; rules && i < n; i++) {
		free(rules[i].pattern);
		free(rules[i].filter);
	}
	free(rules);
}

void tk_config_func_opts_free(struct tk_config_msg *c)
{
	for (unsigned i = 0; i < c->nfunc_opts; i++)
		free(c->func_opts[i]);
	free(c->func_opts);
	c->func_opts = NULL;
	c->nfunc_opts = 0;
}

/* The function tracer's "key=value\0" strings, up to @end. */
static int parse_func_opts(const char *p, const char *end,
			   struct tk_config_msg *out)
{
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		char **grown;

		if (!nul || nul == p || out->nfunc_opts >= MAX_RULES)
			return -EINVAL;
		grown = realloc(out->func_opts, (out->nfunc_opts + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		out->func_opts = grown;
		grown[out->nfunc_opts] = strdup(p);
		if (!grown[out->nfunc_opts])
			return -ENOMEM;
		out->nfunc_opts++;
		p = nul + 1;
	}
	return 0;
}

void tk_config_msg_free(struct tk_config_msg *c)
{
	tk_config_func_opts_free(c);
	tk_rules_free(c->rules, c->nrules);
	memset(c, 0, sizeof(*c));
}

static int geometry_ok(const struct tk_msg_config *m)
{
	return tk_rb_geometry_ok(m->mode, m->chunk_size, m->slots,
				 m->streams_max, m->pool_max) &&
	       m->pool_init >= 1 && m->pool_init <= m->pool_max &&
	       m->pool_init_child >= 1 && m->pool_init_child <= m->pool_max &&
	       m->block_ms <= TK_CONFIG_MAX_BLOCK_MS;
}

int tk_config_msg_parse(const void *msg, size_t len, struct tk_config_msg *out)
{
	const struct tk_msg_config *m = msg;
	const char *p, *end = (const char *)msg + len;
	struct tk_rule *rules;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(*m) || m->m.type != TK_MSG_CONFIG || m->m.len != len ||
	    m->nrules > MAX_RULES || !geometry_ok(m))
		return -EINVAL;
	rules = calloc(m->nrules ? m->nrules : 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	p = (const char *)(m + 1);
	for (uint32_t i = 0; i < m->nrules; i++) {
		const char *pat = p, *flt, *nul;

		nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul || nul == pat)
			goto bad;
		flt = nul + 1;
		nul = memchr(flt, '\0', (size_t)(end - flt));
		if (!nul)
			goto bad;
		p = nul + 1;
		rules[i].pattern = strdup(pat);
		rules[i].filter = strdup(flt);
		if (!rules[i].pattern || !rules[i].filter) {
			tk_rules_free(rules, m->nrules);
			return -ENOMEM;
		}
	}
	if (m->flags & TK_CONFIG_FUNCTRACE) {
		int err = parse_func_opts(p, end, out);

		if (err) {
			tk_config_func_opts_free(out);
			tk_rules_free(rules, m->nrules);
			return err;
		}
		p = end;
	}
	if (p != end)
		goto bad; /* trailing bytes: not a message we wrote */
	out->mode = m->mode;
	out->chunk_size = m->chunk_size;
	out->slots = m->slots;
	out->streams_max = m->streams_max;
	out->pool_init = m->pool_init;
	out->pool_init_child = m->pool_init_child;
	out->pool_max = m->pool_max;
	out->block_ms = m->block_ms;
	out->flags = m->flags;
	out->nrules = m->nrules;
	out->rules = rules;
	return 0;
bad:
	tk_rules_free(rules, m->nrules);
	return -EINVAL;
}
