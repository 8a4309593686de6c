/* SPDX-License-Identifier: MIT */
/*
 * cmd-show.c - tracekit show [-B NAME] [--ts raw]: print what an instance
 * holds, as the kernel formats it (its 'trace' file), like trace-cmd show.
 * Reading does not consume: show again and the same events are there.
 *
 * The instances 'start' makes count time in TSC ticks (x86-tsc, the clock
 * of user events), which the kernel prints as they are; show prints
 * seconds of CLOCK_MONOTONIC instead, as report does (--ts raw: ticks).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "instance-args.h"
#include "options.h"
#include "clock-now.h"
#include "common/clock.h"
#include "format/number.h"

/* Copy the kernel's text, each event's tick count as seconds: the first
 * all-digit word ending in ':' after "[CPU]". */
static int copy_seconds(int fd, const struct tk_trace_clock *c)
{
	FILE *in = fdopen(dup(fd), "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!in)
		return -errno;
	while ((n = getline(&line, &cap, in)) > 0) {
		char *p = line[0] == '#' ? NULL : strchr(line, ']');
		char *digits = NULL, *end = NULL;

		while (p && *p && !digits) {
			p += strspn(p, "] ");
			end = p + strspn(p, "0123456789");
			if (end > p && *end == ':')
				digits = p;
			else
				p += strcspn(p, " ");
		}
		if (!digits) {
			fwrite(line, 1, (size_t)n, stdout);
			continue;
		}
		uint64_t us = tk_num_usecs(tk_clock_to_mono(c, strtoull(digits, NULL, 10)));

		fwrite(line, 1, (size_t)(digits - line), stdout);
		printf("%llu.%06llu", (unsigned long long)(us / 1000000u),
		       (unsigned long long)(us % 1000000u));
		fwrite(end, 1, (size_t)(line + n - end), stdout);
	}
	free(line);
	fclose(in);
	return fflush(stdout) ? -errno : 0;
}

static int copy_out(int fd)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -EIO;
	}
	return fflush(stdout) ? -errno : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracekit show [-B NAME] [--ts mono|raw]\n\n"
		"Print the events instance NAME (default " TK_KINSTANCE_PREFIX ") holds, as the\n"
		"kernel formats them, without taking them out.\n\n"
		"  -B NAME     the instance\n"
		"  --ts MODE   timestamps of a TSC-clocked instance: mono (default,\n"
		"              seconds of CLOCK_MONOTONIC, as report prints them) or\n"
		"              raw (clock ticks, as the kernel prints them)\n");
}

static int parse(int argc, char **argv, const char **name, bool *raw)
{
	struct opt_parser p;
	int c;

	*name = TK_KINSTANCE_PREFIX;
	opt_init(&p, "show");
	while ((c = opt_next(&p, argc, argv)) != -1) {
		switch (c) {
		case 'B':
			*name = optarg;
			break;
		case OPT_TS:
			if (strcmp(optarg, "mono") && strcmp(optarg, "raw")) {
				tk_error("--ts '%s': use mono or raw", optarg);
				return TK_EXIT_USAGE;
			}
			*raw = !strcmp(optarg, "raw");
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return TK_EXIT_USAGE;
		}
	}
	if (!opt_operands_max(&p, argc, argv, 0))
		return TK_EXIT_USAGE;
	return instance_name_ok(*name) ? 0 : TK_EXIT_USAGE;
}

int cmd_show(int argc, char **argv)
{
	struct tk_tracefs fs;
	struct tk_kinstance k;
	struct tk_trace_clock c;
	const char *name;
	char clock[32];
	bool raw = false;
	int fd, ret = parse(argc, argv, &name, &raw);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (instance_open(name, &fs, &k) < 0)
		return TK_EXIT_FAILURE;
	tk_kinstance_clock(&k, clock, sizeof(clock));
	fd = tk_kinstance_trace_open(&k);
	if (fd < 0)
		ret = fd;
	else if (!raw && TK_CLOCK_TSC && !strcmp(clock, TK_KCLOCK_TSC)) {
		clock_now(&c);
		ret = copy_seconds(fd, &c);
	} else {
		ret = copy_out(fd);
	}
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		tk_error("cannot read the trace of instance '%s': %s", name,
			 strerror(-ret));
	instance_close(&fs, &k);
	return ret < 0 ? TK_EXIT_FAILURE : 0;
}
