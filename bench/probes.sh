#!/bin/sh
# bench/probes.sh [REPEAT] - dynamic probes, library calls and user
# stacks: what each costs the traced program, medians over REPEAT runs
# (default 5).  Part 13 of bench/run (bench/run --part 13), or alone.
#
#   A. per hit, 1 thread: a tracekit tracepoint recorded; a USDT probe
#      (bench-usdt.c) not attached and attached (-e usdt:...); a small
#      function (bench-func.c) without a probe, with a tracekit uprobe
#      (-e uprobe:..., arg0..arg5), with a uprobe and a uretprobe; the
#      same uprobe by perf probe + perf record and by bpftrace (a count
#      in a map).  A uprobe is a breakpoint: the kernel takes the trap,
#      runs the instruction it replaced out of line and writes the event.
#   B. library calls (bench-libcall.c: strlen through the PLT): not
#      traced; tracekit -p function and function_graph -l strlen (the
#      PLT hook alone); uftrace record --force on the plain build (uftrace
#      then hooks library calls only).
#   C. user stacks (record --ustack), bench-ustack.c with frame pointers:
#      getppid() made 2 and 8 frames deep, a kernel event each (the
#      kernel keeps 8 entries); bench:event fired 2, 8 and 32 frames deep,
#      a user event each (the runtime's walk); without and with the stack.
#
# Needs root (uprobes).  perf, bpftrace and uftrace rows need those tools
# (scripts/install-deps --bench); without one its rows say n/a and why.
# Every recording takes the tests' tracefs lock (tests/e2e/kernlib.py),
# perf's probe is removed on every way out, and uprobe_events is compared
# before and after.  Run it as the other benchmarks:
#   flock -x /tmp/tracekit-machine.lock bench/probes.sh
#
# Environment: TK_BUILD (the build directory, default build), BENCH_HITS
# (uprobe rows, default 20000: a hit costs tens of us on a VM),
# BENCH_EVENTS (tracepoint, USDT and stack rows, default 1000000),
# BENCH_CALLS (part B, default 2000000).
set -eu
cd "$(dirname "$0")/.."
REPEAT=${1:-5}
HITS=${BENCH_HITS:-20000}
EVENTS=${BENCH_EVENTS:-1000000}
CALLS=${BENCH_CALLS:-2000000}
BUILD=${TK_BUILD:-build}
TK=$BUILD/cli/tracekit
LOCK=/tmp/tracekit-tracefs.lock
TRACEFS=/sys/kernel/tracing
[ -x "$TK" ] && [ -x "$BUILD/bench/bench-ustack" ] || scripts/build >&2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracekit-pbench.XXXXXX")
mkdir "$TMP/t" "$TMP/r" # traces, results
PERF=$(command -v perf || true)
BPF=$(command -v bpftrace || true)
UF=$(command -v uftrace || true)
PERF_GROUP=tkbench
PERF_DEFINED=
cleanup() {
	if [ -n "$PERF_DEFINED" ]; then
		flock "$LOCK" "$PERF" probe -q -d "$PERF_GROUP:*" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
CFLAGS="-O2 -falign-loops=64"
cc $CFLAGS -Ibench bench/bench-usdt.c -o "$TMP/usdt" -lpthread
cc $CFLAGS bench/bench-func.c -o "$TMP/func"
cc $CFLAGS bench/bench-libcall.c -o "$TMP/libcall"
cc $CFLAGS -fpatchable-function-entry=5 bench/bench-libcall.c -o "$TMP/libcall-patch"
UPROBES_BEFORE=$(cat "$TRACEFS/uprobe_events")

nscall() { sed -n 's/^\([0-9.]*\) ns\/call.*/\1/p'; }
nsev() { sed -n 's/^ns_per_event \([0-9.]*\)$/\1/p'; }
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)] }'; }
# record OUT OPTS... -- CMD: one tracekit recording under the tracefs
# lock, the command's stdout on stdout
record() {
	out=$1
	shift
	rm -rf "$TMP/t/$out"
	flock "$LOCK" "$TK" record -q -o "$TMP/t/$out" "$@" 2>"$TMP/err" || {
		cat "$TMP/err" >&2
		exit 1
	}
}
# perf's probe on bench_leaf, defined once (removed by cleanup)
if [ -n "$PERF" ] && ! flock "$LOCK" "$PERF" probe -q -x "$TMP/func" \
	--add "$PERF_GROUP:leaf=bench_leaf" 2>"$TMP/perf.err"; then
	PERF_WHY="perf probe failed: $(head -n 1 "$TMP/perf.err")"
	echo "bench: $PERF_WHY" >&2
	PERF=
