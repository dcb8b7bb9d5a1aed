#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtgate board test (LAVA, and Fuego's Benchmark.rtgate): what `rtgate run` does, in POSIX sh.
# Checks the measurement's requirements (RTGATE_REQUIRE), starts its load (RTGATE_LOAD), waits
# for the warm-up, runs rtgate-sampler with its compiled gates (RTGATE_ARGS), checks the load's
# level (its CPUs' busy share from /proc/stat, or stress-ng's own rate), stops the load whatever
# happens, records the machine and the level reached, and reports every gate with lava-test-case.
# A requirement not met, a load that cannot run or did not hold its level, or a named parameter
# that contradicts RTGATE_ARGS makes every gate ERROR (reported as fail), never a pass.
# Parameters arrive as shell variables (see rtgate.yaml); each is used as data only: quoted, never
# evaluated; lists are split into words with globbing off. Anything echoed from input or from
# the sampler's stderr has its control characters and "<LAVA_" replaced, and sampler stderr lines
# are prefixed, so it can forge neither a console verdict line nor a LAVA signal. Stopped from
# outside (SIGTERM, SIGINT, SIGHUP), it stops the sampler with SIGTERM (so it still writes every
# result), then the load, and reports.
# LAVA's run.sh has `set -e -x`, and an inline definition runs this script in a subshell of it:
# every failure here is handled, so -e is off, and -x (a trace of every line) too.
set +ex
set -u

child=""   # the one foreground child (a download, a sleep or the sampler): the traps stop it
stopped="" # the signal that stopped us
load_pid=""
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
RTGATE_LOAD=${RTGATE_LOAD:-}
RTGATE_REQUIRE=${RTGATE_REQUIRE:-}
RTGATE_MEASURED_CPUS=${RTGATE_MEASURED_CPUS:-}
DURATION=${DURATION:-}
PRIORITY=${PRIORITY:-}
INTERVAL=${INTERVAL:-}
THREADS=${THREADS:-}
AFFINITY=${AFFINITY:-}
HISTOGRAM=${HISTOGRAM:-}
SAMPLER=${SAMPLER:-rtgate-sampler}
SAMPLER_URL=${SAMPLER_URL:-}
ALLOW_INCONCLUSIVE=${ALLOW_INCONCLUSIVE:-false}
OUTPUT_DIR=${OUTPUT_DIR:-/tmp/rtgate}

# Text from input, safe to echo on one line: control characters (newlines too) become '?', and
# "<LAVA_" "?LAVA_", so that no echoed text is a LAVA signal.
clean() {
	printf '%s' "$*" | tr '\000-\037\177' '?' | sed 's/<LAVA_/?LAVA_/g'
}

# lava-test-case inside LAVA; a plain line elsewhere, so the script runs by hand and under Fuego.
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
M=$RTGATE_MEASUREMENT

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

# ---------------------------------------------------------------- what the board is

# "0-2,5" (flags such as managed_irq skipped) -> "0 1 2 5"
expand_cpus() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r lo hi; do
		case $lo in "" | *[!0-9]*) continue ;; esac
		case ${hi:-$lo} in *[!0-9]*) continue ;; esac
		i=$lo
		while [ "$i" -le "${hi:-$lo}" ]; do
			printf '%s ' "$i"
			i=$((i + 1))
		done
	done
}

read_file() { # first line of a file, or nothing; NUL bytes (devicetree strings) become spaces
	[ -r "$1" ] && head -c 4096 "$1" 2>/dev/null | tr '\000\n' '  ' | sed 's/ *$//'
}

# "1 2 3" -> "[1,2,3]"; a JSON string of any text
json_list() {
	list=""
	for x in $1; do list="$list,$x"; done
	printf '[%s]' "${list#,}"
}
# Quotes, backslashes and '<' '>' as \u escapes: LAVA's server log escapes every '"' of a console
# line as '\"', which `rtgate lava results` undoes only when no '\"' came from the board itself.
json_str() {
	printf '"%s"' "$(printf '%s' "$1" | tr '\000-\037\177' ' ' | sed 's/\\/\\u005c/g; s/"/\\u0022/g; s/</\\u003c/g; s/>/\\u003e/g')"
}
json_str_or_null() {
	if [ -n "$1" ]; then json_str "$1"; else printf 'null'; fi
}
json_strs() { # newline-separated text -> a JSON list of strings; $2: a format for each ("%s")
	first=1
	printf '['
	while IFS= read -r s; do
		[ -n "$s" ] || continue
		[ "$first" = 1 ] || printf ','
		# shellcheck disable=SC2059 # the format is one of this script's own
		printf "${2:-%s}" "$(json_str "$s")"
		first=0
	done <<EOF
$1
EOF
	printf ']'
}

