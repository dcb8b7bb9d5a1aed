# SPDX-License-Identifier: GPL-2.0-or-later
# Fuego test Benchmark.rtgate: timer wake-up latency gates from an rtgate threshold file.
# The host (Fuego's container, with rtgate installed from the wheel `rtgate fuego package`
# writes) compiles the threshold file into the sampler's --gate arguments; the board needs only
# a shell and the static sampler, built from the tarball beside this file.
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # Fuego defines BOARD_TESTDIR, LOGDIR, CC, ... and reads tarball, NEED_ROOT

tarball=rtgate-sampler.tar.gz # written by `rtgate fuego package`; Fuego's unpack extracts it
NEED_ROOT=1

# Spec values reach a shell on the board inside `report`'s command string: only plain words pass.
rtgate_check_word() {
	case $2 in
		"" | *[!A-Za-z0-9_.+=,:/-]*) abort_job "spec value $1 has characters rtgate does not allow: '$2'" ;;
	esac
}

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
	RTGATE_ARGS=$(rtgate fuego args "$BENCHMARK_RTGATE_THRESHOLDS" --measurement "$BENCHMARK_RTGATE_MEASUREMENT" \
		"${duration[@]}") || abort_job "rtgate cannot compile $BENCHMARK_RTGATE_THRESHOLDS"
	local word
	for word in $RTGATE_ARGS; do
		rtgate_check_word RTGATE_ARGS "$word"
	done
	export RTGATE_ARGS
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
	put build-fuego/sampler/rtgate-sampler "$BOARD_TESTDIR/fuego.$TESTDIR/"
}

function test_run {
	local dir="$BOARD_TESTDIR/fuego.$TESTDIR"
	# On the board: the sampler's output goes to rtgate.out and its pid to rtgate.pid, so that
	# test_cleanup can stop it and fetch what it measured when Fuego stops the job; the log gets
	# the T: and RTGATE-GATE lines at the end. Results and histograms stay in rtgate.json.
	report "cd $dir && rm -f rtgate.out rtgate.json && { ./rtgate-sampler $RTGATE_ARGS -q --json=$dir/rtgate.json \
>rtgate.out 2>&1 & echo \$! >rtgate.pid; wait \$!; rc=\$?; rm -f rtgate.pid; cat rtgate.out; exit \$rc; }"
	get "$dir/rtgate.json" "$LOGDIR/"
	get "$dir/rtgate.out" "$LOGDIR/"
}

function test_processing {
	return 0 # parser.py reads the gate lines and the fetched JSON
}

# Fuego calls this after the test, also when it stops the job (abort, timeout): stop the sampler
# with SIGTERM so that it writes its results and verdicts, fetch them for parser.py, and only
# then fall back to Fuego's kill_procs for anything still running.
function test_cleanup {
	local dir="$BOARD_TESTDIR/fuego.$TESTDIR"
	cmd "if [ -f $dir/rtgate.pid ]; then pid=\$(cat $dir/rtgate.pid); kill -TERM \$pid 2>/dev/null; \
i=0; while kill -0 \$pid 2>/dev/null && [ \$i -lt 30 ]; do sleep 1; i=\$((i + 1)); done; rm -f $dir/rtgate.pid; fi" || true
	kill_procs rtgate-sampler
	cmd "test -f $dir/rtgate.out" && get "$dir/rtgate.out" "$LOGDIR/"
	cmd "test -f $dir/rtgate.json" && get "$dir/rtgate.json" "$LOGDIR/"
	return 0
}
