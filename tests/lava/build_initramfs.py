# SPDX-License-Identifier: GPL-2.0-or-later
"""Build a tiny initramfs for LAVA's qemu device: busybox, the static sampler, and the modules
that LAVA's test overlay disk needs: IDE (ata_piix, sd_mod: what the stock qemu device type
attaches on x86), virtio block (what a device dictionary may choose instead, and the only disk of
an arm64 `virt` machine), ext4. For another architecture than this machine's (arm64), the kernel's
modules and busybox come from Debian's packages unpacked into a directory (tests/lava/foreign.py),
and busybox lists its applets under qemu-user. Test tooling, not shipped."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

# Per Debian architecture: the overlay disk's modules. virt on arm64 has no IDE; its virtio devices
# sit on PCI (virtio_pci) or MMIO (virtio_mmio), by QEMU's choice of device.
MODULES = {
    "amd64": ("virtio_pci", "virtio_blk", "ata_piix", "sd_mod", "crc32c_generic", "ext4"),
    "arm64": ("virtio_pci", "virtio_mmio", "virtio_blk", "crc32c_generic", "ext4"),
}
USER_QEMU = {"arm64": "qemu-aarch64-static"}  # runs the guest's busybox here, to list its applets
PROMPT = "rtgate-dut# "

INIT = f"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /dev/disk/by-uuid
while read -r mod; do insmod "/lib/modules/$mod" 2>/dev/null; done < /lib/modules/load-order
# LAVA mounts its test overlay by UUID: busybox has no udev, so make the links by hand.
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  [ -e /dev/vda ] || [ -e /dev/sda ] && break; sleep 0.5
done
# The ext2 UUID: 16 bytes at 1024 + 104 in the superblock (busybox-static has no blkid).
for dev in /dev/vd? /dev/sd?; do
  [ -b "$dev" ] || continue
  hex=$(od -An -tx1 -j1128 -N16 "$dev" | tr -d ' \\n')
  [ ${{#hex}} -eq 32 ] || continue
  uuid=$(echo "$hex" | sed 's/\\(........\\)\\(....\\)\\(....\\)\\(....\\)\\(............\\)/\\1-\\2-\\3-\\4-\\5/')
  ln -sf "$dev" "/dev/disk/by-uuid/$uuid"
done
export PATH=/usr/bin:/bin:/sbin:/usr/sbin
export PS1='{PROMPT}'
echo "rtgate initramfs ready"
exec setsid cttyhack sh
"""


def module_closure(kernel: str, arch: str = "amd64", root: Path = Path("/")) -> list[str]:
    """The modules to load, dependencies first, as paths relative to <root>/lib/modules/<kernel>."""
    base = root / "lib" / "modules" / kernel
    deps: dict[str, list[str]] = {}
    for line in (base / "modules.dep").read_text().splitlines():
        mod, _, rest = line.partition(":")
        deps[mod] = rest.split()
    by_name = {Path(m).name.split(".ko")[0].replace("-", "_"): m for m in deps}
    order: list[str] = []

    def visit(mod: str) -> None:
        for d in reversed(deps[mod]):
            visit(d)
        if mod not in order:
            order.append(mod)

    for name in MODULES[arch]:
        visit(by_name[name])
    return order


def build(out: Path, sampler: Path, kernel: str, arch: str = "amd64", packages: Path = Path("/")) -> Path:
    """The initramfs at `out` for Debian architecture `arch`: the kernel release's modules and busybox
    from `packages` (this machine's root, or Debian's packages for `arch` unpacked there)."""
    root = out.parent / f"initramfs-root-{out.name}"
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "lib/modules", "root"):
        (root / d).mkdir(parents=True, exist_ok=True)
    if packages == Path("/"):
        busybox = shutil.which("busybox") or "/bin/busybox"
    else:
        busybox = str(packages / "bin" / "busybox")
    shutil.copy(busybox, root / "bin" / "busybox")
    runner = [USER_QEMU[arch]] if arch in USER_QEMU else []
    applets = subprocess.run(
        [*runner, busybox, "--list-full"], capture_output=True, text=True, check=True
    ).stdout.split()
    for applet in applets:
        link = root / applet
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink("/bin/busybox", link)
    shutil.copy(sampler, root / "usr" / "bin" / "rtgate-sampler")
    order = module_closure(kernel, arch, packages)
    for mod in order:
        shutil.copy(packages / "lib" / "modules" / kernel / mod, root / "lib" / "modules" / Path(mod).name)
    (root / "lib" / "modules" / "load-order").write_text("".join(Path(m).name + "\n" for m in order))
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    cpio = subprocess.run(
        ["sh", "-c", "find . | sort | cpio -o -H newc --quiet"], cwd=root, capture_output=True, check=True
    ).stdout
    with gzip.open(out, "wb") as f:
        f.write(cpio)
    return out
