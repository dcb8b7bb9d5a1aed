# SPDX-License-Identifier: GPL-2.0-or-later
"""LAVA job templates: the reference in doc/lava.rst against base.jinja2 and the shipped templates
(read with jinja2's own parser and meta API), each template's prompt against its root file
system, the kernel command line for require: isolated_cpus, and --inline as readable YAML that
reads back as rtgate.sh byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import jinja2.meta
import jinja2.nodes
import pytest
import yaml

from conftest import ROOT
from in_process import rtgate
from rtgate.lava.cmdline import cpulist, merge_kernel_args, parse_cpulist
from rtgate.lava.yaml_block import block_yaml

TEMPLATES = ROOT / "lava-defs" / "templates"
DOC = (ROOT / "doc" / "lava.rst").read_text()
IMAGES = ["--kernel", "http://lab/k", "--dtb", "http://lab/d.dtb"]


def _ast(name: str) -> jinja2.nodes.Template:
    return jinja2.Environment().parse((TEMPLATES / name).read_text())


def _section(title: str) -> str:
    """The text of a section of doc/lava.rst, up to the next heading."""
    body = re.split(rf"\n{re.escape(title)}\n[-~]+\n", DOC, maxsplit=1)[1]
    return re.split(r"\n[^\n]+\n[-~=]{4,}\n", body, maxsplit=1)[0]


def _table_names(section: str) -> set[str]:
    """The ``names`` that start the rows of the section's tables."""
    return set(re.findall(r"^``([a-z_]+)``\s", section, re.M))


REFERENCE = _table_names(_section("Template reference"))


def test_every_block_of_base_is_documented() -> None:
    blocks = {b.name for b in _ast("base.jinja2").find_all(jinja2.nodes.Block)}
    assert blocks == {"context", "deploy", "boot"}
    assert sorted(blocks - REFERENCE) == []


@pytest.mark.parametrize("name", sorted(p.name for p in TEMPLATES.glob("*.jinja2")))
def test_every_variable_a_template_reads_is_documented(name: str) -> None:
    read = jinja2.meta.find_undeclared_variables(_ast(name))
    assert read, name
    assert sorted(read - REFERENCE) == [], f"{name} reads variables doc/lava.rst does not name"


def test_the_reference_check_can_fail() -> None:
    """A variable added to base without documenting it is caught: the same check on a changed copy."""
    text = (TEMPLATES / "base.jinja2").read_text().replace("priority: medium", "priority: {{ job_priority }}")
    read = jinja2.meta.find_undeclared_variables(jinja2.Environment().parse(text))
    assert "job_priority" in read - REFERENCE


@pytest.mark.parametrize("name", [p.name for p in TEMPLATES.glob("*.jinja2") if p.name != "base.jinja2"])
def test_every_device_template_extends_base_and_fills_only_its_blocks(name: str) -> None:
    ast = _ast(name)
    assert list(jinja2.meta.find_referenced_templates(ast)) == ["base.jinja2"]
    assert {b.name for b in ast.find_all(jinja2.nodes.Block)} <= {"context", "deploy", "boot"}


def _job(*args: str) -> dict:
    r = rtgate("lava", "job", *args)
    assert r.returncode == 0, r.stderr
    return yaml.safe_load(r.stdout)


def _boot(doc: dict) -> dict:
    return next(a["boot"] for a in doc["actions"] if "boot" in a)


def _deploy(doc: dict) -> dict:
    return next(a["deploy"] for a in doc["actions"] if "deploy" in a)


