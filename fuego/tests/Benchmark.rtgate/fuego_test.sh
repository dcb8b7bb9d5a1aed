# SPDX-License-Identifier: GPL-2.0-or-later
# Fuego test Benchmark.rtgate: timer wake-up latency gates from an rtgate threshold file.
# The host (Fuego's container, with rtgate installed from the wheel `rtgate fuego package`
# writes) compiles the threshold file into the board's plan: the sampler's options with their
# gates, the requirements, the loads. On the board, rtgate.sh (the same glue LAVA runs) hands the
# plan to the static sampler, which does the whole measurement as `rtgate run` does; the board
# needs a POSIX shell, the static sampler (both from the tarball beside this file) and the
# load's tool.
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # Fuego defines BOARD_TESTDIR, LOGDIR, TEST_HOME, CC, ... and reads tarball, NEED_ROOT

tarball=rtgate-sampler.tar.gz # written by `rtgate fuego package`; Fuego's unpack extracts it
NEED_ROOT=1

# Spec values reach a shell on the board inside `report`'s command string: only plain words pass.
rtgate_check_word() {
	case $2 in
		"" | *[!A-Za-z0-9_.+=,:/-]*) abort_job "spec value $1 has characters rtgate does not allow: '$2'" ;;
	esac
}

# The board parameters rtgate compiled travel single-quoted in that command string: no quote,
# backslash, '$' or backquote can be in them ('*' and ';' are data inside single quotes).
rtgate_check_param() {
	case $2 in
		*[!A-Za-z0-9_.+=,:/%*\;\ \(\)-]*) abort_job "rtgate parameter $1 has characters that cannot reach the board: '$2'" ;;
	esac
}

RTGATE_PARAMS="RTGATE_PLAN RT_PRIORITY INTERVAL THREADS AFFINITY HISTOGRAM"

