#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One step of `git bisect run`: build the checked-out commit, then measure it until
# `rtgate history bisect` decides (doc/history.rst, "Which commit").
#
#   RTGATE_BUILD=./build.sh RTGATE_MEASURE=./measure.sh \
#       git bisect run sh bisect-step.sh --db h.db --thresholds board.yaml --base GOOD \
#       --metric p99.9 --worse-by 1.5 [--paired] [--error 0.01] [--max-runs 30]
#
# The arguments are those of `rtgate history bisect`, less --new: the commit's label is its short
# hash, given to both commands of yours as $1:
#   RTGATE_BUILD LABEL        builds (and installs or publishes) this commit; failing: skip it
#   RTGATE_MEASURE LABEL N    measures once (N counts from 1), storing its run(s) under LABEL; exit
#                             status that of `rtgate run` or `rtgate lab` (0, 1 or 3: measured),
#                             125 to skip the commit (it does not boot), anything else stops the
#                             bisection
# Exit status, as git bisect run reads it: 0 good, 1 bad, 125 skip (undecided at --max-runs),
# 255 stop (an error, never taken for a bad commit).
set -u
rtgate=${RTGATE:-rtgate}
label=$(git rev-parse --short=12 HEAD) || exit 255
"${RTGATE_BUILD:?name your build command}" "$label" || exit 125
n=0
while :; do
    n=$((n + 1))
    "${RTGATE_MEASURE:?name your measure command}" "$label" "$n"
    case $? in
        0 | 1 | 3) ;;
        125) exit 125 ;;
        *) echo "bisect-step: measuring $label failed: stopping the bisection" >&2; exit 255 ;;
    esac
    "$rtgate" history bisect "$@" --new "$label"
    case $? in
        0) exit 0 ;;
        1) exit 1 ;;
        125) exit 125 ;;
        3) ;; # MORE: measure again
        *) echo "bisect-step: rtgate history bisect failed: stopping the bisection" >&2; exit 255 ;;
    esac
done
