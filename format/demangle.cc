// SPDX-License-Identifier: MIT
/*
 * demangle.cc - C++ names for the function tracer's reports, from the
 * C++ runtime's own demangler.
 */
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>

extern "C" char *tk_demangle(const char *name)
{
	int status = 0;
	char *out;

	if (std::strncmp(name, "_Z", 2) != 0)
		return nullptr;
	out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
	if (status != 0) {
		std::free(out);
		return nullptr;
	}
	return out;
}
