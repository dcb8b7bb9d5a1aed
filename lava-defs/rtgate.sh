#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rtgate board test (LAVA, and Fuego's Benchmark.rtgate): what `rtgate run` does, in POSIX sh.
# Checks the measurement's requirements (RTGATE_REQUIRE; competing real-time tasks before, while
# and after measuring), starts its loads (RTGATE_LOAD), waits for the warm-up, runs rtgate-sampler
# with its compiled gates (RTGATE_ARGS), checks each load's level (its own processes' CPU time, or
# stress-ng's own rate), stops the loads whatever happens, records the machine and the levels
# reached, and reports every gate with lava-test-case. A requirement not met, a competing
# real-time task, a load that cannot run or did not hold its level, or a named parameter that
# contradicts RTGATE_ARGS makes every gate ERROR (reported as fail), never a pass.
# Parameters arrive as shell variables (see rtgate.yaml); each is used as data only: quoted, never
# evaluated; lists are split into words with globbing off. Anything echoed from input or from
# the sampler's stderr has its control characters and "<LAVA_" replaced, and sampler stderr lines
# are prefixed, so it can forge neither a console verdict line nor a LAVA signal. Stopped from
# outside (SIGTERM, SIGINT, SIGHUP), it stops the sampler with SIGTERM (so it still writes every
# result), then the load, and reports.
# LAVA's run.sh has `set -e -x`, and an inline definition runs this script in a subshell of it:
# every failure here is handled, so -e is off, and -x (a trace of every line) too.
# shellcheck disable=SC2317 # functions are called through for_each_load, run_child and the traps
set +ex
set -u

child=""   # the one foreground child (a download, a sleep or the sampler): the traps stop it
stopped="" # the signal that stopped us
load_pid=""
child_watch="" # a function run_child calls every second while its child runs
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
	if [ -n "$child_watch" ]; then # while it runs, every second
		while any_running "$child"; do
			"$child_watch" "$child"
			sleep 1
		done
	fi
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

# "1 1 2" -> "1 2": a CPU named twice is one CPU
each_once() {
	out=""
	for w in $1; do
		case " $out " in *" $w "*) ;; *) out="${out:+$out }$w" ;; esac
	done
	printf '%s' "$out"
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

# ---------------------------------------------------------------- competing real-time tasks

# The real-time tasks that can preempt the sampler, as measure/rt_tasks.py's scan finds them: policy
# FIFO, RR or DEADLINE, allowed on a CPU of rt_map ("cpu:priority" words, the sampler's lowest
# priority there) at or above that priority (DEADLINE at any), not an expected per-CPU kernel
# thread, not of process $1 (the sampler). One a line: "pid tid policy priority kernel cpus on comm"
# (priority - for DEADLINE; cpus and on comma-separated; comm's control characters as '?').
rt_competitors() {
	for stat in /proc/[0-9]*/task/[0-9]*/stat; do
		printf '%s\n' "$stat"
	done | LC_ALL=C awk -v map="$rt_map" -v own="${1:-}" '
	BEGIN {
		expected = "^(migration/[0-9]+|watchdog/[0-9]+|watchdogd|irq/[0-9]+-.*|(ksoftirqd|ktimers|ktimersoftd|irq_work|posixcputmr|rcuc|rcub|idle_inject)/[0-9]+|rcu_preempt|rcu_sched|(rcuop|rcuog|rcub)/[0-9]+)$"
		n = split(map, pairs, " ")
		for (k = 1; k <= n; k++) { split(pairs[k], cp, ":"); prio[cp[1]] = cp[2] + 0; order[k] = cp[1] }
		names[1] = "FIFO"; names[2] = "RR"; names[6] = "DEADLINE"
	}
	{
		path = $0; text = ""; sep = ""
		while ((getline line < path) > 0) { text = text sep line; sep = "\n" }
		close(path)
		last = 0; rest = text
		while ((j = index(rest, ")")) > 0) { last += j; rest = substr(rest, j + 1) }
		if (!last || split(substr(text, last + 2), f, " ") < 39) next
		policy = f[39]
		if (!(policy in names)) next
		split(path, part, "/")
		pid = part[3]; tid = part[5]
		if (pid == own) next
		open = index(text, "(")
		comm = substr(text, open + 1, last - open - 1)
		kernel = int(f[7] / 2097152) % 2
		if (kernel && comm ~ expected) next
		status = path; sub(/stat$/, "status", status); allowed = ""
		while ((getline line < status) > 0) if (line ~ /^Cpus_allowed_list:/) { sub(/^Cpus_allowed_list:[ \t]*/, "", line); allowed = line }
		close(status)
		delete can
		on = ""; cpus = ""
		m = split(allowed, ranges, ",")
		for (k = 1; k <= m; k++) {
			if (split(ranges[k], lohi, "-") == 1) lohi[2] = lohi[1]
			for (c = lohi[1] + 0; c <= lohi[2] + 0; c++) { can[c] = 1; cpus = cpus "," c }
		}
		for (k = 1; k <= n; k++) {
			c = order[k]
			if ((c in can) && (policy == 6 || f[38] + 0 >= prio[c])) on = on "," c
		}
		if (on == "") next
		gsub(/[\001-\037\177]/, "?", comm)
		print pid, tid, names[policy], (policy == 6 ? "-" : f[38]), kernel, substr(cpus, 2), substr(on, 2), comm
	}'
}

