#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make-seeds.sh OUTDIR - seed inputs for fuzz-trace from a real small trace.
#
# Records `prog-basic -n 20 -k` with the built tracekit and packs its
# manifest, descriptor file and each stream file into fuzz-trace's input
# format (tests/fuzz/fuzz-trace.c):
#
#   u8 flags, u16 manifest length, u16 descriptor length (little-endian),
#   manifest part, descriptor file, stream file
#
# prog-basic's and, when built, examples/readme-app's (which has a marker).
# For each stream it writes two seeds: the trace's own manifest (flags 1,
# pointed at events/1.desc and user/s) and the harness's fixed manifest
# (flags 0, empty manifest part).  Needs build/cli/tracekit and
# build/tests/progs/prog-basic (ninja -C build).
set -eu

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
case $1 in
/*) out=$1 ;;
*) out=$(pwd)/$1 ;;
esac
cd "$(dirname "$0")/../.."

for f in build/cli/tracekit build/tests/progs/prog-basic; do
	[ -x "$f" ] || { echo "$0: $f is not built" >&2; exit 1; }
done
mkdir -p "$out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-seeds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

byte() {
	# shellcheck disable=SC2059
	printf "\\$(printf '%03o' "$(($1 & 255))")"
}

u16() {
	byte "$1"
	byte "$(($1 >> 8))"
}

size() {
	wc -c <"$1" | tr -d ' '
}

# pack FLAGS MANIFEST DESC STREAM OUT
pack() {
	m=$(size "$2")
	d=$(size "$3")
	if [ "$m" -gt 65535 ] || [ "$d" -gt 65535 ]; then
		echo "$0: $5: part too large, skipped" >&2
		return 0
	fi
	{
		byte "$1"
		u16 "$m"
		u16 "$d"
		cat "$2" "$3" "$4"
	} >"$5"
}

# seeds NAME PROGRAM ARGS...: record it, write OUT/NAME-{own,fixed}-N
seeds() {
	name=$1
	shift
	rm -rf "$tmp/t"
	build/cli/tracekit record -q -o "$tmp/t" -- "$@" >/dev/null
	man=$tmp/t/tracekit.manifest
	# The first process's descriptor file and class.
	proc=$(grep '^process ' "$man" | head -n 1)
	desc=$(echo "$proc" | tr ' ' '\n' | sed -n 's/^events=//p')
	class=$(echo "$proc" | tr ' ' '\n' | sed -n 's/^class=//p')
	if [ -z "$desc" ] || [ ! -f "$tmp/t/$desc" ]; then
		echo "$0: no descriptor file in $man" >&2
		return 1
	fi
	: >"$tmp/empty"
	n=0
	grep '^stream ' "$man" >"$tmp/streams" || :
	while read -r line; do
		file=$(echo "$line" | tr ' ' '\n' | sed -n 's/^file=//p')
		sclass=$(echo "$line" | tr ' ' '\n' | sed -n 's/^class=//p')
		if [ "$sclass" != "$class" ] || [ ! -f "$tmp/t/$file" ]; then
			continue
		fi
		n=$((n + 1))
		[ "$n" -le 4 ] || break
		# Its own manifest: the one process and this stream, renamed.
		{
			grep -v -e '^process ' -e '^stream ' "$man"
			echo "$proc" | sed 's/ events=[^ ]*/ events=events\/1.desc/'
			echo "$line" | sed 's/ file=[^ ]*/ file=user\/s/'
		} >"$tmp/manifest"
		pack 1 "$tmp/manifest" "$tmp/t/$desc" "$tmp/t/$file" \
			"$out/$name-own-$n"
		# The fixed manifest has class 1.
		[ "$class" = 1 ] || continue
		pack 0 "$tmp/empty" "$tmp/t/$desc" "$tmp/t/$file" \
			"$out/$name-fixed-$n"
	done <"$tmp/streams"
}

seeds basic build/tests/progs/prog-basic -n 20 -k
# markers too, when the examples are built
if [ -x build/examples/readme-app ]; then
	seeds readme build/examples/readme-app
fi