@pytest.mark.parametrize(
    "device,images,os_,prompt,login",
    [
        ("qemu", ["--kernel", "http://lab/k", "--ramdisk", "http://lab/r"], None, "/ # ", False),
        ("bcm2711-rpi-4-b", [*IMAGES, "--ramdisk", "http://lab/r"], "oe", "/ # ", False),
        ("imx8mp-evk", [*IMAGES, "--rootfs", "http://lab/root.tar.xz"], "debian", "root@[^:]*:~#", True),
    ],
)
def test_each_templates_default_prompt_matches_its_root_file_system(
    device: str, images: list[str], os_: str | None, prompt: str, login: bool
) -> None:
    spec = str(ROOT / "thresholds" / "default.yaml")
    doc = _job(spec, "--device-type", device, *images, "--inline")
    boot = _boot(doc)
    assert _deploy(doc).get("os") == os_
    assert boot["prompts"] == [prompt]
    assert ("auto_login" in boot) is login
    if login:  # Debian's getty, then root's shell prompt whatever the host name
        assert boot["auto_login"] == {"login_prompt": "login:", "username": "root"}
        assert re.search(prompt, "root@imx8mp-evk:~# ") and not re.search(prompt, "imx8mp-evk login: ")
    assert _boot(_job(spec, "--device-type", device, *images, "--inline", "--prompt", "# $"))["prompts"] == ["# $"]


ISOLATED = """\
platform: acme-imx8
require: {{preempt_rt: true, isolated_cpus: true}}
measurements:
  idle:
    sampler: {{duration: 10s, threads: [{thread}]}}
    gates: [{{name: max, kind: max, limit_us: 100}}]
  loaded:
    sampler: {{duration: 10s, threads: [{{name: rt, cpus: [3]}}]}}
    load: {{kind: cpu, workers: 2, cpus: [0, 1]}}
    gates: [{{name: max, kind: max, limit_us: 150}}]
"""


def _isolated(tmp_path: Path, thread: str = "{name: rt, cpus: [3]}") -> str:
    spec = tmp_path / "acme-imx8.yaml"
    spec.write_text(ISOLATED.format(thread=thread))
    return str(spec)


def test_isolated_cpus_reach_a_u_boot_job_as_extra_kernel_args(tmp_path: Path) -> None:
    spec = _isolated(tmp_path)
    doc = _job(spec, "--device-type", "imx8mp-evk", *IMAGES, "--rootfs", "http://lab/r.tar.xz", "--inline")
    assert doc["context"] == {"extra_kernel_args": "isolcpus=3 nohz_full=3 rcu_nocbs=3"}
    # Two measurements pinned to different CPUs: one isolation for both, in the kernel's cpu-list form.
    spec = _isolated(tmp_path, "{name: rt, cpus: [2]}")
    doc = _job(spec, "--device-type", "bcm2711-rpi-4-b", *IMAGES, "--ramdisk", "http://lab/r", "--inline")
    assert doc["context"]["extra_kernel_args"] == "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3"
    # Nothing to isolate, nothing given: a U-Boot job has no context (the device dictionary's args stay).
    doc = _job(
        str(ROOT / "thresholds" / "default.yaml"), "--device-type", "imx8mp-evk", *IMAGES, "--placeholder", "--inline"
    )
    assert "context" not in doc


def test_isolated_cpus_merge_into_qemus_kernel_args(tmp_path: Path) -> None:
    spec = _isolated(tmp_path)
    qemu = ["--kernel", "http://lab/k", "--ramdisk", "http://lab/r", "--inline"]
    arg = _deploy(_job(spec, *qemu))["images"]["kernel"]["image_arg"]
    assert arg == '-kernel {kernel} -append "console=ttyS0,115200 isolcpus=3 nohz_full=3 rcu_nocbs=3"'
    given = ["--kernel-args", "console=ttyAMA0 isolcpus=nohz,domain,1-3 quiet"]
    arg = _deploy(_job(spec, *qemu, *given))["images"]["kernel"]["image_arg"]
    assert arg == '-kernel {kernel} -append "console=ttyAMA0 isolcpus=nohz,domain,1-3 quiet nohz_full=3 rcu_nocbs=3"'
    assert arg.count("isolcpus=") == 1


