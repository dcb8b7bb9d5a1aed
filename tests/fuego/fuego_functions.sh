# SPDX-License-Identifier: GPL-2.0-or-later
# Test double of Fuego's shell helpers (see README.md). The board is "$BOARD_TESTDIR" here: a
# directory on this machine, whose commands run in their own session, as on a remote board.
# shellcheck shell=bash
# shellcheck disable=SC2154 # tarball, TEST_HOME, LOGDIR and BOARD_TESTDIR come from the test and Fuego

abort_job() {
	echo "*** ABORTED *** $*" >&2
	exit 1
}

assert_define() {
	local name=$1
	[ -n "${!name:-}" ] || abort_job "$name is not defined (check the spec)"
}

# A command string in the board's shell. setsid: stopping the job (its process group) leaves the
# board's processes running, as stopping Fuego's ssh does on a real board.
cmd() {
	setsid sh -c "$1" &
	wait $!
}

report() {
	{ cmd "$1"; } 2>&1 | tee -a "$LOGDIR/testlog.txt"
	return "${PIPESTATUS[0]}"
}

put() {
	local dest=${*: -1}
	mkdir -p "$dest"
	cp "${@:1:$#-1}" "$dest"
}

get() {
	cp "$1" "$2"
}

# Fuego's unpack: the test's tarball into the build directory (the current one), top directory stripped.
unpack() {
	tar xf "$TEST_HOME/$tarball" --strip-components=1
}

# Fuego's kill_procs: kill the named processes on the board. Here the board shares this machine,
# so only processes whose executable lies under $BOARD_TESTDIR are candidates (never anyone else's).
kill_procs() {
	local name pid exe
	for name in "$@"; do
		for pid in $(pgrep -x "$name"); do
			exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
			case $exe in "$BOARD_TESTDIR"/*) kill -KILL "$pid" 2>/dev/null ;; esac
		done
	done
	return 0
}

# Fuego's post_test phase calls the test's test_cleanup; its signal handler does the same when
# the job is stopped (SIGTERM from an abort or timeout, SIGHUP, SIGINT).
post_test() {
	if declare -F test_cleanup >/dev/null; then test_cleanup; fi
}

fuego_stop_handler() {
	trap - TERM HUP INT
	post_test
	echo "*** ABORTED *** stopped by a signal" >&2
	exit 143
}
trap fuego_stop_handler TERM HUP INT