# rt_competitors' lines as measure/rt_tasks.py describes them: "comm (pid P, tid T, FIFO 50, cpu 0)", ", "-joined.
describe_tasks() {
	printf '%s\n' "$1" | while read -r pid tid policy prio kernel _cpus on comm; do
		[ -n "$pid" ] || continue
		k="" t="" p=""
		[ "$kernel" = 1 ] && k="kernel thread "
		[ "$tid" = "$pid" ] || t=", tid $tid"
		[ "$prio" = - ] || p=" $prio"
		printf '%s%s (pid %s%s, %s%s, cpu %s)\n' "$k" "$(clean "$comm")" "$pid" "$t" "$policy" "$p" "$on"
	done | awk 'NF { printf "%s%s", sep, $0; sep = ", " }'
}

# The same lines as the JSON list rtgate run records (its rt_tasks before, during, after).
tasks_json() {
	printf '['
	sep=""
	printf '%s\n' "$1" | while read -r pid tid policy prio kernel cpus on comm; do
		[ -n "$pid" ] || continue
		printf '%s{"pid":%s,"tid":%s,"comm":%s,"policy":"%s","priority":%s,"cpus":[%s],"kernel":%s,"on_cpus":[%s],"expected":null}' \
			"$sep" "$pid" "$tid" "$(json_str "$comm")" "$policy" "$([ "$prio" = - ] && echo null || echo "$prio")" \
			"$cpus" "$([ "$kernel" = 1 ] && echo true || echo false)" "$on"
		sep=","
	done
	printf ']'
}

# Each task once, as first seen (rtgate run keys them by pid and tid).
unique_tasks() {
	printf '%s\n' "$1" | awk 'NF && !seen[$1 " " $2]++'
}

rt_map="" rt_before="" rt_during="" rt_after="" # the tasks seen before, while and after the sampler ran
# shellcheck disable=SC2317 # run_child's watch while the sampler runs (its own threads are not competitors)
watch_rt() {
	found=$(rt_competitors "$1")
	[ -z "$found" ] || rt_during=$(unique_tasks "$rt_during
$found") # each once: a competitor seen every second for hours must not grow the list
}

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
			no_competing_rt)
				# "cpu:priority,..." (all: every CPU): the sampler's lowest priority on each CPU it may run on.
				rt_pairs=""
				set -f
				old_ifs=$IFS
				IFS=','
				# shellcheck disable=SC2086
				set -- $value
				IFS=$old_ifs
				set +f
				for entry; do
					case $entry in *:*:* | "") rt_pairs="" && break ;; *:*) ;; *) rt_pairs="" && break ;; esac
					where=${entry%%:*} prio=${entry#*:}
					case $prio in "" | *[!0-9]*) rt_pairs="" && break ;; esac
					case $where in
						all) cpus=$online ;;
						"" | *[!0-9-]*) rt_pairs="" && break ;;
						*) cpus=$(expand_cpus "$where") ;;
					esac
					for c in $cpus; do rt_pairs="$rt_pairs$c:$prio
"; done
				done
				rt_map=$(printf '%s' "$rt_pairs" | sort -t: -k1,1n -k2,2n | awk -F: 'NF == 2 && !seen[$1]++ { printf "%s%s", sep, $0; sep = " " }')
				if [ -z "$rt_map" ]; then
					problem "require no_competing_rt=$(clean "$value") is not a list of cpu:priority (compile the file with rtgate lava args)"
				else
					rt_before=$(rt_competitors "")
					[ -z "$rt_before" ] ||
						problem "requires no competing real-time task on the measured CPUs; found $(describe_tasks "$rt_before")"
				fi
				;;
			*) problem "require $(clean "$key") is not known to this rtgate.sh" ;;
		esac
	done
	if [ -n "${mismatch:-}" ]; then
		problem "this file is for ${want_for#, }; this machine is ${have_for#, }"
	fi