def test_kernel_args_that_leave_a_required_cpu_out_are_refused(tmp_path: Path) -> None:
    spec = _isolated(tmp_path)
    r = rtgate("lava", "job", spec, "--kernel", "k", "--ramdisk", "r", "--inline", "--kernel-args", "nohz_full=1")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "--kernel-args: nohz_full=1 leaves out cpu 3" in r.stderr and "require.isolated_cpus" in r.stderr


def test_a_template_that_cannot_carry_kernel_args_refuses_isolated_cpus(tmp_path: Path) -> None:
    own = tmp_path / "plain.jinja2"
    own.write_text(
        '{% extends "base.jinja2" %}\n{% block boot %}\n- boot:\n    method: u-boot\n    commands: nfs\n'
        '    prompts: ["# "]\n{% endblock %}\n'
    )
    args = ["lava", "job", _isolated(tmp_path), "--device-type", "acme", "--template", str(own), "--inline"]
    r = rtgate(*args)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    for part in ("measurement idle", "require.isolated_cpus", "isolcpus=3 nohz_full=3 rcu_nocbs=3", "kernel_args"):
        assert part in r.stderr
    r = rtgate("lava", "job", str(ROOT / "thresholds" / "default.yaml"), *args[3:], "--kernel-args", "quiet")
    assert r.returncode == 2 and "does not use --kernel-args" in r.stderr


@pytest.mark.parametrize("thread", ["{name: rt, cpus: all}", "{name: rt}"])
def test_isolated_cpus_without_pinned_threads_is_refused(tmp_path: Path, thread: str) -> None:
    spec = _isolated(tmp_path, thread)
    r = rtgate("lava", "job", spec, "--kernel", "k", "--ramdisk", "r", "--inline")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "measurement idle: require.isolated_cpus needs its threads pinned" in r.stderr


def test_cpulists() -> None:
    assert cpulist([3]) == "3" and cpulist([5, 1, 2, 3]) == "1-3,5" and cpulist([0, 2, 4]) == "0,2,4"
    assert parse_cpulist("nohz,domain,1-3,5") == {1, 2, 3, 5} and parse_cpulist("x") is None
    assert merge_kernel_args("quiet", {}) == "quiet"
    assert merge_kernel_args("", {1: "m", 2: "m"}) == "isolcpus=1-2 nohz_full=1-2 rcu_nocbs=1-2"


def test_an_unknown_device_type_says_how_to_make_a_template() -> None:
    r = rtgate("lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--device-type", "acme-imx8", "--inline")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "no template for device type 'acme-imx8'" in r.stderr and "--template FILE" in r.stderr
    assert "A new device type" in r.stderr and "\nA new device type\n-----" in DOC


@pytest.mark.parametrize(
    "text,message",
    [(None, "no such file"), ("{% block deploy %}", "template error"), ('{% extends "nope.jinja2" %}', "nope")],
)
def test_a_broken_template_is_a_one_line_error(tmp_path: Path, text: str | None, message: str) -> None:
    own = tmp_path / "own.jinja2"
    if text is not None:
        own.write_text(text)
    r = rtgate("lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--template", str(own), "--inline")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr


def test_a_template_reading_prompt_without_a_default_needs_prompt(tmp_path: Path) -> None:
    own = tmp_path / "own.jinja2"
    own.write_text(
        '{% extends "qemu.jinja2" %}\n{% block boot %}\n- boot:\n    prompts: [{{ prompt | tojson }}]\n{% endblock %}\n'
    )
    args = ["lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--template", str(own), "--placeholder"]
    r = rtgate(*args, "--inline")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "'prompt' is undefined" in r.stderr
    assert rtgate(*args, "--inline", "--prompt", "# ").returncode == 0


