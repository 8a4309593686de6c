/* SPDX-License-Identifier: MIT */
/*
 * funcburst.c - a burst of function calls from one thread, as a small
 * interpreter makes them running a short script, then exit.  For the
 * function tracer's tests (exact call counts) and bench/run (loss at
 * default settings).  Built as real programs are: -O2 and
 * -fpatchable-function-entry=5 (tests/progs/meson.build); it does not
 * link libtracekit.
 *
 *   prog-funcburst [RECORDS]      (default 4186: 449,987 calls)
 *
 * The script, evaluated by a tree-walking evaluator over boxed values
 * (malloc/free) and a hash table of variables, for each of RECORDS
 * records r:
 *
 *   line = "inventory/item-%05d;price=%.2f;qty=%d;discount=%d"
 *                                          read_record, make_key (snprintf)
 *   key, price, qty, discount from line    parse_record (sscanf)
 *   count[key] += 1                        tbl_get, hash_str, str_eq
 *   price, qty, discount into variables    var_set
 *   total = total + (price * qty) % 1000 - discount
 *                                          eval, val_new/free, op_*, var_*
 *   a row "key price x qty = total"        format_row (snprintf), row_crc
 *   if (total % 97 < 3) a line "key total" emit_line, put_digits, buf_puts
 *   every 2nd record, checkpoint()         walk_table: the whole count table
 *
 * Functions of every size, from one-line operators to the recursive
 * evaluator, formatters, a bitwise CRC and a table walk: 25-40 ns a call
 * on average untraced on a 2.1 GHz x86-64 VM, so that traced by -p
 * function at default settings it makes about 15 M calls/s for about 30 ms
 * there.  Each function counts its own calls (none is inlined or cloned);
 * main is traced too, once.  At exit it prints:
 *
 *   calls NAME N      one line per function, N > 0
 *   total_calls N     their sum
 *   library_calls N   the calls it made of library functions (malloc,
 *                     snprintf...: -p function records them too)
 *   seconds S         wall time of the script (CLOCK_MONOTONIC)
 *   rate R            total_calls / seconds
 *   checksum X        depends on nothing but RECORDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __clang__
#define TRACED __attribute__((noinline, used))
#else
#define TRACED __attribute__((noinline, noclone, used))
#endif

#define FUNCS(X)                                                            \
	X(run_script) X(run_record) X(read_record) X(parse_record) X(make_key) X(put_digits) X(hash_str)   \
	X(str_eq) X(tbl_get) X(tbl_insert) X(var_set) X(var_get) X(eval) X(val_new) X(val_free)  \
	X(eval_num) X(eval_var) X(op_add) X(op_sub) X(op_mul) X(op_mod)     \
	X(op_lt) X(format_row) X(row_crc) X(emit_line) X(buf_puts) X(checkpoint) X(walk_table)

#define ENUM(name) F_##name,
enum { FUNCS(ENUM) NFUNCS };
#define NAME(name) #name,
static const char *const func_names[] = { FUNCS(NAME) };
static unsigned long calls[NFUNCS];
/* Calls of library functions through the PLT, which the function tracer
 * records too (unless --no-libcall): counted where they are made. */
static unsigned long lib_calls;
#define LIB(call) (lib_calls++, (call))
#define COUNT(name) (calls[F_##name]++)

/* ---- a hash table of string keys to long values ---- */
#define TBL_SIZE 2048 /* power of two */
struct slot {
	char key[24];
	long val;
	int used;
};
struct table {
	struct slot s[TBL_SIZE];
	unsigned n;
};

TRACED static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a, then a final mix */

	COUNT(hash_str);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return h;
}

TRACED static int str_eq(const char *a, const char *b)
{
	COUNT(str_eq);
	return LIB(strcmp(a, b)) == 0;
}

TRACED static struct slot *tbl_insert(struct table *t, unsigned i, const char *key)
{
	COUNT(tbl_insert);
	LIB(snprintf(t->s[i].key, sizeof(t->s[i].key), "%s", key));
	t->s[i].val = 0;
	t->s[i].used = 1;
	t->n++;
	return &t->s[i];
}

