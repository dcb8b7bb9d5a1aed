# SPDX-License-Identifier: GPL-2.0-or-later
"""Build a tiny initramfs for LAVA's qemu device: busybox, the static sampler, and the modules
that LAVA's test overlay disk needs: IDE (ata_piix, sd_mod: what the stock qemu device type
attaches), virtio block (what a device dictionary may choose instead), ext4. Test tooling, not
shipped."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

MODULES = ("virtio_pci", "virtio_blk", "ata_piix", "sd_mod", "crc32c_generic", "ext4")
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


def module_closure(kernel: str) -> list[str]:
    """The modules to load, dependencies first, as paths relative to /lib/modules/<kernel>."""
    base = Path("/lib/modules") / kernel
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

    for name in MODULES:
        visit(by_name[name])
    return order


def build(out: Path, sampler: Path, kernel: str) -> Path:
    root = out.parent / "initramfs-root"
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "lib/modules", "root"):
        (root / d).mkdir(parents=True, exist_ok=True)
    busybox = shutil.which("busybox") or "/bin/busybox"
    shutil.copy(busybox, root / "bin" / "busybox")
    applets = subprocess.run([busybox, "--list-full"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        link = root / applet
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink("/bin/busybox", link)
    shutil.copy(sampler, root / "usr" / "bin" / "rtgate-sampler")
    order = module_closure(kernel)
    for mod in order:
        shutil.copy(Path("/lib/modules") / kernel / mod, root / "lib" / "modules" / Path(mod).name)
    (root / "lib" / "modules" / "load-order").write_text("".join(Path(m).name + "\n" for m in order))
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    cpio = subprocess.run(
        ["sh", "-c", "find . | sort | cpio -o -H newc --quiet"], cwd=root, capture_output=True, check=True
    ).stdout
    with gzip.open(out, "wb") as f:
        f.write(cpio)
    return out
