/* SPDX-License-Identifier: MIT */
/*
 * counter.h - a counter the test programs share with the test: 8 bytes in
 * a file mapped shared, so that what the program has committed is
 * readable even after it was killed.
 */
#ifndef TEST_COUNTER_H
#define TEST_COUNTER_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Map PATH (created, 8 bytes) shared; exits with status 3 on failure. */
static inline volatile uint64_t *map_counter(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	void *p;

	if (fd < 0 || ftruncate(fd, 8) < 0)
		exit(3);
	p = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		exit(3);
	return p;
}

#endif