/* The slot of KEY, made if absent. */
TRACED static struct slot *tbl_get(struct table *t, const char *key)
{
	unsigned i = hash_str(key) & (TBL_SIZE - 1);

	COUNT(tbl_get);
	for (;;) {
		if (!t->s[i].used)
			return tbl_insert(t, i, key);
		if (str_eq(t->s[i].key, key))
			return &t->s[i];
		i = (i + 1) & (TBL_SIZE - 1);
	}
}

/* ---- the evaluator ---- */
enum kind { N_NUM, N_VAR, N_ADD, N_SUB, N_MUL, N_MOD, N_LT };
struct node {
	enum kind kind;
	long num;
	const char *name;
	const struct node *l, *r;
};

static struct table vars, counts;

TRACED static void var_set(const char *name, long v)
{
	COUNT(var_set);
	tbl_get(&vars, name)->val = v;
}

TRACED static long var_get(const char *name)
{
	COUNT(var_get);
	return tbl_get(&vars, name)->val;
}

/* Values are boxed, as in most interpreters: each operator frees its
 * operands and returns a new value. */
struct value {
	long v;
};

TRACED static struct value *val_new(long v)
{
	struct value *x = LIB(malloc(sizeof(*x)));

	COUNT(val_new);
	if (!x)
		abort();
	x->v = v;
	return x;
}

TRACED static long val_free(struct value *x)
{
	long v = x->v;

	COUNT(val_free);
	lib_calls++;
	free(x);
	return v;
}

#define BINOP(name, expr)                                                   \
	TRACED static struct value *name(struct value *x, struct value *y)  \
	{                                                                   \
		long a = val_free(x), b = val_free(y);                      \
                                                                            \
		COUNT(name);                                                \
		return val_new(expr);                                       \
	}
BINOP(op_add, a + b)
BINOP(op_sub, a - b)
BINOP(op_mul, a * b)
BINOP(op_mod, b ? a % b : 0)
BINOP(op_lt, a < b)

TRACED static struct value *eval_num(const struct node *n)
{
	COUNT(eval_num);
	return val_new(n->num);
}

TRACED static struct value *eval_var(const struct node *n)
{
	COUNT(eval_var);
	return val_new(var_get(n->name));
}

TRACED static struct value *eval(const struct node *n)
{
	struct value *a, *b;

	COUNT(eval);
	switch (n->kind) {
	case N_NUM:
		return eval_num(n);
	case N_VAR:
		return eval_var(n);
	default:
		break;
	}
	a = eval(n->l);
	b = eval(n->r);
	switch (n->kind) {
	case N_ADD:
		return op_add(a, b);
	case N_SUB:
		return op_sub(a, b);
	case N_MUL:
		return op_mul(a, b);
	case N_MOD:
		return op_mod(a, b);
	default:
		return op_lt(a, b);
	}
}

/* ---- output ---- */
static char out[1 << 16];
static size_t out_len;

TRACED static char *put_digits(char *p, unsigned long v)
{
	char tmp[24];
	int n = 0;

	COUNT(put_digits);
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	*p = 0;
	return p;
}

TRACED static void buf_puts(const char *s)
{
	size_t n = LIB(strlen(s));

	COUNT(buf_puts);
	if (out_len + n >= sizeof(out))
		out_len = 0; /* the script's output is not kept */
	LIB(memcpy(out + out_len, s, n));
	out_len += n;
}

TRACED static void emit_line(const char *key, long total)
{
	char num[24];

	COUNT(emit_line);
	buf_puts(key);
	buf_puts(" ");
	put_digits(num, (unsigned long)total);
	buf_puts(num);
	buf_puts("\n");
}

static uint32_t out_crc;

