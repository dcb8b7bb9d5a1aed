# SPDX-License-Identifier: GPL-2.0-or-later
"""Render a LAVA job for a threshold file from the Jinja2 templates in lava-defs/templates/."""

from __future__ import annotations

import copy
import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import yaml

from rtgate.core.thresholds import Measurement, ThresholdFile
from rtgate.errors import RtgateError
from rtgate.lava.board import board_params
from rtgate.lava.cmdline import isolated_cpus, isolation_words, merge_kernel_args
from rtgate.lava.yaml_block import block_yaml
from rtgate.measure.sampler_args import expected_seconds

DEVICE_TYPES = ("qemu", "bcm2711-rpi-4-b", "imx8mp-evk")
# The console of LAVA's stock qemu device type; a U-Boot device type's dictionary sets its own console.
BOOT_AND_DEPLOY_MINUTES = 15
# qemu without KVM: LAVA's overlay is built by libguestfs in a TCG VM of its own, and the board
# boots under TCG too; on a loaded CI host each takes minutes.
TCG_DEPLOY_MINUTES, TCG_BOOT_MINUTES = 15, 10
MARGIN = 1.2  # measurements run a little longer than their duration: start, stop, reporting
# qemu: the boards' architectures (LAVA's job context `arch` picks the QEMU binary). Arm's `virt`
# machine has no IDE and its console is the PL011 UART: the overlay disk is virtio, the console ttyAMA0.
QEMU_ARCHES = ("amd64", "x86_64", "arm64", "aarch64")
ARM_ARCHES = ("arm64", "aarch64")


def default_kernel_args(arch: str) -> str:
    return "console=ttyAMA0,115200" if arch in ARM_ARCHES else "console=ttyS0,115200"


def templates_dir() -> Path:
    """Installed with the package, or the source tree's lava-defs/templates."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent.parent.parent / "lava-defs" / "templates"):
        if candidate.is_dir():
            return candidate
    raise RtgateError("the LAVA job templates are missing from this installation")


def testdef_path() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "testdef", here.parent.parent.parent / "lava-defs"):
        if (candidate / "rtgate.yaml").is_file():
            return candidate
    raise RtgateError("the LAVA test definition is missing from this installation")


@dataclass
class JobOptions:
    device_type: str = "qemu"
    template: str | None = None
    measurements: list[str] | None = None
    duration_s: int | None = None
    images: dict[str, str] = field(default_factory=dict)
    kernel_args: str | None = None  # None: the serial console of `arch` on qemu (default_kernel_args), none elsewhere
    arch: str = "amd64"  # qemu: the board's Debian architecture (LAVA's job context arch)
    prompt: str | None = None  # None: the template's default, which matches its root file system
    testdef_repository: str | None = None
    testdef_revision: str | None = None
    testdef_inline: bool = False
    sampler: str = "rtgate-sampler"
    sampler_url: str = ""
    allow_inconclusive: bool = False
    rt_priority: int | None = None
    no_kvm: bool = False
    cpus: int | None = None  # qemu: vCPUs (default: what the measurements pin or count)
    tags: list[str] = field(default_factory=list)
    job_name: str | None = None
    placeholder: bool = False  # images not given become example.invalid URLs, for a template to edit


IMAGE_OPTIONS = ("kernel", "ramdisk", "dtb", "rootfs")
PLACEHOLDER = "https://example.invalid/replace-with-your-{}"


class _Images(dict):  # type: ignore[type-arg]
    """The image URLs as a template sees them, noting which it reads: an image the template asks for
    and nobody gave is an error (or a placeholder), and one given that it never reads is refused."""

    def __init__(self, given: dict[str, str], placeholder: bool) -> None:
        super().__init__(given)
        self.placeholder = placeholder
        self.read: set[str] = set()
        self.missing: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        if key in IMAGE_OPTIONS and not dict.__contains__(self, key):
            if not self.placeholder:
                self.missing.add(key)
            return PLACEHOLDER.format(key)
        return str(dict.__getitem__(self, key))


def _check_param(name: str, value: str) -> str:
    # LAVA writes parameters into its run.sh as NAME='value' without escaping.
    if "'" in value or "\n" in value:
        raise RtgateError(
            f"LAVA parameter {name}: a single quote or newline would become shell code in LAVA's run.sh: {value!r}"
        )
    return value


def render_job(tf: ThresholdFile, opts: JobOptions) -> str:
    names = opts.measurements or list(tf.measurements)
    for n in names:
        if n not in tf.measurements:
            raise RtgateError(f"no measurement {n!r} in {tf.path} (measurements: {', '.join(tf.measurements)})")
    if opts.arch not in QEMU_ARCHES:
        raise RtgateError(f"architecture {opts.arch!r}: one of {', '.join(QEMU_ARCHES)}")
    template, label = _template(opts)
    tests, seconds = _tests(tf, names, opts)
    test_minutes = math.ceil(seconds * MARGIN / 60.0) + 5
    if not opts.testdef_inline and not opts.testdef_repository:
        raise RtgateError("give --testdef-repo URL (a git repository holding lava-defs/), or --inline")
    testdef = {
        "repository": opts.testdef_repository,
        "path": "lava-defs/rtgate.yaml",
        "revision": opts.testdef_revision,
    }
    images = _Images(opts.images, opts.placeholder)
    tcg = opts.no_kvm and opts.device_type == "qemu"
    setup_minutes = TCG_DEPLOY_MINUTES + TCG_BOOT_MINUTES if tcg else BOOT_AND_DEPLOY_MINUTES
    context = {
        "device_type": opts.device_type,
        "job_name": opts.job_name or f"rtgate {tf.platform} {' '.join(names)}",
        "job_minutes": test_minutes + setup_minutes,
        "test_minutes": test_minutes,
        "tests": tests,
        "deploy_minutes": TCG_DEPLOY_MINUTES if tcg else 5,
        "boot_minutes": TCG_BOOT_MINUTES if tcg else 5,
        "testdef": testdef,
        "images": images,
        "kernel_args": _kernel_args(tf, names, opts, template, label),
        "arch": opts.arch,
        "arm": opts.arch in ARM_ARCHES,
        "no_kvm": opts.no_kvm,
        "tags": opts.tags,
        "cpus": opts.cpus or max(cpus_needed(tf.measurements[n]) for n in names),
    }
    if opts.prompt is not None:  # else the template's default, which matches its root file system
        context["prompt"] = opts.prompt
    try:
        text = template.render(**context)
    except jinja2.UndefinedError as e:
        raise RtgateError(f"template {label}: {e.message} (give its option, or a default in the template)") from None
    _check_images(images, opts, label)
    _check_rendered(text, tests, label)
    return text


def _tests(tf: ThresholdFile, names: list[str], opts: JobOptions) -> tuple[list[dict[str, Any]], float]:
    """Each measurement's test definition entry, and how long they run together."""
    tests = []
    seconds = 0.0
    for n in names:
        m = tf.measurements[n]
        params = {
            **board_params(m, opts.duration_s, opts.rt_priority),
            "SAMPLER": opts.sampler,
            "SAMPLER_URL": opts.sampler_url,
            "ALLOW_INCONCLUSIVE": "true" if opts.allow_inconclusive or tf.allow_inconclusive else "false",
        }
        checked = {k: _check_param(k, v) for k, v in params.items()}
        tests.append(
            {
                "measurement": m.name,
                "parameters": checked,
                "inline": _inline_testdef(checked) if opts.testdef_inline else None,
            }
        )
        expected = expected_seconds(m, opts.duration_s)
        if expected is None:
            raise RtgateError(f"measurement {m.name}: cannot tell how long it runs")
        seconds += expected
    return tests, seconds