def test_a_copy_named_like_a_shipped_template_is_the_one_used(tmp_path: Path) -> None:
    own = tmp_path / "imx8mp-evk.jinja2"
    own.write_text((TEMPLATES / "imx8mp-evk.jinja2").read_text().replace("os: debian", "os: oe"))
    doc = _job(
        str(ROOT / "thresholds" / "default.yaml"),
        "--device-type",
        "imx8mp-evk",
        "--template",
        str(own),
        "--placeholder",
        "--inline",
    )
    assert _deploy(doc)["os"] == "oe"


# --- --inline: readable, and rtgate.sh byte for byte -------------------------------------------------


def _inline_job(tmp_path: Path) -> tuple[str, dict]:
    r = rtgate("lava", "job", str(ROOT / "thresholds" / "two-thread-example.yaml"), "--inline", "--placeholder")
    assert r.returncode == 0, r.stderr
    return r.stdout, yaml.safe_load(r.stdout)


def test_inline_carries_rtgate_sh_byte_for_byte_as_a_literal_block(tmp_path: Path) -> None:
    text, doc = _inline_job(tmp_path)
    script = (ROOT / "lava-defs" / "rtgate.sh").read_text()
    steps = doc["actions"][2]["test"]["definitions"][0]["repository"]["run"]["steps"]
    assert steps[-1] == "(\n" + script + ")"
    # Readable: every line of the script is a line of the job, as it is in the file.
    job_lines = text.splitlines()
    at = job_lines.index(next(line for line in job_lines if line.endswith("- |-")))
    pad = " " * (len(job_lines[at + 1]) - len(job_lines[at + 1].lstrip()))
    assert job_lines[at + 1 : at + 3 + script.count("\n")] == [
        pad + line if line else "" for line in ("(\n" + script + ")").split("\n")
    ]
    assert len(max(job_lines, key=len)) < 1000 < len(script)  # no line holds the whole script


def test_inline_definitions_are_the_definition_rtgate_made(tmp_path: Path) -> None:
    from rtgate.lava.job import _inline_testdef

    _, doc = _inline_job(tmp_path)
    definition = doc["actions"][2]["test"]["definitions"][0]
    params = dict(step.split("=", 1) for step in definition["repository"]["run"]["steps"][:9])
    assert definition["repository"] == _inline_testdef({k: v.strip("'") for k, v in params.items()})


@pytest.mark.parametrize(
    "value",
    [
        {"a": ["x", {"b": "c\nd"}], "e": {}, "f": [], "g": None, "h": 1, "i": True},
        {"s": ["  leading blanks\nand more", "\n\nblank first", "trailing\n\n\n", "one\n", "\t tab\n \n"]},
        {"odd key": "x: y # z", "k": "'quoted' \"double\"", "u": "caf\u00e9 \u2028 line sep", "r": "a\r\nb"},
    ],
)
def test_block_yaml_reads_back_as_the_same_data(value: dict) -> None:
    text = "top:\n" + block_yaml(value, 2) + "\n"
    assert yaml.safe_load(text) == {"top": value}


@pytest.mark.parametrize(
    "tests,ok",
    [
        # LAVA's interactive tests, as the suite's local-shell boards run: no inline definition, each
        # measurement's test named
        ('- test:\n    interactive:\n    - name: "rtgate-smp"\n      prompts: ["# "]\n', True),
        ("- test:\n    interactive: []\n", False),  # the measurement's test is gone: the job would say nothing
        ("- test:\n    definitions:\n    - {from: inline, name: rtgate-smp, path: x.yaml, repository: {}}\n", False),
    ],
    ids=["interactive", "dropped", "edited"],
)
def test_a_template_that_drops_or_edits_the_inline_test_is_refused(tmp_path: Path, tests: str, ok: bool) -> None:
    own = tmp_path / "own.jinja2"
    own.write_text("device_type: own\njob_name: j\nactions:\n" + tests)
    r = rtgate("lava", "job", str(ROOT / "thresholds" / "default.yaml"), "--template", str(own), "--inline")
    if ok:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2 and "do not read back as rtgate wrote them" in r.stderr, r.stderr
