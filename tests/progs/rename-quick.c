/* SPDX-License-Identifier: MIT */
/*
 * rename-quick.c - test program: threads renamed right after their first
 * event, and gone before the recorder looks at their names again.
 *
 *   prog-rename-quick
 *
 * Two threads each fire app:before, rename themselves "worker-N"
 * (pthread_setname_np), fire app:after and end at once; then the main
 * thread does the same, renaming itself "renamed".  Prints "worker N TID"
 * for each thread and "main PID".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <tracekit/tracekit.h>

static void *worker(void *arg)
{
	char name[16];
	int n = (int)(long)arg;

	tk_mark(app_before, "worker %d", n);
	snprintf(name, sizeof(name), "worker-%d", n);
	pthread_setname_np(pthread_self(), name);
	tk_mark(app_after, "worker %d", n);
	printf("worker %d %ld\n", n, (long)syscall(SYS_gettid));
	return NULL;
}

int main(void)
{
	for (long n = 0; n < 2; n++) {
		pthread_t th;

		pthread_create(&th, NULL, worker, (void *)n);
		pthread_join(th, NULL);
	}
	tk_mark(app_before, "main");
	pthread_setname_np(pthread_self(), "renamed");
	tk_mark(app_after, "main");
	printf("main %d\n", (int)getpid());
	return 0;
}
