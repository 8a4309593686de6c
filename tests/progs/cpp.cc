// SPDX-License-Identifier: MIT
//
// cpp.cc - test program: the instrumentation API from C++17, built with
// -Wall -Wextra -Werror.
//
//   prog-cpp
//
// Fires, in this order:
//   cpp:kinds  once, with known values of every field kind
//   cpp:item   for i = 0..4, from a member function, name "item-<i>",
//              twice = 2 * i (a field computed from an argument), then
//              for i = 0..1 with name "late-<i>" once the probes are gone
//   markers    cpp_hello "hello %s %d" ("c++", 17), cpp_value "v=%f p=%p
//              u=%u" (0.75, 0xbeef, 3000000000u), cpp_none "no args"
// Two probes on cpp:item, a static function and a capture-less lambda,
// count their calls and sum i; the program prints
//   probe_static CALLS SUM
//   probe_lambda CALLS SUM
// and exits 1 if a connect or disconnect did not answer as it should.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
#include <tracekit/tracekit.h>

TK_EVENT(cpp, kinds,
	TK_PROTO(int8_t a, int64_t b, uint16_t c, uint64_t d, const void *p,
		 double x, const char *tag, const char *s, const void *bytes,
		 uint32_t nbytes),
	TK_ARGS(a, b, c, d, p, x, tag, s, bytes, nbytes),
	TK_FIELDS(
		tk_field_int(int8_t, a, a)
		tk_field_int(int64_t, b, b)
		tk_field_int(uint16_t, c, c)
		tk_field_int(uint64_t, d, d)
		tk_field_ptr(p, p)
		tk_field_double(x, x)
		tk_field_chars(tag, tag, 6)
		tk_field_string(s, s)
		tk_field_bytes(bytes, bytes, nbytes)),
	TK_PRINT("a=%d b=%ld c=%u d=%lu p=%p x=%g tag=%s s=%s", a, b, c, d, p,
		 x, tag, s))

TK_EVENT(cpp, item,
	TK_PROTO(uint32_t i, const char *name),
	TK_ARGS(i, name),
	TK_FIELDS(
		tk_field_int(uint32_t, i, i)
		tk_field_int(uint64_t, twice, (uint64_t)i * 2)
		tk_field_string(name, name)),
	TK_PRINT("i=%u twice=%lu name=%s", i, twice, name))

namespace {

struct Counter {
	unsigned calls = 0;
	unsigned long sum = 0;
};

void static_probe(void *data, uint32_t i, const char *name)
{
	auto *c = static_cast<Counter *>(data);

	if (name && std::string(name) == "item-" + std::to_string(i)) {
		c->calls++;
		c->sum += i;
	}
}

class Worker {
public:
	explicit Worker(std::string prefix) : prefix_(std::move(prefix)) {}

	void run(uint32_t n)
	{
		for (uint32_t i = 0; i < n; i++) {
			std::string name = prefix_ + std::to_string(i);

			tk_trace(cpp, item, i, name.c_str());
		}
	}

private:
	std::string prefix_;
};

} // namespace

int main()
{
	static const unsigned char bytes[] = { 1, 2, 3 };
	Counter by_static, by_lambda;
	const std::string s = "from std::string";
	int ret = 0;

	tk_trace(cpp, kinds, int8_t(-5), int64_t(-9000000000LL), uint16_t(65535),
		 uint64_t(12345678901234ULL),
		 reinterpret_cast<const void *>(uintptr_t(0xcafe)), 1.25,
		 "abcdefgh", s.c_str(), bytes, uint32_t(sizeof(bytes)));

	auto lambda = +[](void *data, uint32_t i, const char *name) {
		auto *c = static_cast<Counter *>(data);

		if (name) {
			c->calls++;
			c->sum += i;
		}
	};
	if (tk_probe_connect(cpp, item, static_probe, &by_static) != 0 ||
	    tk_probe_connect(cpp, item, lambda, &by_lambda) != 0)
		ret = 1;
	if (tk_probe_connect(cpp, item, lambda, &by_lambda) == 0)
		ret = 1; // already connected: -EEXIST
	Worker("item-").run(5);
	if (tk_probe_disconnect(cpp, item, static_probe, &by_static) != 0 ||
	    tk_probe_disconnect(cpp, item, lambda, &by_lambda) != 0)
		ret = 1;
	if (tk_probe_disconnect(cpp, item, static_probe, &by_static) == 0)
		ret = 1; // no longer connected: -ENOENT
	Worker("late-").run(2);

	tk_mark(cpp_hello, "hello %s %d", "c++", 17);
	tk_mark(cpp_value, "v=%f p=%p u=%u", 0.75,
		reinterpret_cast<void *>(uintptr_t(0xbeef)), 3000000000u);
	tk_mark(cpp_none, "no args");

	std::printf("probe_static %u %lu\n", by_static.calls, by_static.sum);
	std::printf("probe_lambda %u %lu\n", by_lambda.calls, by_lambda.sum);
	std::printf("version %s\n", tk_version());
	std::fflush(stdout);
	return ret;
}