def _template(opts: JobOptions) -> tuple[jinja2.Template, str]:
    """The job's template and how messages name it. A --template file's own directory comes first:
    a copy named like a shipped template is the one used; base.jinja2 is found beside the shipped ones."""
    if opts.template is None:
        if opts.device_type not in DEVICE_TYPES:
            raise RtgateError(
                f"no template for device type {opts.device_type!r} (shipped: {', '.join(DEVICE_TYPES)}): copy "
                "the closest from lava-defs/templates/ and pass --template FILE (doc/lava.rst, A new device type)"
            )
        env, name, label = _environment((str(templates_dir()),)), f"{opts.device_type}.jinja2", opts.device_type
    else:
        path = Path(opts.template)
        if not path.is_file():
            raise RtgateError(f"--template {opts.template}: no such file")
        env, name, label = _environment((str(path.parent), str(templates_dir()))), path.name, opts.template
    try:
        return env.get_template(name), label
    except jinja2.TemplateSyntaxError as e:
        raise RtgateError(f"{e.filename or label}:{e.lineno}: template error: {e.message}") from None
    except jinja2.TemplateNotFound as e:
        raise RtgateError(f"template {label}: extends or includes {e.name!r}, which is not there") from None


def template_reads(template: jinja2.Template) -> set[str]:
    """The variables a template and the templates it extends or includes read (jinja2's meta API)."""
    env = template.environment
    seen: set[str] = set()
    todo: list[str | None] = [template.name]
    names: set[str] = set()
    while todo:
        name = todo.pop()
        if name is None or name in seen:
            continue
        seen.add(name)
        assert env.loader is not None
        source = env.loader.get_source(env, name)[0]
        ast = env.parse(source)
        names |= jinja2.meta.find_undeclared_variables(ast)
        todo += [t for t in jinja2.meta.find_referenced_templates(ast) if t]
    return names


