#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtgate LAVA test: run rtgate-sampler with its compiled gates and report every gate with
# lava-test-case. Parameters arrive as shell variables (see rtgate.yaml); each is used as
# data only: quoted, never evaluated. RTGATE_ARGS is split into words, with globbing off.
# Stopped from outside (SIGTERM, SIGINT, SIGHUP: a LAVA timeout or cancel, a lost session), it
# stops what it started (the sampler with SIGTERM, so it still writes every result) and reports
# what was measured: the sampler marks its gates INCONCLUSIVE, stopped early.
set -u

# The one child running (a download or the sampler): the traps stop it.
child=""
stopped=""
# shellcheck disable=SC2317 # called from the traps
stop() {
	stopped=$1
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
	fi
}
trap 'stop TERM' TERM
trap 'stop INT' INT
trap 'stop HUP' HUP

# Run a command in the background and wait for it; a trapped signal interrupts `wait`, so wait
# again until the child has really ended. Its exit status is in $rc.
run_child() {
	"$@" &
	child=$!
	rc=0
	wait "$child" || rc=$?
	while kill -0 "$child" 2>/dev/null; do
		rc=0
		wait "$child" || rc=$?
	done
	child=""
}

RTGATE_ARGS=${RTGATE_ARGS:-}
RTGATE_MEASUREMENT=${RTGATE_MEASUREMENT:-latency}
DURATION=${DURATION:-}
RT_PRIORITY=${RT_PRIORITY:-}
SAMPLER=${SAMPLER:-rtgate-sampler}
SAMPLER_URL=${SAMPLER_URL:-}
ALLOW_INCONCLUSIVE=${ALLOW_INCONCLUSIVE:-false}
OUTPUT_DIR=${OUTPUT_DIR:-/tmp/rtgate}

# lava-test-case inside LAVA; a plain line elsewhere, so the script runs by hand too.
report() {
	if command -v lava-test-case >/dev/null 2>&1; then
		lava-test-case "$@"
	else
		echo "lava-test-case $*"
	fi
}

test_set() {
	if command -v lava-test-set >/dev/null 2>&1; then
		lava-test-set "$@"
	fi
}

case $RTGATE_MEASUREMENT in
	*[!A-Za-z0-9_.-]* | "")
		echo "rtgate: RTGATE_MEASUREMENT must be letters, digits, '-', '_' or '.'"
		report rtgate-setup --result fail
		exit 0
		;;
esac

mkdir -p "$OUTPUT_DIR" || {
	report rtgate-setup --result fail
	exit 0
}

if [ -n "$SAMPLER_URL" ]; then
	SAMPLER="$OUTPUT_DIR/rtgate-sampler"
	if command -v wget >/dev/null 2>&1; then
		run_child wget -q -O "$SAMPLER" -- "$SAMPLER_URL"
	else
		run_child curl -fsSL -o "$SAMPLER" -- "$SAMPLER_URL"
	fi
	if [ "$rc" -ne 0 ] || [ -n "$stopped" ]; then
		echo "rtgate: cannot download the sampler"
		report rtgate-setup --result fail
		exit 0
	fi
	chmod +x "$SAMPLER"
fi

if [ -z "$RTGATE_ARGS" ]; then
	echo "rtgate: RTGATE_ARGS is empty: compile a threshold file with 'rtgate lava args'"
	report rtgate-setup --result fail
	exit 0
fi

# Words of RTGATE_ARGS become the sampler's arguments; nothing in them is run by the shell.
set -f
# shellcheck disable=SC2086 # splitting into words is the point
set -- $RTGATE_ARGS
set +f
[ -n "$DURATION" ] && set -- "$@" -D "$DURATION"
[ -n "$RT_PRIORITY" ] && set -- "$@" -p "$RT_PRIORITY"

out="$OUTPUT_DIR/$RTGATE_MEASUREMENT.out"
err="$OUTPUT_DIR/$RTGATE_MEASUREMENT.err"
run_child "$SAMPLER" "$@" -q "--json=$OUTPUT_DIR/$RTGATE_MEASUREMENT.json" >"$out" 2>"$err"
[ -n "$stopped" ] && echo "rtgate: stopped by SIG$stopped: the sampler was stopped; reporting what it measured"
if [ "$rc" -ne 0 ] || ! grep -q '^RTGATE-GATE ' "$out"; then
	echo "rtgate: the sampler failed (exit status $rc):"
	head -n 20 "$err"
	report "$RTGATE_MEASUREMENT-sampler" --result fail
	exit 0
fi

# One screen: the per-thread summary and one line per gate. Histograms stay in files.
grep '^T:' "$out" | head -n 32
test_set start "$RTGATE_MEASUREMENT"
grep '^RTGATE-GATE ' "$out" | while read -r _tag name thread status value _limit _bound _samples units reason; do
	echo "rtgate: $status $RTGATE_MEASUREMENT/${name}[$thread]: $reason"
	case $status in
		PASS) result=pass ;;
		INCONCLUSIVE)
			if [ "$ALLOW_INCONCLUSIVE" = true ]; then result=skip; else result=fail; fi
			;;
		*) result=fail ;; # FAIL, and ERROR: a gate that could not be evaluated never passes
	esac
	if [ "$value" = "-" ]; then
		report "$name-$thread" --result "$result"
	else
		report "$name-$thread" --result "$result" --measurement "$value" --units "$units"
	fi
done
test_set stop
exit 0
