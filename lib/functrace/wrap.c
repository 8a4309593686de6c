/* SPDX-License-Identifier: MIT */
/*
 * wrap.c - library calls the function tracer must see (libtracekit comes
 * before the C library in the lookup order, linked or preloaded):
 *
 *   dlopen   afterwards, the new objects' entries are patched
 *   dlclose  afterwards, the entries of unloaded objects are forgotten
 *   pthread_exit, _Unwind_RaiseException
 *            unwind through frames whose return address function_graph
 *            replaced: every replaced address is put back first (the
 *            unwinder must see the real callers); those frames then
 *            return without an exit event
 *
 * While no session asks for the tracer, dlopen tail-calls the real one so
 * that the caller it sees (for $ORIGIN and RUNPATH) is the real caller.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <unwind.h>
#include "lib/internal.h"
#include "functrace.h"

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);
typedef void (*pthread_exit_fn)(void *) __attribute__((noreturn));
typedef _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

TK_EXPORT void *dlopen(const char *file, int mode)
{
	static dlopen_fn real;
	void *h;

	if (!real)
		real = (dlopen_fn)next("dlopen");
	if (!tk_ft_active())
		return real(file, mode);
	h = real(file, mode);
	if (h)
		tk_ft_loaded();
	return h;
}

TK_EXPORT int dlclose(void *handle)
{
	static dlclose_fn real;
	int ret;

	if (!real)
		real = (dlclose_fn)next("dlclose");
	if (!tk_ft_active())
		return real(handle);
	/* nobody patches the object while it goes away */
	tk_ft_lock();
	ret = real(handle);
	tk_ft_modules_scan(false);
	tk_ft_unlock();
	return ret;
}

TK_EXPORT void pthread_exit(void *value)
{
	static pthread_exit_fn real;

	if (!real)
		real = (pthread_exit_fn)next("pthread_exit");
	tk_ft_unhook_thread();
	real(value);
}

TK_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static raise_fn real;

	if (!real)
		real = (raise_fn)next("_Unwind_RaiseException");
	if (!real)
		return _URC_FATAL_PHASE1_ERROR;
	tk_ft_unhook_thread();
	return real(e);
}
