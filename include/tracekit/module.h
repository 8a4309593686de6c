/* SPDX-License-Identifier: MIT */
/*
 * tracekit/module.h - register the events of the module (program or
 * shared object) that includes it.
 *
 * Events and markers are descriptors in the module's "tk_meta" section
 * and call sites in its "tk_keys" section; the runtime learns them from a
 * constructor that each file including this header carries (the
 * registry counts the files, so a module registers once, and leaves when
 * its last file's destructor runs).  tracepoint.h and marker.h include
 * it, so that a file that only uses tk_mark() registers its markers too.
 */
#ifndef TRACEKIT_MODULE_H
#define TRACEKIT_MODULE_H

#include "runtime.h"

#ifndef TK__IN_LIBRARY
TK__C_BEGIN
extern const char __start_tk_meta[] __attribute__((weak, visibility("hidden")));
extern const char __stop_tk_meta[] __attribute__((weak, visibility("hidden")));
extern const char __start_tk_keys[] __attribute__((weak, visibility("hidden")));
extern const char __stop_tk_keys[] __attribute__((weak, visibility("hidden")));
TK__C_END

TK__NOTRACE __attribute__((constructor, unused)) static void
tk__module_ctor(void)
{
	tk__module_register(__start_tk_meta, __stop_tk_meta, __start_tk_keys,
			    __stop_tk_keys);
}

TK__NOTRACE __attribute__((destructor, unused)) static void
tk__module_dtor(void)
{
	tk__module_unregister(__start_tk_meta, __stop_tk_meta);
}
#endif

#endif /* TRACEKIT_MODULE_H */
