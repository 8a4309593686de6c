/* SPDX-License-Identifier: MIT */
/*
 * uprobed-guard.c - prog-uprobed's USDT probe behind a semaphore: the
 * probe fires only while a tracer has raised tkprog_guarded_semaphore.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ unsigned short tkprog_guarded_semaphore
	__attribute__((unused, section(".probes")));

int fire_guarded(int i);

/* 1 when the probe fired */
int fire_guarded(int i)
{
	if (!tkprog_guarded_semaphore)
		return 0;
	STAP_PROBE1(tkprog, guarded, i);
	return 1;
}
