#!/bin/sh
# bench/functrace.sh [REPEAT] - the function tracer for user code, beside
# uftrace, on one program (bench/bench-func.c: a loop calling a small
# function N times).  Prints medians over REPEAT runs (default 5):
#
#   ns per call: plain build; patchable build, not traced; traced by
#   tracekit -p function and -p function_graph (-l bench_leaf); uftrace
#   record -P bench_leaf on the same patchable build, and on a -pg build
#   (uftrace's own mcount form); the ratio to uftrace; records lost.
#   Reading: records per second of `tracekit report` (function_graph text)
#   and `uftrace replay` (its text), each on its own recording.
#
# Environment: BENCH_CALLS (default 2000000), BENCH_FUNC_KB (tracekit -b,
# default 16384).  Needs uftrace for its rows (Debian package uftrace).
set -eu
cd "$(dirname "$0")/.."
REPEAT=${1:-5}
N=${BENCH_CALLS:-2000000}
KB=${BENCH_FUNC_KB:-16384}
TK=$(pwd)/build/cli/tracekit
[ -x "$TK" ] || scripts/build
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracekit-fbench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
CFLAGS="-O2 -falign-loops=64"
cc $CFLAGS bench/bench-func.c -o "$TMP/plain"
cc $CFLAGS -fpatchable-function-entry=5 bench/bench-func.c -o "$TMP/patch"
cc $CFLAGS -pg bench/bench-func.c -o "$TMP/pg"
UF=$(command -v uftrace || true)

nscall() { sed -n 's/^\([0-9.]*\) ns\/call.*/\1/p'; }
maxof() { sort -g | tail -1; }
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

for r in $(seq "$REPEAT"); do
	"$TMP/plain" "$N" | nscall >>"$TMP/plain.ns"
	"$TMP/patch" "$N" | nscall >>"$TMP/patch.ns"
	for t in function function_graph; do
		rm -rf "$TMP/tk-$t"
		"$TK" record -o "$TMP/tk-$t" -b "$KB" -p "$t" -l bench_leaf -- "$TMP/patch" "$N" \
			>"$TMP/out" 2>"$TMP/err"
		nscall <"$TMP/out" >>"$TMP/$t.ns"
		awk '$1 == "total" { print $3 }' "$TMP/err" >>"$TMP/$t.lost"
		awk '$1 == "total" { print $2 }' "$TMP/err" >"$TMP/$t.events"
	done
	s=$(now)
	"$TK" report "$TMP/tk-function_graph" >/dev/null
	e=$(now)
	awk -v n="$(cat "$TMP/function_graph.events")" -v s="$s" -v e="$e" \
		'BEGIN { printf "%.0f\n", n / (e - s) }' >>"$TMP/tkread"
	if [ -n "$UF" ]; then
		rm -rf "$TMP/uf-P" "$TMP/uf-pg"
		(cd "$TMP" && "$UF" record -d uf-P -P bench_leaf ./patch "$N") | nscall >>"$TMP/ufP.ns"
		(cd "$TMP" && "$UF" record -d uf-pg ./pg "$N") | nscall >>"$TMP/ufpg.ns"
		s=$(now)
		"$UF" replay -d "$TMP/uf-P" >"$TMP/replay"
		e=$(now)
		# two records (entry, exit) per call; replay prints one line per leaf call
		awk -v n="$((2 * N))" -v s="$s" -v e="$e" \
			'BEGIN { printf "%.0f\n", n / (e - s) }' >>"$TMP/ufread"
	fi
done

P=$(med <"$TMP/plain.ns")
F=$(med <"$TMP/function.ns")
G=$(med <"$TMP/function_graph.ns")
UP=$(med <"$TMP/ufP.ns" 2>/dev/null || echo n/a)
UG=$(med <"$TMP/ufpg.ns" 2>/dev/null || echo n/a)
added() { awk -v a="$1" -v p="$P" 'BEGIN { if (a == "n/a") print "n/a"; else printf "%.2f", a - p }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
echo "7. Function tracer for user code: $N calls of a small function, median of $REPEAT"
echo "   (tracekit -b $KB per thread, recorder draining to disk; uftrace $(${UF:-false} --version 2>/dev/null | head -1 | awk '{print $2}'))"
echo "                                        ns/call   added ns/call  vs uftrace -P   lost (med/max)"
printf '  %-36s %8s\n' "plain build" "$P"
printf '  %-36s %8s %12s\n' "patchable build, not traced" "$(med <"$TMP/patch.ns")" "$(added "$(med <"$TMP/patch.ns")")"
printf '  %-36s %8s %12s %14s %10s\n' "tracekit -p function" "$F" "$(added "$F")" \
	"$(ratio "$(added "$F")" "$(added "$UP")")x" "$(med <"$TMP/function.lost")/$(maxof <"$TMP/function.lost")"
printf '  %-36s %8s %12s %14s %10s\n' "tracekit -p function_graph" "$G" "$(added "$G")" \
	"$(ratio "$(added "$G")" "$(added "$UP")")x" "$(med <"$TMP/function_graph.lost")/$(maxof <"$TMP/function_graph.lost")"
printf '  %-36s %8s %12s\n' "uftrace record -P (patchable build)" "$UP" "$(added "$UP")"
printf '  %-36s %8s %12s\n' "uftrace record (-pg build)" "$UG" "$(added "$UG")"
echo "   reading                             records/s"
printf '  %-36s %10s\n' "tracekit report (function_graph)" "$(med <"$TMP/tkread")"
printf '  %-36s %10s   %sx\n' "uftrace replay" "$(med <"$TMP/ufread" 2>/dev/null || echo n/a)" \
	"$(ratio "$(med <"$TMP/tkread")" "$(med <"$TMP/ufread" 2>/dev/null || echo n/a)")"
