# Fuego test Benchmark.rtgate: timer wake-up latency gates from an rtgate threshold file.
# The host (Fuego's container, with `pip install rtgate`) compiles the threshold file into
# the sampler's --gate arguments; the board needs only a shell and the static sampler.
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # Fuego defines BOARD_TESTDIR, LOGDIR, CC, ... and reads gitrepo, NEED_ROOT

gitrepo="${BENCHMARK_RTGATE_GITREPO:-https://git.example.org/rtgate.git}"
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
	command -v rtgate >/dev/null || abort_job "rtgate is not installed on the host (pip install rtgate)"
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
	# Results and histograms stay in files (fetched back); the log gets T: and RTGATE-GATE lines.
	report "cd $dir && ./rtgate-sampler $RTGATE_ARGS -q --json=$dir/rtgate.json"
	get "$dir/rtgate.json" "$LOGDIR/"
}

function test_processing {
	return 0 # parser.py reads the gate lines and the fetched JSON
}
