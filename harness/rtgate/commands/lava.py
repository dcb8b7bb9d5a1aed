# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate lava args|job|results: LAVA jobs from threshold files, and their results back."""

from __future__ import annotations

import argparse
import sys

from rtgate.commands import add_command, add_thresholds
from rtgate.commands.common import add_compiled_args_command, add_report_options, parse_seconds, report
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.lava.job import DEVICE_TYPES, QEMU_ARCHES, JobOptions, render_job
from rtgate.lava.results import board_runs, lava_verdicts, log_environments, run_durations
from rtgate.safe_io import write_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "lava")
    lava = p.add_subparsers(dest="lava_command", metavar="ACTION")
    lava.required = True

    add_compiled_args_command(lava)

    j = lava.add_parser("job", help="render a LAVA job for a threshold file")
    add_thresholds(j)
    j.add_argument("--device-type", default="qemu", help=f"one of {', '.join(DEVICE_TYPES)} (default qemu)")
    j.add_argument(
        "--template", metavar="FILE", help="your own Jinja2 job template (extends base.jinja2; doc/lava.rst)"
    )
    j.add_argument("--measurement", action="append", metavar="NAME", help="only this measurement (repeatable)")
    j.add_argument("--duration", type=parse_seconds, metavar="TIME", help="override every duration")
    for image in ("kernel", "ramdisk", "dtb", "rootfs"):
        j.add_argument(f"--{image}", metavar="URL", help=f"{image} image URL")
    j.add_argument(
        "--placeholder",
        action="store_true",
        help="images not given become example.invalid URLs (a template to edit); default: an error",
    )
    j.add_argument(
        "--kernel-args",
        metavar="ARGS",
        help="the kernel command line the job adds (default: console=ttyS0,115200 on qemu, ttyAMA0 for arm64, "
        "none elsewhere); "
        "require: isolated_cpus adds isolcpus=, nohz_full= and rcu_nocbs= for the measured CPUs",
    )
    j.add_argument(
        "--prompt",
        metavar="REGEX",
        help="the board's shell prompt (default: the template's, for its root file system)",
    )
    j.add_argument("--testdef-repo", metavar="URL", help="git repository holding lava-defs/")
    j.add_argument("--testdef-revision", metavar="REV")
    j.add_argument("--inline", action="store_true", help="put the test definition in the job itself")
    j.add_argument("--sampler", default="rtgate-sampler", help="the sampler's command or path on the board")
    j.add_argument("--sampler-url", default="", metavar="URL", help="download the static sampler from here")
    j.add_argument("--rt-priority", type=int, metavar="PRIO", help="override a single-group priority")
    j.add_argument("--allow-inconclusive", action="store_true")
    j.add_argument("--no-kvm", action="store_true", help="qemu: emulate (TCG) instead of KVM")
    j.add_argument(
        "--arch",
        default="amd64",
        choices=QEMU_ARCHES,
        metavar="ARCH",
        help=f"qemu: the board's architecture, one of {', '.join(QEMU_ARCHES)} (default amd64; arm64: QEMU's virt)",
    )
    j.add_argument(
        "--cpus", type=int, metavar="N", help="qemu: vCPUs (default: as many as the measurements pin or count)"
    )
    j.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="LAVA device tag the board must have (repeatable; a device's own tag pins it)",
    )
    j.add_argument("--job-name")
    j.add_argument("-o", "--output", metavar="FILE", help="write the job here instead of stdout")
    j.set_defaults(handler=handle_job)

    r = lava.add_parser("results", help="turn LAVA's results (export or lava-run log) into verdicts and JUnit")
    r.add_argument("results", metavar="RESULTS")
    r.add_argument(
        "--thresholds",
        metavar="FILE",
        help="the job's threshold file: exact gate names, and every gate LAVA did not record is ERROR",
    )
    r.add_argument(
        "--measurement",
        action="append",
        metavar="NAME",
        help="with --thresholds: the job ran only this measurement (repeatable)",
    )
    r.add_argument("--log", metavar="FILE", help="the job's log (YAML): tells INCONCLUSIVE and ERROR from FAIL")
    add_report_options(r)
    r.set_defaults(handler=handle_results)


def handle_job(args: argparse.Namespace) -> int:
    tf = load_thresholds(args.thresholds)
    images = {k: getattr(args, k) for k in ("kernel", "ramdisk", "dtb", "rootfs") if getattr(args, k)}
    text = render_job(
        tf,
        JobOptions(
            device_type=args.device_type,
            template=args.template,
            measurements=args.measurement,
            duration_s=args.duration,
            images=images,
            kernel_args=args.kernel_args,
            prompt=args.prompt,
            testdef_repository=args.testdef_repo,
            testdef_revision=args.testdef_revision,
            testdef_inline=args.inline,
            sampler=args.sampler,
            sampler_url=args.sampler_url,
            allow_inconclusive=args.allow_inconclusive,
            rt_priority=args.rt_priority,
            no_kvm=args.no_kvm,
            arch=args.arch,
            cpus=args.cpus,
            tags=args.tag,
            job_name=args.job_name,
            placeholder=args.placeholder,
        ),
    )
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def handle_results(args: argparse.Namespace) -> int:
    tf = load_thresholds(args.thresholds) if args.thresholds else None
    if args.measurement and not tf:
        raise RtgateError("--measurement needs --thresholds")
    for name in args.measurement or []:
        if tf and name not in tf.measurements:
            raise RtgateError(f"no measurement {name!r} in {tf.path} (measurements: {', '.join(tf.measurements)})")
    verdicts = lava_verdicts(args.results, tf, args.measurement, args.log)
    from rtgate.core.thresholds import ThresholdFile

    environments = log_environments(args.results)
    if args.log:
        environments.update(log_environments(args.log))
    shown = tf or ThresholdFile(path=args.results, platform="lava", description="", measurements={}, files=[])
    runs = board_runs(environments, str(args.results))
    return report(shown, verdicts, args, run_durations(verdicts, runs), runs=runs)
