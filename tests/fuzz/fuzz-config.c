/* SPDX-License-Identifier: MIT */
/*
 * fuzz-config.c - the runtime's parser of the recorder's CONFIG message
 * (lib/config.c) on arbitrary bytes.  Half the inputs get a well-formed
 * header (type, length, sane geometry) so the rules are reached.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/config.h"
#include "common/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const void *msg, size_t len)
{
	struct tk_config_msg c;

	if (tk_config_msg_parse(msg, len, &c) != 0) {
		if (c.rules || c.nrules)
			abort(); /* a failure leaves nothing behind */
		return;
	}
	if (c.slots < 2 || c.chunk_size < 4096 || c.chunk_size % 4096 ||
	    !c.pool_init || c.pool_init > c.pool_max || !c.pool_init_child ||
	    c.pool_init_child > c.pool_max || !c.streams_max)
		abort();
	for (unsigned i = 0; i < c.nrules; i++)
		if (!c.rules[i].pattern || !c.rules[i].pattern[0] ||
		    !c.rules[i].filter)
			abort();
	tk_config_msg_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_msg_config head;
	uint8_t *msg;

	/* exact copy, so that reads past the end are caught */
	msg = malloc(size ? size : 1);
	if (!msg)
		return 0;
	memcpy(msg, data, size);
	check(msg, size);
	free(msg);

	/* a valid header followed by the input as the rules */
	memset(&head, 0, sizeof(head));
	head.m.type = TK_MSG_CONFIG;
	head.m.len = (uint32_t)(sizeof(head) + size);
	head.mode = size ? data[0] & 1 : 0;
	head.slots = 8;
	head.chunk_size = 65536;
	head.streams_max = 16;
	head.pool_init = 4;
	head.pool_init_child = 2;
	head.pool_max = 64;
	head.nrules = size ? data[size - 1] % 8 : 0;
	msg = malloc(sizeof(head) + size);
	if (!msg)
		return 0;
	memcpy(msg, &head, sizeof(head));
	memcpy(msg + sizeof(head), data, size);
	check(msg, sizeof(head) + size);
	free(msg);
	return 0;
}