fi
[ -n "$PERF" ] && PERF_DEFINED=1
PERF_WHY=${PERF_WHY:-perf is not installed (linux-perf)}
BPF_WHY="bpftrace is not installed"
UF_WHY="uftrace is not installed"

for r in $(seq "$REPEAT"); do
	echo "bench: probes, run $r of $REPEAT" >&2
	record tp -e 'bench:*' -- "$BUILD"/bench/bench-tracepoint site "$EVENTS" | nsev >>"$TMP/r/tp"
	"$TMP/usdt" site "$EVENTS" | nsev >>"$TMP/r/usdt-off"
	record usdt -F -e "usdt:$TMP/usdt:bench:event" -- "$TMP/usdt" site "$HITS" |
		nsev >>"$TMP/r/usdt-on"
	"$TMP/func" "$HITS" | nscall >>"$TMP/r/func-off"
	record up -F -e "uprobe:$TMP/func:bench_leaf" -- "$TMP/func" "$HITS" |
		nscall >>"$TMP/r/func-up"
	record upr -F -e "uprobe:$TMP/func:bench_leaf" -e "uretprobe:$TMP/func:bench_leaf" \
		-- "$TMP/func" "$HITS" | nscall >>"$TMP/r/func-upr"
	if [ -n "$PERF" ]; then
		flock "$LOCK" "$PERF" record -q -o "$TMP/t/perf.data" -e "$PERF_GROUP:leaf" \
			-- "$TMP/func" "$HITS" 2>/dev/null | nscall >>"$TMP/r/func-perf"
	fi
	if [ -n "$BPF" ]; then
		flock "$LOCK" "$BPF" -e "uprobe:$TMP/func:bench_leaf { @n = count(); }" \
			-c "$TMP/func $HITS" 2>/dev/null | nscall >>"$TMP/r/func-bpf"
	fi
	"$TMP/libcall" "$CALLS" | nscall >>"$TMP/r/lc-plain"
	"$TMP/libcall-patch" "$CALLS" | nscall >>"$TMP/r/lc-patch"
	for t in function function_graph; do
		record "lc-$t" -b 16384 -p "$t" -l strlen -- "$TMP/libcall-patch" "$CALLS" |
			nscall >>"$TMP/r/lc-$t"
	done
	if [ -n "$UF" ]; then
		rm -rf "$TMP/t/uf"
		(cd "$TMP" && "$UF" record --force -d t/uf ./libcall "$CALLS") | nscall >>"$TMP/r/lc-uf"
	fi
	for depth in 2 8; do
		record "k$depth" -F -e syscalls:sys_enter_getppid \
			-- "$BUILD"/bench/bench-ustack syscall "$EVENTS" "$depth" | nscall >>"$TMP/r/k$depth"
		record "ku$depth" -F --ustack -e syscalls:sys_enter_getppid \
			-- "$BUILD"/bench/bench-ustack syscall "$EVENTS" "$depth" | nscall >>"$TMP/r/ku$depth"
	done
	for depth in 2 8 32; do
		record "u$depth" -b 65536 -- "$BUILD"/bench/bench-ustack event "$EVENTS" "$depth" |
			nscall >>"$TMP/r/u$depth"
		record "uu$depth" -b 65536 --ustack -- "$BUILD"/bench/bench-ustack event "$EVENTS" \
			"$depth" | nscall >>"$TMP/r/uu$depth"
	done