kernel_release=$(uname -r)
kernel_version=$(uname -v)
architecture=$(uname -m)
cmdline=$(read_file /proc/cmdline)
if [ "$(read_file /sys/kernel/realtime)" = 1 ]; then
	preemption=PREEMPT_RT preemption_source=/sys/kernel/realtime
elif case $kernel_version in *PREEMPT_RT*) true ;; *) false ;; esac then
	preemption=PREEMPT_RT preemption_source="kernel version"
elif [ -r /proc/config.gz ] && command -v zcat >/dev/null 2>&1 && zcat /proc/config.gz | grep -q '^CONFIG_PREEMPT_RT=y'; then
	preemption=PREEMPT_RT preemption_source="kernel config"
else
	case $(read_file /sys/kernel/debug/sched/preempt) in
		*"(full)"*) preemption=PREEMPT preemption_source=/sys/kernel/debug/sched/preempt ;;
		*"(voluntary)"*) preemption=VOLUNTARY preemption_source=/sys/kernel/debug/sched/preempt ;;
		*"(none)"*) preemption=NONE preemption_source=/sys/kernel/debug/sched/preempt ;;
		*)
			case " $kernel_version " in
				*" PREEMPT "* | *" PREEMPT_DYNAMIC "*) preemption=PREEMPT preemption_source="kernel version" ;;
				*) preemption=unknown preemption_source="no source" ;;
			esac
			;;
	esac
fi
cpu_count=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)
online=$(expand_cpus "$(read_file /sys/devices/system/cpu/online)")
[ -n "$online" ] || online=$(expand_cpus "0-$((${cpu_count:-1} - 1))")
isolcpus=""
for word in $cmdline; do
	case $word in isolcpus=*) isolcpus=$(expand_cpus "${word#isolcpus=}") ;; esac
done
clocksource=$(read_file /sys/devices/system/clocksource/clocksource0/current_clocksource)
dt_model=$(read_file /proc/device-tree/model)
dt_compatible=""
[ -r /proc/device-tree/compatible ] && dt_compatible=$(tr '\000' '\n' </proc/device-tree/compatible)
dmi_vendor=$(read_file /sys/class/dmi/id/sys_vendor)
dmi_product=$(read_file /sys/class/dmi/id/product_name)
rt_runtime=$(read_file /proc/sys/kernel/sched_rt_runtime_us)
virtualisation=""
for text in "$(read_file /sys/hypervisor/type)" "$dmi_vendor" "$dmi_product"; do
	for vendor in QEMU KVM VMware Microsoft Xen innotek "Amazon EC2" Google; do
		case $text in *"$vendor"*) [ -n "$virtualisation" ] || virtualisation=$vendor ;; esac
	done
done
if [ -z "$virtualisation" ] && grep '^flags' /proc/cpuinfo 2>/dev/null | grep -qw hypervisor; then
	virtualisation="hypervisor (cpuinfo flag)"
fi

# The CPUs the threads are pinned to ("" when a thread is not pinned).
case $RTGATE_MEASURED_CPUS in
	all) measured=$online ;;
	*) measured=$(expand_cpus "$RTGATE_MEASURED_CPUS") ;;
esac

# ---------------------------------------------------------------- what would spoil the measurement

problems="" # one reason a line: every gate ERROR
problem() {
	problems="$problems$*
"
}