/* CRC-32 (bit by bit) of each row, as a journal would check it. */
TRACED static uint32_t row_crc(uint32_t crc, const char *s, size_t n)
{
	COUNT(row_crc);
	crc = ~crc;
	while (n--) {
		crc ^= (unsigned char)*s++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

TRACED static void format_row(const char *key, double price, long qty, long total)
{
	char line[96];
	int n;

	COUNT(format_row);
	n = LIB(snprintf(line, sizeof(line), "%-24s %8.2f x %ld = %10ld\n", key, price, qty,
			  total));
	out_crc = row_crc(out_crc, line, (size_t)n);
	buf_puts(line);
}

TRACED static char *make_key(char *buf, size_t size, long r)
{
	COUNT(make_key);
	LIB(snprintf(buf, size, "inventory/item-%05ld", r % 640));
	return buf;
}

TRACED static long walk_table(const struct table *t)
{
	long s = 0;

	COUNT(walk_table);
	for (unsigned i = 0; i < TBL_SIZE; i++)
		if (t->s[i].used)
			s += t->s[i].val * (long)(i + 1);
	return s;
}

static long check;

TRACED static void checkpoint(void)
{
	COUNT(checkpoint);
	check ^= walk_table(&counts);
}

#define NUM(v) { N_NUM, v, NULL, NULL, NULL }
#define VAR(s) { N_VAR, 0, s, NULL, NULL }
#define OP(k, a, b) { k, 0, NULL, a, b }
static const struct node n_total = VAR("script.record.total"), n_price = VAR("script.record.price"),
	n_qty = VAR("script.record.qty"), n_discount = VAR("script.record.discount"), n_1000 = NUM(1000),
	n_97 = NUM(97), n_3 = NUM(3), n_mul = OP(N_MUL, &n_price, &n_qty),
	n_mod = OP(N_MOD, &n_mul, &n_1000), n_add = OP(N_ADD, &n_total, &n_mod),
	/* total + (price * qty) % 1000 - discount */
	e_total = OP(N_SUB, &n_add, &n_discount),
	n_tmod = OP(N_MOD, &n_total, &n_97),
	/* total % 97 < 3 */
	e_emit = OP(N_LT, &n_tmod, &n_3);

/* The script's input: record R as a line of text. */
TRACED static int read_record(long r, char *line, size_t size)
{
	char key[24];
	long cents = (r * 37) % 1000;

	COUNT(read_record);
	make_key(key, sizeof(key), r);
	return LIB(snprintf(line, size, "%s;price=%ld.%02ld;qty=%ld;discount=%ld", key,
			    cents / 100, cents % 100, r % 7 + 1, r % 5));
}

TRACED static int parse_record(const char *line, char *key, double *price, long *qty,
			       long *discount)
{
	COUNT(parse_record);
	return LIB(sscanf(line, "%23[^;];price=%lf;qty=%ld;discount=%ld", key, price, qty,
			  discount)) == 4;
}

TRACED static void run_record(long r)
{
	char line[96], key[24];
	double price;
	long qty, discount;

	COUNT(run_record);
	read_record(r, line, sizeof(line));
	if (!parse_record(line, key, &price, &qty, &discount))
		abort();
	tbl_get(&counts, key)->val++;
	var_set("script.record.price", (long)(price * 100 + 0.5));
	var_set("script.record.qty", qty);
	var_set("script.record.discount", discount);
	var_set("script.record.total", val_free(eval(&e_total)));
	format_row(key, price, qty, var_get("script.record.total"));
	if (val_free(eval(&e_emit)))
		emit_line(key, var_get("script.record.total"));
	if (r % 2 == 1)
		checkpoint();
}

TRACED static void run_script(long records)
{
	COUNT(run_script);
	var_set("script.record.total", 0);
	for (long r = 0; r < records; r++)
		run_record(r);
}

int main(int argc, char **argv)
{
	long records = argc > 1 ? atol(argv[1]) : 4186;
	struct timespec a, b;
	unsigned long total = 0;
	long final;
	double s;

	if (records < 1) {
		fprintf(stderr, "usage: prog-funcburst [RECORDS]\n");
		return 2;
	}
	LIB(clock_gettime(CLOCK_MONOTONIC, &a));
	run_script(records);
	LIB(clock_gettime(CLOCK_MONOTONIC, &b));
	final = var_get("script.record.total");
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	for (int i = 0; i < NFUNCS; i++) {
		if (calls[i])
			LIB(printf("calls %s %lu\n", func_names[i], calls[i]));
		total += calls[i];
	}
	lib_calls += 2; /* this printf and the next */
	printf("total_calls %lu\nlibrary_calls %lu\nseconds %.6f\nrate %.0f\n", total, lib_calls,
	       s, (double)total / s);
	printf("checksum %ld %ld %zu %08x\n", check, final, out_len, (unsigned)out_crc);
	return 0;
}
