#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the sampler's libFuzzer targets (clang, ASan + UBSan) and run each for a while.
#   sh sampler/fuzz/run.sh [SECONDS_PER_TARGET] [BUILD_DIR]     (default 60 s, build-fuzz)
# The targets build and run side by side (each is one process: two cores do both in the time of one).
# Exit status non-zero when a target crashes, leaks or trips a sanitizer.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/.."
seconds=${1:-60}
build=${2:-build-fuzz}
mkdir -p "$build"
printf '#define RTGATE_VERSION "fuzz"\n' > "$build/version.h"
lib="options.c numparse.c gate.c mathfns.c histogram.c measure.c result.c maxima.c load.c out_json.c outfile.c require.c rtscan.c record.c sysinfo.c timerlat.c toolpath.c"
targets="options gate load sysinfo"

fuzz() { # build and run one target; its output in $build/fuzz_$1.out, libFuzzer's in fuzz_$1.log
	target=$1
	# The argument list is built word by word, so paths with blanks stay one word each.
	set -- -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -I"$build" -I"$src" -o "$build/fuzz_$target" "$here/fuzz_$target.c"
	for f in $lib; do set -- "$@" "$src/$f"; done
	clang "$@" -lm -lpthread || return 1
	mkdir -p "$build/corpus_$target"
	cp "$here/seeds_$target"/* "$build/corpus_$target/" 2>/dev/null || true
	"$build/fuzz_$target" -max_total_time="$seconds" -max_len=2048 -print_final_stats=1 \
		-artifact_prefix="$build/crash_$target-" "$build/corpus_$target" 2>"$build/fuzz_$target.log"
}

pids=""
for target in $targets; do
	fuzz "$target" >"$build/fuzz_$target.out" 2>&1 &
	pids="$pids $!"
done
status=0
# shellcheck disable=SC2086 # one word per PID
set -- $pids
for target in $targets; do
	rc=0
	wait "$1" || rc=$?
	shift
	echo "fuzz_$target: ${seconds}s"
	cat "$build/fuzz_$target.out"
	if [ "$rc" -ne 0 ]; then
		tail -40 "$build/fuzz_$target.log" >&2 2>/dev/null || true
		status=1
		continue
	fi
	grep -E '^stat::number_of_executed_units' "$build/fuzz_$target.log" || true
done
exit "$status"
