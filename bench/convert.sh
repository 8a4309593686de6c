#!/bin/sh
# bench/convert.sh [REPEAT] - tracekit convert beside uftrace dump, on the
# same trace shape: bench/bench-func.c calling bench_leaf N times, traced
# with function_graph (-l bench_leaf: 2 records per call, 2N in all) by
# tracekit, and by uftrace record -P bench_leaf on the same patchable
# build.  Prints medians over REPEAT runs (default 5) of the wall time
# and records per second of:
#
#   tracekit convert --to chrome    Chrome trace event JSON
#   tracekit convert --to folded    folded stacks (self time)
#   uftrace dump --chrome           Chrome trace event JSON
#   uftrace dump --flame-graph      folded stacks
#
# each writing to a file in $TMPDIR (default /tmp), and the output sizes.
# Environment: BENCH_CALLS (default 2000000: 4 M records), BENCH_FUNC_KB
# (tracekit -b, default 16384).  uftrace's rows need uftrace (Debian
# package uftrace); without it they say n/a.
set -eu
cd "$(dirname "$0")/.."
REPEAT=${1:-5}
N=${BENCH_CALLS:-2000000}
KB=${BENCH_FUNC_KB:-16384}
TK=$(pwd)/build/cli/tracekit
[ -x "$TK" ] || scripts/build
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracekit-cbench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cc -O2 -fpatchable-function-entry=5 bench/bench-func.c -o "$TMP/patch"
UF=$(command -v uftrace || true)

now() { date +%s.%N; }
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)] }'; }
# time CMD... into file $1 (seconds)
timed() {
	f=$1
	shift
	s=$(now)
	"$@"
	e=$(now)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f\n", e - s }' >>"$TMP/$f.s"
}

"$TK" record -q -o "$TMP/tk" -b "$KB" -p function_graph -l bench_leaf -- "$TMP/patch" "$N" \
	>/dev/null 2>"$TMP/rec.err"
RECORDS=$("$TK" report "$TMP/tk" --count | awk '$2 == "total" { print $1 }')
if [ -n "$UF" ]; then
	(cd "$TMP" && "$UF" record -d uf -P bench_leaf ./patch "$N" >/dev/null)
fi
for r in $(seq "$REPEAT"); do
	echo "run $r of $REPEAT" >&2
	timed tk-chrome "$TK" convert -q --to chrome "$TMP/tk" -o "$TMP/tk.json"
	timed tk-folded "$TK" convert -q --to folded "$TMP/tk" -o "$TMP/tk.folded"
	if [ -n "$UF" ]; then
		timed uf-chrome sh -c "'$UF' dump -d '$TMP/uf' --chrome >'$TMP/uf.json'"
		timed uf-flame sh -c "'$UF' dump -d '$TMP/uf' --flame-graph >'$TMP/uf.folded'"
	fi
	rm -f "$TMP/tk.json" "$TMP/tk.folded"
	[ "$r" = "$REPEAT" ] || rm -f "$TMP/uf.json" "$TMP/uf.folded"
done
"$TK" convert -q --to chrome "$TMP/tk" -o "$TMP/tk.json"
"$TK" convert -q --to folded "$TMP/tk" -o "$TMP/tk.folded"

size() {
	[ -f "$1" ] || { echo n/a; return; }
	awk -v b="$(stat -c %s "$1")" 'BEGIN {
		if (b >= 1e6) printf "%.1f MB", b / 1e6;
		else if (b >= 1e3) printf "%.1f kB", b / 1e3; else printf "%d B", b }'
}
row() {
	t=$(med <"$TMP/$2.s" 2>/dev/null || echo n/a)
	[ -f "$TMP/$2.s" ] || t=n/a
	awk -v name="$1" -v t="$t" -v n="$RECORDS" -v size="$3" 'BEGIN {
		if (t == "n/a") printf "%-32s %10s %14s %10s\n", name, "n/a", "n/a", size;
		else printf "%-32s %10.3f %14.2f %10s\n", name, t, n / t / 1e6, size }'
}
echo "trace: $N calls of bench_leaf, $RECORDS records; medians of $REPEAT runs"
printf "%-32s %10s %14s %10s\n" "conversion" "seconds" "M records/s" "output"
row "tracekit convert --to chrome" tk-chrome "$(size "$TMP/tk.json")"
row "uftrace dump --chrome" uf-chrome "$(size "$TMP/uf.json")"
row "tracekit convert --to folded" tk-folded "$(size "$TMP/tk.folded")"
row "uftrace dump --flame-graph" uf-flame "$(size "$TMP/uf.folded")"
