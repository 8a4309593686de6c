/* SPDX-License-Identifier: MIT */
/*
 * dlopen.c - test program: events of a shared module loaded at run time.
 *
 *   prog-dlopen PLUGIN [N [ROUNDS]]
 *
 * Fires test:phase "before", then ROUNDS times (default 2): dlopen(PLUGIN),
 * call its plugin_run(round, N) (one plugin:hello and N plugin:value
 * events, default N 10), dlclose it.  Then fires test:phase "after".
 * Prints "plugin ROUND EVENTS" per round.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "test-events.h"

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10;
	int rounds = argc > 3 ? atoi(argv[3]) : 2;

	if (argc < 2)
		return 2;
	tk_trace(test, phase, "before");
	for (int r = 0; r < rounds; r++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*run)(int, int);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 3;
		}
		*(void **)&run = dlsym(h, "plugin_run");
		if (!run) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			return 3;
		}
		printf("plugin %d %d\n", r, run(r, n));
		if (dlclose(h) != 0) {
			fprintf(stderr, "dlclose: %s\n", dlerror());
			return 3;
		}
	}
	tk_trace(test, phase, "after");
	fflush(stdout);
	return 0;
}