fi

# ---------------------------------------------------------------- the loads

# RTGATE_LOAD: ';'-separated key=value fields; a kind= field after a load's own kind starts the next
# load, written kind=+<kind> (an older rtgate.sh, which ran one load, then refuses "+<kind>" as an
# unknown kind instead of running only the last load). Several loads run together as measure/load.py's Loads runs them: started together, warmed
# up together (the longest warm-up), each held to its own level, stopped together.
load_specs="" # one load's fields a line
if [ -n "$RTGATE_LOAD" ]; then
	set -f
	old_ifs=$IFS
	IFS=';'
	# shellcheck disable=SC2086
	set -- $RTGATE_LOAD
	IFS=$old_ifs
	set +f
	has_kind=""
	for item; do
		[ -n "$item" ] || continue
		case $item in
			kind=*)
				if [ -n "$has_kind" ]; then
					load_specs="$load_specs
"
				elif [ -n "$load_specs" ]; then # fields before the first kind= are the first load's
					load_specs="$load_specs;"
				fi
				has_kind=1
				;;
			*) [ -z "$load_specs" ] || load_specs="$load_specs;" ;;
		esac
		load_specs="$load_specs$item"
	done
fi
load_count=0
[ -z "$load_specs" ] || load_count=$(printf '%s\n' "$load_specs" | wc -l)
load_count=$((load_count + 0))

# One load's settings from its fields ($1), the load's number being $2 (0, 1, ...); with $3 = check,
# what keeps it from running on this board is a problem.
load_parse() {
	load_kind="none" load_cpus="" load_warmup=2 load_workers="" load_size=64M load_min_cpu="" load_min_ops=""
	load_per_worker="" load_tree="" load_command=""
	set -f
	old_ifs=$IFS
	IFS=';'
	# shellcheck disable=SC2086
	set -- $1 "$2" "${3:-}"
	IFS=$old_ifs
	set +f
	while [ $# -gt 2 ]; do
		value=${1#*=}
		case ${1%%=*} in
			kind) load_kind=${value#+} ;;
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
		shift
	done
	load_index=$1 load_check=$2
	case $load_cpus in
		measured) load_cpus=${measured:-$online} ;;
		all) load_cpus=$online ;;
		others)
			others=""
			for c in $online; do
				case " ${measured:-$online} " in *" $c "*) ;; *) others="$others $c" ;; esac
			done
			load_cpus=$others
			[ -n "$others" ] || [ -z "$load_check" ] ||
				problem "the load goes on the other CPUs, but the measurement uses every CPU (set load cpus: measured or all)"
			;;
		*) load_cpus=$(each_once "$(expand_cpus "$load_cpus")") ;;
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
			[ -z "$load_check" ] || problem "unknown load kind $(clean "$load_kind")"
			load_kind=unknown
			;;
	esac
	# Its files, named as rtgate run names its folders: NAME.load for one, NAME.load-<i>-<kind> for several.
	if [ "$load_count" -gt 1 ]; then
		load_base="$OUTPUT_DIR/$M.load-$load_index-$load_kind"
	else
		load_base="$OUTPUT_DIR/$M.load"
	fi
	load_log="$load_base.log"
	load_yaml="$load_base.stress-ng.yaml"
	[ "$load_count" -gt 1 ] || load_yaml="$OUTPUT_DIR/$M.stress-ng.yaml"
	[ -n "$load_check" ] || return 0
	for tool in $need; do
		command -v "$tool" >/dev/null 2>&1 || problem "load $load_kind: $(clean "$tool") not found on the board"
	done
	if [ "$load_kind" = kcompile ] && [ ! -f "$load_tree/Makefile" ]; then
		problem "load kcompile: $(clean "$load_tree") is not a kernel source tree on the board (no Makefile)"
	fi
}

# Each load in turn: `for_each_load FUNCTION` runs FUNCTION with the load's settings (load_parse)
# and its number in $i.
for_each_load() {
	i=0
	while IFS= read -r spec; do
		[ -n "$spec" ] || continue
		load_parse "$spec" "$i" "${2:-}"
		"$1"
		i=$((i + 1))
	done <<EOF
$load_specs
EOF
}