def _kernel_args(tf: ThresholdFile, names: list[str], opts: JobOptions, template: jinja2.Template, label: str) -> str:
    """--kernel-args (default: the serial console of --arch on qemu) with the isolation the measurements require."""
    cpus = isolated_cpus(tf.measurements[n] for n in names)
    given = (
        opts.kernel_args
        if opts.kernel_args is not None
        else (default_kernel_args(opts.arch) if opts.device_type == "qemu" else "")
    )
    if (cpus or opts.kernel_args) and "kernel_args" not in template_reads(template):
        if not cpus:
            raise RtgateError(f"the {label} job does not use --kernel-args (its template reads no kernel_args)")
        m = cpus[min(cpus)]
        raise RtgateError(
            f"measurement {m}: require.isolated_cpus needs {' '.join(isolation_words(cpus))} on the kernel "
            f"command line, which template {label} cannot carry (it reads no kernel_args): put kernel_args on "
            "the board's kernel command line in the template (U-Boot: context extra_kernel_args; doc/lava.rst)"
        )
    return _check_param("kernel args", merge_kernel_args(given, cpus))


def _check_images(images: _Images, opts: JobOptions, label: str) -> None:
    if images.missing:
        needed = ", ".join(f"--{k}" for k in IMAGE_OPTIONS if k in images.missing)
        raise RtgateError(f"the {label} job needs {needed} (or --placeholder for a template to edit)")
    unused = [k for k in IMAGE_OPTIONS if k in opts.images and k not in images.read]
    if unused:
        raise RtgateError(
            f"the {label} job does not use "
            + ", ".join(f"--{k}" for k in unused)
            + " (its images: "
            + (", ".join(f"--{k}" for k in IMAGE_OPTIONS if k in images.read) or "none")
            + ")"
        )


def _check_rendered(text: str, tests: list[dict[str, Any]], label: str) -> None:
    """A template bug shows here, not in the lab: the job is YAML, and each inline test definition
    reads back as exactly the one rtgate made (rtgate.sh byte for byte)."""
    try:
        doc = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as e:
        raise RtgateError(f"template {label} rendered a job that is not YAML: {e}") from None
    inline = [t["inline"] for t in tests if t["inline"] is not None]
    if not inline:
        return
    found = [
        d.get("repository")
        for a in (doc.get("actions") or [] if isinstance(doc, dict) else [])
        if isinstance(a, dict) and isinstance(a.get("test"), dict)
        for d in a["test"].get("definitions") or []
        if isinstance(d, dict) and d.get("from") == "inline"
    ]
    if found == inline:
        return
    # A template that runs the tests its own way (LAVA's interactive tests) writes no inline definition;
    # it must still name every measurement's test, as base.jinja2 does ("rtgate-<measurement>").
    names = [f"rtgate-{t['measurement']}" for t in tests]
    if found or not all(json.dumps(n) in text or f" {n}\n" in text for n in names):
        raise RtgateError(f"template {label}: the inline test definitions do not read back as rtgate wrote them")


# libyaml's safe loader where PyYAML has it: the same answer, a tenth of the time (a lab renders a job per board).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=8)
def _environment(search_path: tuple[str, ...]) -> jinja2.Environment:
    """One Jinja2 environment per template search path: it keeps the templates it compiled (and
    recompiles one whose file changed), so a lab of 50 boards compiles its template once."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(list(search_path)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["block_yaml"] = block_yaml
    # tojson of an undefined variable: Jinja2's "is undefined" error (one line), not json's TypeError.
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _undefined}
    return env


def _undefined(value: object) -> object:
    if isinstance(value, jinja2.Undefined):
        value._fail_with_undefined_error()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def cpus_needed(m: Measurement) -> int:
    """CPUs a board must have for a measurement: past the highest pinned CPU, or one per thread."""
    need = 1
    for g in m.sampler.threads:
        if isinstance(g.cpus, list) and g.cpus:
            need = max(need, max(g.cpus) + 1, g.count or 0)
        else:  # "all" or not pinned: as many as threads, at least two for "all"
            need = max(need, g.count or (2 if g.cpus == "all" else 1))
    return need


def _inline_testdef(params: dict[str, str]) -> dict[str, Any]:
    """The test definition with the parameters set in its run steps and rtgate.sh as its last step.

    lava-server's submission schema allows no `params` in an inline definition (and lava-dispatcher's
    none beside it), so the values travel as NAME='value' steps, exactly as LAVA itself writes them
    into its run.sh (_check_param refused quotes and newlines)."""
    doc, script = _testdef()
    doc = copy.deepcopy(doc)
    doc.pop("params", None)
    steps = [f"{name}='{value}'" for name, value in params.items()]
    steps += doc["run"]["steps"][:-1]  # the export line
    # A subshell: the script's exit must not end LAVA's run.sh before its end-of-run signal.
    steps.append("(\n" + script + ")")
    doc["run"]["steps"] = steps
    return dict(doc)


@functools.lru_cache(maxsize=1)
def _testdef() -> tuple[dict[str, Any], str]:
    """rtgate.yaml and rtgate.sh as installed, read once per process (a lab inlines them per board)."""
    base = testdef_path()
    return yaml.load((base / "rtgate.yaml").read_text(), Loader=_SAFE_LOADER), (base / "rtgate.sh").read_text()
