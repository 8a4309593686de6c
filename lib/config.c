/* SPDX-License-Identifier: MIT */
/*
 * config.c - parse and check the recorder's CONFIG message (config.h).
 *
 *   struct tk_msg_config, then nrules times "pattern\0filter\0"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "protocol.h"
#include "ringbuf-layout.h"

#define MAX_RULES 4096
#define MAX_BUFFER (4ull << 30)

void tk_rules_free(struct tk_rule *rules, unsigned n)
{
	for (unsigned i = 0; rules && i < n; i++) {
		free(rules[i].pattern);
		free(rules[i].filter);
	}
	free(rules);
}

void tk_config_msg_free(struct tk_config_msg *c)
{
	tk_rules_free(c->rules, c->nrules);
	memset(c, 0, sizeof(*c));
}

static int geometry_ok(const struct tk_msg_config *m)
{
	return m->mode <= TK_RB_OVERWRITE && m->nsub >= 2 &&
	       m->nsub <= TK_RB_MAX_SUBBUF && m->subbuf_size >= 4096 &&
	       m->subbuf_size % 4096 == 0 &&
	       (uint64_t)m->subbuf_size * m->nsub <= MAX_BUFFER;
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
	if (p != end)
		goto bad; /* trailing bytes: not a message we wrote */
	out->mode = m->mode;
	out->subbuf_size = m->subbuf_size;
	out->nsub = m->nsub;
	out->flags = m->flags;
	out->nrules = m->nrules;
	out->rules = rules;
	return 0;
bad:
	tk_rules_free(rules, m->nrules);
	return -EINVAL;
}