# The word at place $1 (from 0) of the words after it.
nth() {
	shift $(($1 + 1))
	printf '%s' "${1:-}"
}

check_load() { :; }
for_each_load check_load check

# Ticks of the load's CPUs from /proc/stat: "busy total cpus" (guest time is inside user already;
# idle, iowait and steal, time the load did not run, are not busy), cpus the lines found (online,
# each once): total / cpus is the time elapsed. printf: mawk 1.3.3 prints sums above 2^31 as %.6g.
cpu_ticks() {
	LC_ALL=C awk -v want=" $1 " '$1 ~ /^cpu[0-9]+$/ && index(want, " " substr($1, 4) " ") {
		t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i
		busy += t - $5 - $6 - $9; total += t; n++
	} END { printf "%.0f %.0f %d\n", busy, total, n }' /proc/stat
}

# CPU ticks (user + system, with reaped children's) of a load's processes: its leader ($1) and the
# leader's descendants, as measure/load.py counts its process group. Each load its own: loads that
# share CPUs are each held to their own level.
load_ticks() {
	for stat in /proc/[0-9]*/stat; do
		printf '%s\n' "$stat"
	done | LC_ALL=C awk -v root="$1" '{
		path = $0; text = ""
		while ((getline line < path) > 0) text = text " " line
		close(path)
		last = 0; rest = text
		while ((j = index(rest, ")")) > 0) { last += j; rest = substr(rest, j + 1) }
		if (!last || split(substr(text, last + 2), f, " ") < 15) next
		pid = path; sub(/^\/proc\//, "", pid); sub(/\/stat$/, "", pid)
		parent[pid] = f[2]; ticks[pid] = f[12] + f[13] + f[14] + f[15]
	} END {
		mine[root] = 1; grown = 1
		while (grown) {
			grown = 0
			for (p in parent) if (!(p in mine) && (parent[p] in mine)) { mine[p] = 1; grown = 1 }
		}
		for (p in mine) s += ticks[p]
		print s + 0
	}'
}

# Every process of a load: its leader and the leader's descendants.
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

load_pids="" # each load's leader, in order
# shellcheck disable=SC2317 # called from stop_loads
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

# shellcheck disable=SC2317 # also the EXIT trap
stop_loads() {
	for load_pid in $load_pids; do
		stop_load
	done
	load_pids=""
}

trap 'stop_loads' EXIT

launch_load() {
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
				rtgate-kcompile "$load_list" "$n" "$load_tree" "$OUTPUT_DIR/$M.kbuild-$i"
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
	load_pids="$load_pids $!"
	echo "rtgate: $M: $load_kind load on CPUs $load_list; warm-up ${load_warmup}s"
	warmup=$(awk -v a="$warmup" -v b="$load_warmup" 'BEGIN { print (b + 0 > a + 0 ? b : a) }')
}

# After the warm-up: did each load survive it? Its CPU time is counted from here ("process busy total").
settle_load() {
	# shellcheck disable=SC2086
	pid=$(nth "$i" $load_pids)
	if ! any_running "$pid"; then
		load_problems="$load_problems$i the $load_kind load died during its warm-up (see $load_log)
"
		problem "the $load_kind load died during its warm-up (see $load_log)"
	fi
	load_marks="$load_marks $(load_ticks "$pid") $(cpu_ticks "$load_cpus")"
}

start_loads() {
	warmup=0 load_marks=""
	for_each_load launch_load
	run_child sleep "$warmup"
	for_each_load settle_load
}

# When the sampler has ended, with the loads still running: the ticks since the warm-up, and
# whether each still ran ("process busy total alive" a load).
mark_load() {
	# shellcheck disable=SC2086
	pid=$(nth "$i" $load_pids)
	alive=0
	any_running "$pid" && alive=1
	load_ends="$load_ends $(load_ticks "$pid") $(cpu_ticks "$load_cpus") $alive"
}

# Each load's level, judged once every load has stopped (stress-ng writes its figures when it ends).
judge_load() {
	load_reached="" load_problem=""
	# shellcheck disable=SC2086
	set -- $load_marks
	shift $((i * 4))
	p0=$1 t0=$3
	# shellcheck disable=SC2086
	set -- $load_ends
	shift $((i * 5))
	p1=$1 t1=$3 cpus=$4 alive=$5
	if [ -z "$load_min_ops" ]; then
		# The load's CPU time over the time elapsed (its CPUs' ticks per CPU), as rtgate run's cpu_percent
		load_reached=$(echo "$p0 $t0 $p1 $t1 $cpus" | awk '{ d = $4 - $2; printf "%.1f", (d > 0 ? 100 * ($3 - $1) * $5 / d : 0) }')
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
	load_reacheds="$load_reacheds ${load_reached:-null}"
	if [ -n "$load_problem" ]; then
		load_problems="$load_problems$i $load_problem
"
		load_invalid="$load_invalid$load_problem
"
	fi
}

