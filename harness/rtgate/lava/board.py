# SPDX-License-Identifier: GPL-2.0-or-later
"""What a board needs of a measurement: the compiled plan rtgate-sampler runs (RTGATE_PLAN), and the
knobs of Linaro's cyclictest definition as the plan fixes them (LAVA and Fuego).

On the board, the sampler is the whole measurement, as under `rtgate run`: it checks the
requirements, runs the loads, records the machine and judges the gates. Whatever part of a
threshold file the engine cannot carry out is refused here, with the measurement and the key
named: a job never drops part of a file silently. LAVA writes parameters into its run.sh as
NAME='value' without escaping, so no value holds a quote or a newline.
"""

from __future__ import annotations

from rtgate.core.thresholds import Measurement
from rtgate.errors import RtgateError
from rtgate.measure.conditions import CHECK_IDS
from rtgate.measure.sampler_args import ENGINE_REQUIREMENTS, engine_args, plan_text

# What strict: true refuses on (rtgate doctor's checks; expected_rt is never a warning).
STRICT_CHECKS = tuple(c for c in CHECK_IDS if c != "expected_rt")
# The knobs Linaro's cyclictest test definition names, as the plan fixes them. RT_PRIORITY, not
# PRIORITY: LAVA and KernelCI templates take PRIORITY for the job's own scheduling priority.
NAMED = ("RT_PRIORITY", "INTERVAL", "THREADS", "AFFINITY", "HISTOGRAM")


def named_values(args: str) -> dict[str, str]:
    """RT_PRIORITY, INTERVAL, THREADS, AFFINITY, HISTOGRAM as the plan fixes them (the engine derives
    them the same way; a named parameter that differs is a contradiction, every gate ERROR)."""
    out = dict.fromkeys(NAMED, "")
    words = args.split()
    for i, w in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if w == "-S":
            out["THREADS"] = out["AFFINITY"] = "all"
        elif w in ("-p", "-i", "-t", "-a", "-h"):
            out[{"-p": "RT_PRIORITY", "-i": "INTERVAL", "-t": "THREADS", "-a": "AFFINITY", "-h": "HISTOGRAM"}[w]] = (
                following
            )
        elif w.startswith("--thread-cpus="):
            out["AFFINITY"] = w.split("=", 1)[1]
            out["THREADS"] = str(out["AFFINITY"].count(",") + 1)
        elif w.startswith("--thread-priorities="):
            out["RT_PRIORITY"] = w.split("=", 1)[1]
    return out


def board_params(m: Measurement, duration_s: int | None, rt_priority: int | None = None) -> dict[str, str]:
    """Every parameter rtgate.sh hands the engine for one measurement, named as rtgate.yaml names them."""
    if m.strict:  # any warning of doctor's checks refuses the measurement: a board missing one would pass
        raise RtgateError(
            f"measurement {m.name}: strict: true refuses to measure on any warning of rtgate doctor's checks "
            f"({', '.join(STRICT_CHECKS)}), which the board does not make; on a board, replace strict with the "
            f"require: keys the engine checks ({', '.join(ENGINE_REQUIREMENTS)}), or run rtgate doctor --strict / "
            "rtgate run on the board"
        )
    if m.backend != "sampler":  # the engine runs rtla, but its gates are judged from rtla's histogram in Python
        raise RtgateError(
            f"measurement {m.name} uses the {m.backend} backend, whose gates a board without Python cannot "
            "judge yet: run rtgate run on the board for it"
        )
    words = engine_args(m, duration_s, rt_priority)
    return {"RTGATE_PLAN": plan_text(words), **named_values(" ".join(words))}


def args_text(m: Measurement, duration_s: int | None, every: bool) -> str:
    """`rtgate lava args` / `rtgate fuego args`: RTGATE_PLAN alone, or (every) each board parameter as
    NAME='value' lines."""
    params = board_params(m, duration_s)
    if every:
        return "".join(f"{k}='{v}'\n" for k, v in params.items())
    return params["RTGATE_PLAN"] + "\n"