# Named parameters (Linaro's cyclictest names) as RTGATE_ARGS fixes them: a different value is a
# contradiction of the threshold file, never an override (DURATION is: as rtgate run --duration).
set -f
# shellcheck disable=SC2086 # splitting into words is the point
set -- $RTGATE_ARGS
set +f
fixed_PRIORITY="" fixed_INTERVAL="" fixed_THREADS="" fixed_AFFINITY="" fixed_HISTOGRAM="" gates=""
while [ $# -gt 0 ]; do
	case $1 in
		-S) fixed_THREADS=all fixed_AFFINITY=all ;;
		-p) fixed_PRIORITY=${2:-} ;;
		-i) fixed_INTERVAL=${2:-} ;;
		-t) fixed_THREADS=${2:-} ;;
		-a) fixed_AFFINITY=${2:-} ;;
		-h) fixed_HISTOGRAM=${2:-} ;;
		--thread-cpus=*)
			fixed_AFFINITY=${1#--thread-cpus=}
			fixed_THREADS=$(($(printf '%s' "$fixed_AFFINITY" | tr -cd , | wc -c) + 1))
			;;
		--thread-priorities=*) fixed_PRIORITY=${1#--thread-priorities=} ;;
		--gate=name=*)
			g=${1#--gate=name=}
			gates="$gates ${g%%,*}"
			;;
	esac
	shift
done
for knob in PRIORITY INTERVAL THREADS AFFINITY HISTOGRAM; do
	case $knob in
		PRIORITY) given=$PRIORITY fixed=$fixed_PRIORITY ;;
		INTERVAL) given=$INTERVAL fixed=$fixed_INTERVAL ;;
		THREADS) given=$THREADS fixed=$fixed_THREADS ;;
		AFFINITY) given=$AFFINITY fixed=$fixed_AFFINITY ;;
		HISTOGRAM) given=$HISTOGRAM fixed=$fixed_HISTOGRAM ;;
	esac
	if [ -n "$given" ] && [ "$given" != "$fixed" ]; then
		problem "parameter $knob=$(clean "$given") contradicts the threshold file's ${fixed:-(not set)}"
	fi
done

# require: as measure/conditions.py checks it on a machine with Python.
if [ -n "$RTGATE_REQUIRE" ]; then
	want_for="" have_for=""
	set -f
	old_ifs=$IFS
	IFS=';'
	# shellcheck disable=SC2086
	set -- $RTGATE_REQUIRE
	IFS=$old_ifs
	set +f
	for item; do
		key=${item%%=*} value=${item#*=}
		case $key in
			preempt_rt)
				if [ "$preemption" = unknown ]; then
					problem "requires a PREEMPT_RT kernel; cannot be judged here: the preemption model of $kernel_release is unknown"
				elif [ "$preemption" != PREEMPT_RT ]; then
					problem "requires a PREEMPT_RT kernel; $kernel_release is $preemption ($preemption_source)"
				fi
				;;
			isolated_cpus)
				if [ -z "$measured" ]; then
					problem "requires isolated CPUs, but the measurement's threads are not pinned"
				else
					for c in $measured; do
						case " $isolcpus " in *" $c "*) ;; *) problem "requires isolated CPUs; cpu $c not in isolcpus (${isolcpus:-none})" ;; esac
					done
				fi
				;;
			governor)
				found=0
				for c in ${measured:-$online}; do
					gov=$(read_file "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor")
					[ -n "$gov" ] || continue
					found=1
					[ "$gov" = "$value" ] || problem "requires governor $(clean "$value"); cpu$c is $gov"
				done
				[ "$found" = 1 ] || problem "requires governor $(clean "$value"); cannot be judged here: no cpufreq governor on this machine"
				;;
			bare_metal) [ -z "$virtualisation" ] || problem "requires bare metal; running under $virtualisation" ;;
			rt_throttling_off)
				if [ -z "$rt_runtime" ]; then
					problem "requires RT throttling off; cannot be judged here: /proc/sys/kernel/sched_rt_runtime_us is unreadable"
				elif [ "$rt_runtime" != -1 ]; then
					problem "requires RT throttling off; sched_rt_runtime_us is $rt_runtime"
				fi
				;;
			architecture | compatible | dmi_product | cpu_count)
				case $key in
					architecture) have=${architecture:-an unknown architecture} ok=$([ "$value" = "$architecture" ] && echo 1) ;;
					compatible)
						have="compatible $(printf '%s' "$dt_compatible" | tr '\n' ',' | sed 's/,/, /g')"
						[ -n "$dt_compatible" ] || have="no devicetree compatible"
						ok=$(printf '%s\n' "$dt_compatible" | grep -Fxq -- "$value" && echo 1)
						value="compatible $value"
						;;
					dmi_product)
						have="DMI product ${dmi_product:-}"
						[ -n "$dmi_product" ] || have="no DMI product"
						ok=$([ "$value" = "$dmi_product" ] && echo 1)
						value="DMI product $value"
						;;
					cpu_count)
						have="${cpu_count:-an unknown number of} CPUs" ok=$([ "$value" = "$cpu_count" ] && echo 1)
						value="$value CPUs"
						;;
				esac
				want_for="$want_for, $(clean "$value")" have_for="$have_for, $(clean "$have")"
				[ -n "$ok" ] || mismatch=1
				;;
			*) problem "require $(clean "$key") is not known to this rtgate.sh" ;;
		esac
	done
	if [ -n "${mismatch:-}" ]; then
		problem "this file is for ${want_for#, }; this machine is ${have_for#, }"
	fi
