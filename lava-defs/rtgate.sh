#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtgate board glue (LAVA, and Fuego's Benchmark.rtgate). Everything a measurement does on the
# board (requirements, competing real-time tasks, loads and their levels, the machine's record,
# the gates) happens inside rtgate-sampler, the engine `rtgate run` runs too: this script fetches
# it, hands it the compiled plan (RTGATE_PLAN, from `rtgate lava args`) and the named parameters,
# each as one word the engine parses itself, and turns its RTGATE lines into lava-test-case results.
# A parameter that is not what its name says is ERROR for every gate, from the engine.
# Stopped from outside (SIGTERM, SIGINT, SIGHUP), it passes the signal on: the engine stops its
# loads, writes what it measured and still prints every gate.
# LAVA's run.sh has `set -e -x`, and an inline definition runs this script in a subshell of it:
# every failure here is handled, so -e is off, and -x (a trace of every line) too.
set +ex
set -u

OUTPUT_DIR=${OUTPUT_DIR:-/tmp/rtgate}
SAMPLER=${SAMPLER:-rtgate-sampler}
# The parameters the engine checks (empty: not given); PRIORITY is refused by it, renamed RT_PRIORITY.
NAMED="DURATION RT_PRIORITY PRIORITY INTERVAL THREADS AFFINITY HISTOGRAM"

child="" stopped=""
# shellcheck disable=SC2317 # called from the traps
stop() {
	stopped=$1
	[ -z "$child" ] || kill -"$1" "$child" 2>/dev/null
}
trap 'stop TERM' TERM
trap 'stop INT' INT
trap 'stop HUP' HUP

# Run a command in the background and wait for it; a trapped signal interrupts `wait` and is
# passed on, so wait again until the child has really ended. Its exit status is in $rc.
run_child() {
	"$@" &
	child=$!
	[ -z "$stopped" ] || kill -"$stopped" "$child" 2>/dev/null # a signal before $! was known
	rc=0
	wait "$child" || rc=$?
	while kill -0 "$child" 2>/dev/null; do
		rc=0
		wait "$child" || rc=$?
	done
	child=""
}

# Text safe to show on LAVA's console: control characters become '?', "<LAVA_" "?LAVA_".
clean() {
	tr '\000-\011\013-\037\177' '?' | sed 's/<LAVA_/?LAVA_/g'
}

# lava-test-case inside LAVA; a plain line elsewhere, so the script runs by hand and under Fuego.
report() {
	if command -v lava-test-case >/dev/null 2>&1; then lava-test-case "$@"; else echo "lava-test-case $*"; fi
}
test_set() {
	! command -v lava-test-set >/dev/null 2>&1 || lava-test-set "$@"
}
setup_failed() {
	echo "rtgate: $1"
	report rtgate-setup --result fail
	exit 0
}

mkdir -p "$OUTPUT_DIR" || setup_failed "cannot create OUTPUT_DIR"
if [ -n "${SAMPLER_URL:-}" ]; then
	SAMPLER="$OUTPUT_DIR/rtgate-sampler"
	if command -v wget >/dev/null 2>&1; then
		run_child wget -q -O "$SAMPLER" -- "$SAMPLER_URL"
	else
		run_child curl -fsSL -o "$SAMPLER" -- "$SAMPLER_URL"
	fi
	if [ "$rc" -ne 0 ] || [ -n "$stopped" ] || ! chmod +x "$SAMPLER"; then
		setup_failed "cannot download the sampler"
	fi
fi
[ -n "${RTGATE_PLAN:-}" ] || setup_failed "RTGATE_PLAN is empty: compile a threshold file with 'rtgate lava args'"

set -- --plan="$RTGATE_PLAN" --output-dir="$OUTPUT_DIR"
for name in $NAMED; do
	eval "value=\${$name:-}" # $name is one of this script's own words, never input
	[ -z "$value" ] || set -- "$@" --param="$name=$value"
done
out="$OUTPUT_DIR/rtgate.out"
err="$OUTPUT_DIR/rtgate.err"
run_child "$SAMPLER" "$@" >"$out" 2>"$err"
[ -z "$stopped" ] || echo "rtgate: stopped by SIG$stopped: the sampler was stopped; reporting what it measured"

# Only the engine's stdout, and only lines of the expected form, are verdicts.
verdict='^RTGATE-GATE [A-Za-z0-9_.+-]+ [A-Za-z0-9_.+-]+ (PASS|FAIL|INCONCLUSIVE|ERROR) (-|[0-9][0-9.e+-]*) [^ ]+ [^ ]+ [0-9]+ [A-Za-z%]+ '
# One screen: the per-thread summary, the record, then the engine's verdict lines (it escapes what
# it echoes; cleaned again all the same). The verdicts come last: LAVA's interactive tests search
# only the tail of what arrived for them. Histograms stay in files.
grep '^T:' "$out" | head -n 32 | clean
grep '^rtgate: ENVIRONMENT ' "$out" | clean
grep '^rtgate: ' "$out" | grep -v '^rtgate: ENVIRONMENT ' | clean
if ! grep -Eq "$verdict" "$out"; then # the plan itself was refused, or the sampler did not run
	echo "rtgate: the sampler gave no verdict (exit status $rc):"
	head -n 20 "$err" | clean | sed 's/^/rtgate-sampler: /'
	setup_failed "no gate was measured"
fi
grep -E "^RTGATE-(BEGIN|END) [A-Za-z0-9_.-]+\$|$verdict" "$out" |
	while read -r _tag name thread status value _limit _bound _samples units _why; do
		case $_tag in
			RTGATE-BEGIN)
				test_set start "$name"
				continue
				;;
			RTGATE-END)
				test_set stop
				continue
				;;
		esac
		result=fail # FAIL, and ERROR: a gate that could not be evaluated never passes
		[ "$status" != PASS ] || result=pass
		[ "$status" != INCONCLUSIVE ] || [ "${ALLOW_INCONCLUSIVE:-false}" != true ] || result=skip
		if [ "$value" = "-" ]; then
			report "$name-$thread" --result "$result"
		else
			report "$name-$thread" --result "$result" --measurement "$value" --units "$units"
		fi
	done
exit 0
