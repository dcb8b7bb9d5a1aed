# Test double of Fuego's shell helpers (see README.md). The board is "$BOARD_TESTDIR" here.
# shellcheck shell=bash

abort_job() {
	echo "*** ABORTED *** $*" >&2
	exit 1
}

assert_define() {
	local name=$1
	[ -n "${!name:-}" ] || abort_job "$name is not defined (check the spec)"
}

cmd() {
	sh -c "$1"
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