fi

# ---------------------------------------------------------------- the load

load_kind="none" load_cpus="" load_warmup=2 load_workers="" load_size=64M load_min_cpu="" load_min_ops=""
load_per_worker="" load_tree="" load_command="" load_reached="" load_unit="" load_floor="" load_problem=""
load_log="$OUTPUT_DIR/$M.load.log"
load_yaml="$OUTPUT_DIR/$M.stress-ng.yaml"
if [ -n "$RTGATE_LOAD" ]; then
	set -f
	old_ifs=$IFS
	IFS=';'
	# shellcheck disable=SC2086
	set -- $RTGATE_LOAD
	IFS=$old_ifs
	set +f
	for item; do
		value=${item#*=}
		case ${item%%=*} in
			kind) load_kind=$value ;;
			cpus) load_cpus=$value ;;
			warmup) load_warmup=$value ;;
			workers) load_workers=$value ;;
			size) load_size=$value ;;
			min_cpu) load_min_cpu=$value ;;
			min_ops) load_min_ops=$value ;;
			per_worker) load_per_worker=$value ;;
			tree) load_tree=$value ;;
			command) load_command=$value ;;
		esac
	done
	case $load_cpus in
		measured) load_cpus=${measured:-$online} ;;
		all) load_cpus=$online ;;
		others)
			others=""
			for c in $online; do
				case " ${measured:-$online} " in *" $c "*) ;; *) others="$others $c" ;; esac
			done
			load_cpus=$others
			[ -n "$others" ] || problem "the load goes on the other CPUs, but the measurement uses every CPU (set load cpus: measured or all)"
			;;
		*) load_cpus=$(expand_cpus "$load_cpus") ;;
	esac
	load_list=$(json_list "$load_cpus" | tr -d '[]')
	ncpus=0
	for c in $load_cpus; do ncpus=$((ncpus + 1)); done
	n=${load_workers:-$ncpus}
	if [ -n "$load_per_worker" ]; then
		load_floor=$((load_per_worker * (n < ncpus ? n : ncpus)))
	else
		load_floor=${load_min_cpu:-$load_min_ops}
	fi
	load_unit="% CPU"
	[ -z "$load_min_ops" ] || load_unit="operations/s (stress-ng)"
	case $load_kind in
		cpu | memory | io | timer | network) need="stress-ng" ;;
		hackbench) need="hackbench taskset" ;;
		kcompile) need="make cc taskset" ;;
		custom) need="taskset ${load_command%% *}" ;;
		*)
			need=""
			problem "unknown load kind $(clean "$load_kind")"
			;;
	esac
	for tool in $need; do
		command -v "$tool" >/dev/null 2>&1 || problem "load $load_kind: $(clean "$tool") not found on the board"
	done
	if [ "$load_kind" = kcompile ] && [ ! -f "$load_tree/Makefile" ]; then
		problem "load kcompile: $(clean "$load_tree") is not a kernel source tree on the board (no Makefile)"
	fi
fi

