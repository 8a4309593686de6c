/* SPDX-License-Identifier: MIT */
/*
 * marks.c - a program that includes only <tracekit/marker.h>: markers
 * and nothing else of the API (test_runtime.py, test_hist.py).
 *
 *   prog-marks N   app:tick from two call sites of different formats:
 *                  "start" (no argument) N times, then "tick I of N"
 *                  N times; then app:done "done"
 */
#include <stdlib.h>
#include <tracekit/marker.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	for (int i = 0; i < n; i++)
		tk_mark(app_tick, "start");
	for (int i = 0; i < n; i++)
		tk_mark(app_tick, "tick %d of %d", i, n);
	tk_mark(app_done, "done");
	return 0;
}
