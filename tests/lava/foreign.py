# SPDX-License-Identifier: GPL-2.0-or-later
"""Debian's packages for another architecture than this machine's, for the QEMU boards of the
tests: the arm64 PREEMPT_RT kernel (linux-image-rt-arm64's kernel package) and busybox-static, fetched
with `apt-get download` (never installed) and unpacked with `dpkg-deb -x` into a cache directory,
where depmod writes the modules.dep that a package leaves to its postinst.

scripts/bootstrap --test adds the architecture to dpkg (`dpkg --add-architecture arm64`, then
`apt-get update`) and runs this file, so CI has everything before the suite starts; a test calls
`arm64_packages()`, which unpacks again only when the cache lacks what it needs. Run as a script:

    python3 tests/lava/foreign.py [CACHE]    (default $RTGATE_TEST_CACHE or /var/cache/rtgate-tests)

Test tooling, not shipped."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("RTGATE_TEST_CACHE", "/var/cache/rtgate-tests"))
KERNEL_META = "linux-image-rt-arm64"
BUSYBOX = "busybox-static"


class FetchError(RuntimeError):
    pass


@dataclass(frozen=True)
class Packages:
    root: Path  # the packages unpacked: boot/, lib/modules/<release>/, bin/busybox
    release: str  # the kernel's release, as uname -r says it in the guest

    @property
    def kernel(self) -> Path:
        return self.root / "boot" / f"vmlinuz-{self.release}"

    @property
    def busybox(self) -> Path:
        return self.root / "bin" / "busybox"


def _run(argv: list[str], cwd: Path | None = None) -> str:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FetchError(f"{argv[0]}: {e}") from e
    if r.returncode != 0:
        raise FetchError(f"{' '.join(argv)}: {(r.stderr or r.stdout).strip()[-1000:]}")
    return r.stdout


def _kernel_package(arch: str) -> str:
    """The versioned kernel package the metapackage depends on, e.g. linux-image-6.1.0-57-rt-arm64."""
    if arch not in _run(["dpkg", "--print-foreign-architectures"]).split():
        raise FetchError(f"dpkg has no {arch} architecture (dpkg --add-architecture {arch} && apt-get update)")
    out = _run(["apt-cache", "depends", f"{KERNEL_META}:{arch}"])
    for line in out.splitlines():
        name = line.strip().removeprefix("Depends:").strip()
        if line.strip().startswith("Depends:") and name.startswith("linux-image-"):
            return name.split(":")[0]
    raise FetchError(f"apt-cache depends {KERNEL_META}:{arch}: no kernel package in {out!r}")


def fetch(cache: Path = CACHE, arch: str = "arm64") -> Packages:
    """The kernel and busybox of `arch` unpacked under cache/<arch>/<kernel package>: downloaded and
    unpacked once per kernel version (an older one is removed); without apt's lists for `arch`, what
    the cache holds."""
    base = cache / arch
    marker = base / "ready.json"
    try:
        package = _kernel_package(arch)
    except FetchError:
        if marker.is_file():  # apt cannot tell now (no lists): the kernel unpacked last time
            doc = json.loads(marker.read_text())
            return Packages(base / doc["package"], doc["release"])
        raise
    cached = _cached(base, package)
    if cached:
        return cached
    if os.geteuid() != 0:
        raise FetchError(f"{package}:{arch} is not unpacked in {base} and only root may fetch it there")
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one session unpacks; one that waited uses what it unpacked
        cached = _cached(base, package)
        if cached:
            return cached
        release = _unpack(base, package, arch)
        marker.write_text(json.dumps({"package": package, "release": release}))
    finally:
        os.close(fd)
    return Packages(base / package, release)


def _cached(base: Path, package: str) -> Packages | None:
    marker = base / "ready.json"
    if not marker.is_file():
        return None
    doc = json.loads(marker.read_text())
    if doc.get("package") != package or not (base / package / "boot").is_dir():
        return None
    return Packages(base / package, doc["release"])


def _unpack(base: Path, package: str, arch: str) -> str:
    """Download `package` and busybox for `arch`, unpack both into base/<package>: the kernel's release."""
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        work = Path(tmp)
        # As root into our own directory (apt's _apt user may not write there).
        download = ["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root"]
        _run([*download, f"{package}:{arch}", f"{BUSYBOX}:{arch}"], cwd=work)
        root = work / "root"
        for deb in sorted(work.glob("*.deb")):
            _run(["dpkg-deb", "-x", str(deb), str(root)])
        releases = sorted(p.name for p in (root / "lib" / "modules").iterdir())
        if len(releases) != 1:
            raise FetchError(f"{package}: expected one kernel release in lib/modules, found {releases}")
        release = releases[0]
        _run(["depmod", "-b", str(root), release])  # the package leaves modules.dep to its postinst
        for old in base.iterdir():
            if old.name.startswith("linux-image-"):
                shutil.rmtree(old, ignore_errors=True)
        root.rename(base / package)
    return release


def main(argv: list[str]) -> int:
    cache = Path(argv[1]) if len(argv) > 1 else CACHE
    try:
        got = fetch(cache)
    except FetchError as e:
        print(f"foreign.py: {e}", file=sys.stderr)
        return 1
    print(f"foreign.py: arm64 kernel {got.release} and busybox in {got.root}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