# Ticks of the load's CPUs from /proc/stat: "busy total" (guest time is inside user already; idle,
# iowait and steal, time the load did not run, are not busy).
cpu_ticks() {
	LC_ALL=C awk -v want=" $1 " '$1 ~ /^cpu[0-9]+$/ && index(want, " " substr($1, 4) " ") {
		t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i
		busy += t - $5 - $6 - $9; total += t
	} END { print busy + 0, total + 0 }' /proc/stat
}

# Every process of the load: its leader and the leader's descendants.
load_tree_pids() {
	pids=" $1 "
	grown=1
	while [ "$grown" = 1 ]; do
		grown=0
		for stat in /proc/[0-9]*/stat; do
			line=$(cat "$stat" 2>/dev/null) || continue
			rest=${line##*) }
			# shellcheck disable=SC2086
			set -- $rest
			pid=${stat#/proc/}
			pid=${pid%/stat}
			case $pids in *" $2 "*) case $pids in *" $pid "*) ;; *) pids="$pids$pid " grown=1 ;; esac ;; esac
		done
	done
	echo "$pids"
}

# Whether any of these processes still runs (a zombie has ended: its parent or init reaps it).
any_running() {
	for run_pid in "$@"; do
		run_line=$(cat "/proc/$run_pid/stat" 2>/dev/null) || continue
		case ${run_line##*) } in Z\ *) ;; *) return 0 ;; esac
	done
	return 1
}

# Wait up to $1 tenths of a second for the processes after it to end.
await_end() {
	await_i=0
	await_limit=$1
	shift
	while [ $await_i -lt "$await_limit" ] && any_running "$@"; do
		sleep 0.1 2>/dev/null || sleep 1
		await_i=$((await_i + 1))
	done
}

# shellcheck disable=SC2317 # also the EXIT trap
stop_load() {
	[ -n "$load_pid" ] || return 0
	pids=$(load_tree_pids "$load_pid")
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	# Every process of the tree, not only its leader: workers orphaned when it exits outlive it.
	# shellcheck disable=SC2086
	await_end 50 $pids
	pids="$pids $(load_tree_pids "$load_pid")"
	for stop_pid in $pids; do  # only those still running: an ended one's number may be reused
		any_running "$stop_pid" && kill -KILL "$stop_pid" 2>/dev/null
	done
	wait "$load_pid" 2>/dev/null
	# shellcheck disable=SC2086
	await_end 20 $pids
	load_pid=""
}

trap 'stop_load' EXIT

start_load() {
	case $load_kind in
		cpu | memory | io | timer | network)
			set -- stress-ng --taskset "$load_list" --metrics-brief --timeout 86400s --yaml "$load_yaml"
			case $load_kind in
				cpu) set -- "$@" --cpu "$n" ;;
				memory) set -- "$@" --vm "$n" --vm-bytes "$load_size" ;;
				io) set -- "$@" --hdd "$n" --hdd-bytes "$load_size" --temp-path "$OUTPUT_DIR" ;;
				timer) set -- "$@" --timerfd "$n" --timerfd-freq 100000 ;;
				network) set -- "$@" --icmp-flood "$n" ;;
			esac
			;;
		hackbench)
			# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
			set -- sh -c 'while taskset -c "$1" hackbench -g "$2" -l 500 >/dev/null; do echo rtgate-hackbench-run; done; exit 1' \
				rtgate-hackbench "$load_list" "$n"
			;;
		kcompile)
			# shellcheck disable=SC2016
			set -- sh -c 'make -s -C "$3" O="$4" defconfig >/dev/null || exit 1
while taskset -c "$1" make -s -C "$3" O="$4" -j "$2" >/dev/null; do echo rtgate-kcompile-run; make -s -C "$3" O="$4" clean >/dev/null; done; exit 1' \
				rtgate-kcompile "$load_list" "$n" "$load_tree" "$OUTPUT_DIR/$M.kbuild"
			;;
		custom)
			set -f
			# shellcheck disable=SC2086 # the command's words, as the threshold file listed them
			set -- taskset -c "$load_list" $load_command
			set +f
			;;
	esac
	rm -f "$load_yaml"
	"$@" >"$load_log" 2>&1 </dev/null &
	load_pid=$!
	echo "rtgate: $M: $load_kind load on CPUs $load_list; warm-up ${load_warmup}s"
	run_child sleep "$load_warmup"
	if ! kill -0 "$load_pid" 2>/dev/null; then
		load_problem="the $load_kind load died during its warm-up (see $load_log)"
		problem "$load_problem"
	fi
	load_before=$(cpu_ticks "$load_cpus")
}

