/* SPDX-License-Identifier: MIT */
/*
 * convert-select.h - convert's selection options, read as report reads
 * them (report.h report_select): --events PATTERN, --pid, --tid, --comm,
 * and a time window --from T --until T (report's --to; convert's --to is
 * the format).  convert_select_prepare() turns them into the driver's
 * tk_export_select (export/export.h), so every format keeps the same
 * events.
 */
#ifndef TK_CONVERT_SELECT_H
#define TK_CONVERT_SELECT_H

#include <stdbool.h>
#include <stdint.h>
#include "export/export.h"
#include "report.h"

struct convert_select {
	struct report_select sel;       /* the options (report_select_option) */
	unsigned char *kernel_ids;      /* per kernel event id: 0 not yet
					 * looked at, 1 kept, 2 left out */
	unsigned nids;
	struct tk_export_select ops;
};

/* The driver's selection for @s, or NULL when no option selects. */
const struct tk_export_select *convert_select_prepare(struct convert_select *s);

void convert_select_free(struct convert_select *s);

#endif /* TK_CONVERT_SELECT_H */
