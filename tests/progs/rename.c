/* SPDX-License-Identifier: MIT */
/*
 * rename.c - test program: threads renamed after their first event.
 *
 *   prog-rename
 *
 * A thread named "before" (by main, before it may start) fires
 * test:phase "first", renames itself
 * "after-thread" (pthread_setname_np), fires "second" and stays 0.5 s;
 * the main thread fires "main-first", renames itself "after-main"
 * (prctl), fires "main-second".  Prints "thread TID" and "main PID".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "test-events.h"

/* the thread starts once main has named it: its own rename comes last */
static pthread_mutex_t named = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&named);
	pthread_mutex_unlock(&named);
	tk_trace(test, phase, "first");
	pthread_setname_np(pthread_self(), "after-thread");
	tk_trace(test, phase, "second");
	printf("thread %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	usleep(500000);
	return NULL;
}

int main(void)
{
	pthread_t th;

	pthread_mutex_lock(&named);
	pthread_create(&th, NULL, thread_main, NULL);
	pthread_setname_np(th, "before");
	pthread_mutex_unlock(&named);
	tk_trace(test, phase, "main-first");
	prctl(PR_SET_NAME, "after-main", 0, 0, 0);
	tk_trace(test, phase, "main-second");
	pthread_join(th, NULL);
	printf("main %d\n", (int)getpid());
	return 0;
}