finish_load() {
	after=$(cpu_ticks "$load_cpus")
	alive=0
	kill -0 "$load_pid" 2>/dev/null && alive=1
	stop_load
	if [ -z "$load_min_ops" ]; then
		load_reached=$(echo "$load_before $after $ncpus" | awk '{ d = $4 - $2; printf "%.1f", (d > 0 ? 100 * ($3 - $1) * $5 / d : 0) }')
	elif [ -r "$load_yaml" ]; then
		load_reached=$(awk '/bogo-ops-per-second-real-time:/ { s += $2; n++ } END { if (n) printf "%g", s }' "$load_yaml")
	fi
	if [ "$alive" = 0 ]; then
		load_problem="the $load_kind load stopped during the measurement (see $load_log)"
	elif [ -z "$load_reached" ]; then
		load_problem="the $load_kind load's level cannot be judged: stress-ng wrote no metrics ($load_yaml)"
	elif [ -n "$load_floor" ] && awk -v r="$load_reached" -v f="$load_floor" 'BEGIN { exit !(r < f) }'; then
		load_problem="the $load_kind load reached $load_reached $load_unit, below its level of $load_floor $load_unit"
	fi
}

# ---------------------------------------------------------------- measure

[ -n "$DURATION" ] && RTGATE_ARGS="$RTGATE_ARGS -D $DURATION"
measured_run=0
if [ -z "$problems" ] && [ "$load_kind" != none ]; then
	start_load
	[ -z "$stopped" ] || problem "stopped by SIG$stopped during the load's warm-up"
fi
out="$OUTPUT_DIR/$M.out"
err="$OUTPUT_DIR/$M.err"
rm -f "$out" "$err" "$OUTPUT_DIR/$M.json"
if [ -z "$problems" ]; then
	set -f
	# shellcheck disable=SC2086 # splitting into words is the point; nothing in them is run by the shell
	set -- $RTGATE_ARGS
	set +f
	run_child "$SAMPLER" "$@" -q "--json=$OUTPUT_DIR/$M.json" >"$out" 2>"$err"
	measured_run=1
	[ "$load_kind" = none ] || finish_load
	[ -n "$stopped" ] && echo "rtgate: stopped by SIG$stopped: the sampler was stopped; reporting what it measured"
fi
stop_load

# ---------------------------------------------------------------- the machine, as rtgate run records it

governors=""
for c in $online; do
	gov=$(read_file "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor")
	[ -z "$gov" ] || governors="$governors,\"$c\":$(json_str "$gov")"