done

if [ -n "$PERF" ]; then
	flock "$LOCK" "$PERF" probe -q -d "$PERF_GROUP:*"
	PERF_DEFINED=
fi
row() { printf '  %-50s %10s %12s\n' "$1" "$2" "$3"; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a") print "n/a"; else printf "%.2f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf "%.2fx", a / b }'; }
m() { [ -s "$TMP/r/$1" ] && med <"$TMP/r/$1" || echo n/a; }
FOFF=$(m func-off)
UOFF=$(m usdt-off)
echo "13. Dynamic probes, library calls, user stacks (bench/probes.sh), median of $REPEAT"
echo "A. Probes, 1 thread: tracepoint $EVENTS events, probes $HITS hits"
printf '  %-50s %10s %12s\n' "" "ns/hit" "added ns"
row "tracekit tracepoint, recorded" "$(m tp)" ""
row "USDT probe, nothing attached" "$UOFF" ""
row "USDT probe, tracekit -e usdt:..." "$(m usdt-on)" "$(minus "$(m usdt-on)" "$UOFF")"
row "function call, no probe" "$FOFF" ""
row "tracekit -e uprobe:... (arg0..arg5)" "$(m func-up)" "$(minus "$(m func-up)" "$FOFF")"
row "tracekit -e uprobe: + -e uretprobe:" "$(m func-upr)" "$(minus "$(m func-upr)" "$FOFF")"
if [ -n "$PERF" ]; then
	row "perf probe -x + perf record -e" "$(m func-perf)" "$(minus "$(m func-perf)" "$FOFF")"
else
	row "perf probe -x + perf record -e" "n/a" "($PERF_WHY)"
fi
if [ -n "$BPF" ]; then
	row "bpftrace uprobe { @n = count() }" "$(m func-bpf)" "$(minus "$(m func-bpf)" "$FOFF")"
else
	row "bpftrace uprobe { @n = count() }" "n/a" "($BPF_WHY)"
fi
echo "  a tracekit uprobe hit costs $(ratio "$(minus "$(m func-up)" "$FOFF")" "$(m tp)") a recorded tracepoint"
echo "B. Library calls: strlen through the PLT, $CALLS calls"
printf '  %-50s %10s %12s %10s\n' "" "ns/call" "added ns" "vs uftrace"
LP=$(m lc-plain)
UFT=$(m lc-uf)
row "plain build, not traced" "$LP" ""
row "patchable build, not traced" "$(m lc-patch)" ""
for t in function function_graph; do
	v=$(m "lc-$t")
	printf '  %-50s %10s %12s %10s\n' "tracekit -p $t -l strlen" "$v" "$(minus "$v" "$LP")" \
		"$(ratio "$(minus "$v" "$LP")" "$(minus "$UFT" "$LP")")"
done
if [ -n "$UF" ]; then
	row "uftrace record --force ($("$UF" --version | awk '{print $2; exit}'))" "$UFT" "$(minus "$UFT" "$LP")"
else
	row "uftrace record --force" "n/a" "($UF_WHY)"
fi
echo "C. User stacks (--ustack), frame pointers, $EVENTS events"
printf '  %-50s %10s %12s\n' "" "ns/event" "stack ns"
for depth in 2 8; do
	k=$(m "k$depth")
	ku=$(m "ku$depth")
	row "getppid(), $depth frames deep, kernel event" "$k" ""
	row "  with the kernel's user stack" "$ku" "$(minus "$ku" "$k")"
done
for depth in 2 8 32; do
	u=$(m "u$depth")
	uu=$(m "uu$depth")
	row "bench:event, $depth frames deep, user event" "$u" ""
	row "  with the runtime's user stack" "$uu" "$(minus "$uu" "$u")"
done
if [ "$(cat "$TRACEFS/uprobe_events")" != "$UPROBES_BEFORE" ]; then
	echo "bench: uprobe_events changed during the run:" >&2
	cat "$TRACEFS/uprobe_events" >&2
	exit 1
fi
