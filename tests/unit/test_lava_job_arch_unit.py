# SPDX-License-Identifier: GPL-2.0-or-later
"""`rtgate lava job --arch`: the qemu job for another architecture than x86 (its proof under a real
LAVA server: tests/system/test_lava_arm64.py)."""

from __future__ import annotations

import pytest
import yaml

from conftest import ROOT
from rtgate.core.thresholds import load_thresholds
from rtgate.errors import RtgateError
from rtgate.lava.job import JobOptions, render_job

SPEC = str(ROOT / "thresholds" / "default.yaml")


def job(**kw: object) -> dict[str, object]:
    opts = JobOptions(testdef_inline=True, placeholder=True, **kw)  # type: ignore[arg-type]
    return dict(yaml.safe_load(render_job(load_thresholds(SPEC), opts)))


def test_arm64_job_asks_for_aarch64_qemu_a_virtio_overlay_and_the_pl011_console() -> None:
    doc = job(arch="arm64", no_kvm=True)
    want = {"arch": "arm64", "guestfs_interface": "virtio", "extra_options": ["-smp 2"], "no_kvm": True}
    assert doc["context"] == want
    kernel = doc["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]
    assert 'console=ttyAMA0,115200"' in kernel


def test_the_default_is_the_x86_job_as_before() -> None:
    doc = job()
    assert doc["context"] == {"arch": "amd64", "extra_options": ["-smp 2"]}
    assert 'console=ttyS0,115200"' in doc["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]


def test_kernel_args_given_win_over_the_architectures_console() -> None:
    doc = job(arch="arm64", kernel_args="console=ttyAMA1")
    assert '-append "console=ttyAMA1"' in doc["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]


def test_an_architecture_qemu_cannot_be_asked_for_is_refused() -> None:
    with pytest.raises(RtgateError, match="architecture 'sparc': one of amd64"):
        job(arch="sparc")