done
iso_json=""
for word in $cmdline; do
	case $word in
		isolcpus=* | nohz_full=* | rcu_nocbs=* | irqaffinity=*)
			iso_json="$iso_json,$(json_str "${word%%=*}"):{\"value\":$(json_str "${word#*=}"),\"cpus\":$(json_list "$(expand_cpus "${word#*=}")")}"
			;;
	esac
done
if [ "$load_kind" = none ]; then
	load_json='{"kind":"none"}'
else
	reached=${load_reached:-null}
	[ "$measured_run" = 1 ] || reached=null
	load_json="{\"kind\":$(json_str "$load_kind"),\"cpus\":$(json_list "$load_cpus"),\"level\":{\"unit\":$(json_str "$load_unit"),\"min\":${load_floor:-null},\"reached\":$reached},\"problem\":$(json_str_or_null "$load_problem"),\"source\":\"$([ -n "$load_min_ops" ] && echo 'stress-ng YAML' || echo '/proc/stat busy share of the load CPUs')\"}"
fi
# How long the sampler measured (its JSON's wall time, one "elapsed_s" line): the JUnit time of the gates.
elapsed=""
if [ "$measured_run" = 1 ] && [ -f "$OUTPUT_DIR/$M.json" ]; then
	elapsed=$(sed -n 's/^ *"elapsed_s": *\([0-9][0-9]*\.[0-9]*\),$/\1/p' "$OUTPUT_DIR/$M.json" | head -n 1)
fi
environment="{\"recorded_by\":\"rtgate.sh\",\"elapsed_s\":${elapsed:-null},\"system\":{\"kernel_release\":$(json_str "$kernel_release"),\"kernel_version\":$(json_str "$kernel_version"),\
\"preemption\":$(json_str "$preemption"),\"preemption_source\":$(json_str "$preemption_source"),\"cmdline\":$(json_str "$cmdline"),\
\"isolation\":{${iso_json#,}},\"cpu_count\":${cpu_count:-null},\"governors\":{${governors#,}},\
\"sched_rt_runtime_us\":$(case $rt_runtime in -1 | [0-9]*) echo "$rt_runtime" ;; *) echo null ;; esac),\
\"virtualisation\":$(json_str_or_null "$virtualisation"),\"machine\":{\"architecture\":$(json_str "$architecture"),\
\"clocksource\":$(json_str_or_null "$clocksource"),\"isolated_cpus\":$(json_list "$(expand_cpus "$(read_file /sys/devices/system/cpu/isolated)")"),\
\"online_cpus\":$(json_list "$online"),\"board\":{\"dt_model\":$(json_str_or_null "$dt_model"),\"dt_compatible\":$(json_strs "$dt_compatible"),\
\"dmi_sys_vendor\":$(json_str_or_null "$dmi_vendor"),\"dmi_product_name\":$(json_str_or_null "$dmi_product")},\"unknown\":{}}},\
\"load\":$load_json,\"preflight\":$(json_strs "$problems" '{"status":"fail","check":"require","what":%s,"fix":""}')}"
printf '%s\n' "$environment" >"$OUTPUT_DIR/$M.environment.json"
echo "rtgate: ENVIRONMENT $M $environment"

# ---------------------------------------------------------------- report

[ -n "$load_problem" ] && problem "$load_problem"
reason=$(printf '%s' "$problems" | awk 'NF { printf "%s%s", sep, $0; sep = "; " }')
test_set start "$M"
if [ "$measured_run" = 0 ]; then
	# Not measured: every gate of the measurement is ERROR, with the reason.
	echo "rtgate: $M not measured: $reason"
	for name in $gates; do
		case $name in *[!A-Za-z0-9_.+-]* | "") continue ;; esac
		echo "rtgate: ERROR $M/${name}[all]: not measured: $reason"
		report "$name-all" --result fail
	done
	test_set stop
	exit 0
fi
# Only the sampler's stdout, and only lines of the expected form, are verdicts.
gate_lines="$OUTPUT_DIR/$M.gates"
grep -E '^RTGATE-GATE [A-Za-z0-9_.+-]+ [A-Za-z0-9_.+-]+ (PASS|FAIL|INCONCLUSIVE|ERROR) (-|[0-9][0-9.e+-]*) [^ ]+ [^ ]+ [^ ]+ [A-Za-z%]+ ' \
	"$out" >"$gate_lines"
if [ "$rc" -ne 0 ] || [ ! -s "$gate_lines" ]; then
	echo "rtgate: the sampler failed (exit status $rc):"
	head -n 20 "$err" | tr '\000-\011\013-\037\177' '?' | sed 's/<LAVA_/?LAVA_/g' | sed 's/^/rtgate-sampler: /'
	report "$M-sampler" --result fail
	test_set stop
	exit 0
fi

# One screen: the per-thread summary and one line per gate. Histograms stay in files.
grep '^T:' "$out" | head -n 32 | tr '\000-\011\013-\037\177' '?' | sed 's/<LAVA_/?LAVA_/g'
while read -r _tag name thread status value _limit _bound _samples units why; do
	if [ -n "$reason" ]; then # the load did not hold: measured, but not under the conditions asked
		status=ERROR why="invalid: $reason (measured ${value} ${units})"
	fi
	echo "rtgate: $status $M/${name}[$thread]: $(clean "$why")"
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
done <"$gate_lines"
test_set stop
exit 0