finish_loads() {
	load_ends="" load_reacheds=""
	for_each_load mark_load
	stop_loads
	for_each_load judge_load
	load_judged=1
}

# One load's record, as measure/load.py's summary() writes it.
record_load() {
	problem_of=$(printf '%s' "$load_problems" | sed -n "s/^$i //p" | head -n 1)
	reached=null
	# shellcheck disable=SC2086
	[ "${load_judged:-}" = 1 ] && reached=$(nth "$i" $load_reacheds)
	load_jsons="$load_jsons,{\"kind\":$(json_str "$load_kind"),\"cpus\":$(json_list "$load_cpus"),\"level\":{\"unit\":$(json_str "$load_unit"),\"min\":${load_floor:-null},\"reached\":$reached},\"problem\":$(json_str_or_null "$problem_of"),\"source\":\"$([ -n "$load_min_ops" ] && echo 'stress-ng YAML' || echo "the load's processes' CPU time (/proc/PID/stat)")\"}"
	load_kinds="$load_kinds+$load_kind"
	load_all_cpus="$load_all_cpus $load_cpus"
}
load_problems="" # "<load number> <reason>" a line
load_invalid=""  # what the loads did not hold while measured: every gate ERROR, one reason a line

# ---------------------------------------------------------------- measure

[ -n "$DURATION" ] && RTGATE_ARGS="$RTGATE_ARGS -D $DURATION"
measured_run=0
if [ -z "$problems" ] && [ "$load_count" -gt 0 ]; then
	start_loads
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
	[ -z "$rt_map" ] || child_watch=watch_rt
	run_child "$SAMPLER" "$@" -q "--json=$OUTPUT_DIR/$M.json" >"$out" 2>"$err"
	child_watch=""
	measured_run=1
	[ -z "$rt_map" ] || rt_after=$(rt_competitors "")
	[ "$load_count" = 0 ] || finish_loads
	[ -n "$stopped" ] && echo "rtgate: stopped by SIG$stopped: the sampler was stopped; reporting what it measured"
fi
stop_loads

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
load_json='{"kind":"none"}'
if [ "$load_count" -gt 0 ]; then
	load_jsons="" load_kinds="" load_all_cpus=""
	for_each_load record_load
	load_json=${load_jsons#,}
	if [ "$load_count" -gt 1 ]; then # as measure/load.py's Loads.summary(): each load, under their kinds and CPUs
		problem_all=$(printf '%s' "$load_problems" | sed 's/^[0-9]* //' | awk 'NF { printf "%s%s", sep, $0; sep = "; " }')
		# shellcheck disable=SC2086
		load_json="{\"kind\":$(json_str "${load_kinds#+}"),\"cpus\":$(json_list "$(printf '%s\n' $load_all_cpus | sort -n -u)"),\"problem\":$(json_str_or_null "$problem_all"),\"loads\":[$load_json]}"
	fi
fi
rt_json=""
if [ -n "$rt_map" ]; then # as rtgate run records them (rt_tasks)
	rt_during=$(unique_tasks "$rt_during")
	# shellcheck disable=SC2086
	prios=$(printf '%s\n' $rt_map | awk -F: '{ printf "%s\"%s\":%s", sep, $1, $2; sep = "," }')
	rt_json=",\"rt_tasks\":{\"sampler_priority\":{$prios},\"competing_matters\":true,\"before\":$(tasks_json "$rt_before"),\"during\":$(tasks_json "$rt_during"),\"after\":$(tasks_json "$rt_after")}"
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
\"load\":$load_json$rt_json,\"preflight\":$(json_strs "$problems" '{"status":"fail","check":"require","what":%s,"fix":""}')}"
printf '%s\n' "$environment" >"$OUTPUT_DIR/$M.environment.json"
echo "rtgate: ENVIRONMENT $M $environment"

# ---------------------------------------------------------------- report

problems="$problems$load_invalid"
seen=$(unique_tasks "$rt_during
$rt_after")
[ -z "$seen" ] || problem "a competing real-time task could preempt the sampler: $(describe_tasks "$seen")"
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
