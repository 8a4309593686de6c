/* SPDX-License-Identifier: MIT */
/*
 * config.h - the recorder's CONFIG message, checked (protocol.h).
 *
 * The message comes from another process: everything in it is checked
 * before the runtime acts on it.
 */
#ifndef TK_CONFIG_H
#define TK_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct tk_rule {
	char *pattern;
	char *filter; /* "" for none */
};

struct tk_config_msg {
	uint32_t mode;
	uint32_t chunk_size;
	uint32_t slots;
	uint32_t streams_max;
	uint32_t pool_init;
	uint32_t pool_init_child;
	uint32_t pool_max;
	uint32_t block_ms;
	uint32_t flags;
	unsigned nrules;
	struct tk_rule *rules;
	char **func_opts; /* TK_CONFIG_FUNCTRACE: "key=value" strings */
	unsigned nfunc_opts;
};

/* Limits of the buffer geometry a CONFIG may ask for (the pool's: at
 * most TK_POOL_MAX bytes, common/ringbuf-layout.h). */
#define TK_CONFIG_MAX_BLOCK_MS 60000

/* Parse and check a CONFIG message of @len bytes.  Returns 0 and fills
 * *out (free with tk_config_msg_free), -EINVAL when it is malformed or its
 * buffer geometry is out of range, -ENOMEM. */
int tk_config_msg_parse(const void *msg, size_t len, struct tk_config_msg *out);
void tk_rules_free(struct tk_rule *rules, unsigned n);
void tk_config_msg_free(struct tk_config_msg *c);
void tk_config_func_opts_free(struct tk_config_msg *c);

#endif /* TK_CONFIG_H */