function test_pre_check {
	assert_define BENCHMARK_RTGATE_THRESHOLDS
	assert_define BENCHMARK_RTGATE_MEASUREMENT
	rtgate_check_word MEASUREMENT "$BENCHMARK_RTGATE_MEASUREMENT"
	if [ -n "${BENCHMARK_RTGATE_DURATION:-}" ]; then
		rtgate_check_word DURATION "$BENCHMARK_RTGATE_DURATION"
	fi
	command -v rtgate >/dev/null || abort_job "rtgate is not installed on the host (pip install the wheel from rtgate fuego package)"
	local duration=()
	[ -n "${BENCHMARK_RTGATE_DURATION:-}" ] && duration=(--duration "$BENCHMARK_RTGATE_DURATION")
	# A board's own file lies beside the test (rtgate fuego package --thresholds: thresholds/...),
	# named in spec.json relative to the test's directory; else a path, or a file shipped with rtgate.
	local thresholds=$BENCHMARK_RTGATE_THRESHOLDS
	case $thresholds in
		/*) ;;
		*) if [ -f "$TEST_HOME/$thresholds" ]; then thresholds=$TEST_HOME/$thresholds; fi ;;
	esac
	local compiled line name value
	compiled=$(rtgate fuego args "$thresholds" --measurement "$BENCHMARK_RTGATE_MEASUREMENT" \
		--all "${duration[@]}") || abort_job "rtgate cannot compile $BENCHMARK_RTGATE_THRESHOLDS"
	# NAME='value' lines: each known name is set from its line, as data (never evaluated).
	RTGATE_BOARD_ENV=""
	while IFS= read -r line; do
		name=${line%%=*}
		value=${line#*=\'}
		value=${value%\'}
		case " $RTGATE_PARAMS " in *" $name "*) ;; *) abort_job "rtgate fuego args printed an unknown parameter $name" ;; esac
		rtgate_check_param "$name" "$value"
		# shellcheck disable=SC2089,SC2090 # the quotes are for the board's shell, in report's command string
		RTGATE_BOARD_ENV="$RTGATE_BOARD_ENV $name='$value'"
	done <<<"$compiled"
	[[ $RTGATE_BOARD_ENV == *" RTGATE_PLAN="* ]] || abort_job "rtgate fuego args printed no RTGATE_PLAN"
	# shellcheck disable=SC2090
	export RTGATE_BOARD_ENV
}

function test_build {
	# A meson cross file from Fuego's toolchain variables; static unless the spec says otherwise.
	local family
	case ${ARCHITECTURE:-x86_64} in
		arm64 | aarch64) family=aarch64 ;;
		arm*) family=arm ;;
		riscv64) family=riscv64 ;;
		x86_64 | amd64) family=x86_64 ;;
		i?86 | x86) family=x86 ;;
		*) family=${ARCHITECTURE} ;;
	esac
	local cc_words
	read -r -a cc_words <<<"${CC:-cc}"
	{
		echo "[binaries]"
		printf "c = ["
		printf "'%s', " "${cc_words[@]}"
		echo "]"
		echo "ar = '${AR:-ar}'"
		echo "[host_machine]"
		echo "system = 'linux'"
		echo "cpu_family = '$family'"
		echo "cpu = '${ARCHITECTURE:-x86_64}'"
		echo "endian = 'little'"
	} >rtgate-fuego.cross
	meson setup build-fuego --cross-file rtgate-fuego.cross -Dstatic="${BENCHMARK_RTGATE_STATIC:-true}" \
		-Dharness=disabled -Dunit_tests=false && meson compile -C build-fuego
}

function test_deploy {
	put build-fuego/sampler/rtgate-sampler lava-defs/rtgate.sh "$BOARD_TESTDIR/fuego.$TESTDIR/"
}

function test_run {
	local dir="$BOARD_TESTDIR/fuego.$TESTDIR" m="$BENCHMARK_RTGATE_MEASUREMENT"
	# On the board: rtgate.sh runs the sampler with the compiled plan; the sampler checks the
	# requirements, runs the load around its threads, records the machine and writes rtgate.out
	# (its stdout: the only source of verdicts) and <measurement>.json; rtgate.sh's pid goes to
	# rtgate.pid, so that test_cleanup can stop it (it passes the signal on: the sampler stops the
	# load and reports what it measured).
	report "cd $dir && rm -f rtgate.out rtgate.err $m.json && \
{ env $RTGATE_BOARD_ENV SAMPLER=$dir/rtgate-sampler OUTPUT_DIR=$dir sh ./rtgate.sh & \
echo \$! >rtgate.pid; wait \$!; rc=\$?; rm -f rtgate.pid; exit \$rc; }"
	rtgate_fetch
}

# What the board wrote, for parser.py; a file the run did not write is simply absent.
rtgate_fetch() {
	local dir="$BOARD_TESTDIR/fuego.$TESTDIR" f
	for f in rtgate.out "$BENCHMARK_RTGATE_MEASUREMENT.json"; do
		cmd "test -f $dir/$f" && get "$dir/$f" "$LOGDIR/"
	done
	return 0
}

function test_processing {
	return 0 # parser.py reads the gate lines and the fetched JSON
}

# Fuego calls this after the test, also when it stops the job (abort, timeout): stop rtgate.sh
# with SIGTERM (it stops the sampler, which writes its results and verdicts, then the load),
# fetch what they wrote for parser.py, and only then fall back to Fuego's kill_procs.
function test_cleanup {
	local dir="$BOARD_TESTDIR/fuego.$TESTDIR"
	cmd "if [ -f $dir/rtgate.pid ]; then pid=\$(cat $dir/rtgate.pid); kill -TERM \$pid 2>/dev/null; \
i=0; while kill -0 \$pid 2>/dev/null && [ \$i -lt 30 ]; do sleep 1; i=\$((i + 1)); done; rm -f $dir/rtgate.pid; fi" || true
	kill_procs rtgate-sampler
	rtgate_fetch
}
