# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot Debian's PREEMPT_RT kernel (linux-image-rt-amd64) under QEMU with THIS machine's root file
system, read-only over 9p, and run one shell script there. Test tooling, not shipped.

The initramfs is tiny: busybox and the RT kernel's virtio/9p modules. Its init mounts the host's
root read-only, puts tmpfs on /tmp and /run, proc, sysfs, devtmpfs and tracefs under it, mounts
a second, writable 9p share (the "work" directory the caller gives) at /tmp/rtkernel, mounts
each read-only "share" the caller names at its own path again (a checkout or virtual environment
under /tmp would otherwise be hidden by the guest's tmpfs), and runs
`sh /tmp/rtkernel/run.sh` chrooted into the host's root: the guest thus has rtla, Python, the
project's .venv and rtgate-sampler exactly as installed here, on the real PREEMPT_RT kernel.
The script's output goes to work/guest.log, its exit status to work/guest.rc; then the guest
powers off. work/heartbeat holds the guest's uptime, written every 2 s while user space runs. A
guest that does not finish in time is asked where it is (see _ask_where) before it is killed.

Command line (to capture fixtures by hand): python tests/rtkernel/guest.py WORKDIR (runs
WORKDIR/run.sh and prints the console).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Dependencies first; insmod of one already built in is harmless (it fails, we go on).
MODULES = ("virtio_pci", "9pnet_virtio", "9p")
MARK = "rtkernel:"
SYSRQ_KEYS = ("9", "l", "w", "t")  # 9 first: the answers are printed at KERN_INFO
SYSRQ_SECONDS = 20  # for the answers to reach the console
STALL_SECONDS = 90  # a guest whose heartbeat (every 2 s) stops this long is stuck

INIT = f"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
while read -r mod; do insmod "/lib/modules/$mod" 2>/dev/null; done < /lib/modules/load-order
mkdir -p /host
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host; then
  echo "{MARK} cannot mount the host root over 9p"; poweroff -f
fi
mount -t tmpfs -o mode=1777 tmp /host/tmp
mount -t tmpfs -o mode=755 run /host/run
mount -t proc proc /host/proc || echo "rtkernel: proc mount failed"
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts devpts /host/dev/pts
mount -t tmpfs -o mode=1777 shm /host/dev/shm
mount -t tracefs tracefs /host/sys/kernel/tracing
mount -t debugfs debugfs /host/sys/kernel/debug
mkdir -p /host/tmp/rtkernel
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 work /host/tmp/rtkernel; then
  echo "{MARK} cannot mount the work directory over 9p"; poweroff -f
fi
{{SHARES}}echo "{MARK} running $(uname -r) $(cat /sys/kernel/realtime 2>/dev/null)"
# A heartbeat outside the script: its last time tells whether the guest's user space went on.
( while :; do cat /proc/uptime > /host/tmp/rtkernel/heartbeat; sleep 2; done ) &
chroot /host /bin/sh -c 'cd /tmp/rtkernel && exec /bin/sh ./run.sh' > /host/tmp/rtkernel/guest.log 2>&1
echo $? > /host/tmp/rtkernel/guest.rc
sync
echo "{MARK} done rc=$(cat /host/tmp/rtkernel/guest.rc)"
poweroff -f
"""


def _share_mounts(shares: list[Path]) -> str:
    """Init lines that mount share N (QEMU tag shareN) read-only at its own path under /host."""
    lines = []
    for i, path in enumerate(shares):
        target = shlex.quote(f"/host{path}")
        lines.append(
            f"mkdir -p {target}; mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 share{i} {target}"
            f' || {{ echo "{MARK} cannot mount {shlex.quote(str(path))} over 9p"; poweroff -f; }}'
        )
    return "".join(line + "\n" for line in lines)


def _virtfs_path(path: Path) -> str:
    """QEMU's option syntax doubles a comma inside a value."""
    return str(path).replace(",", ",,")


def rt_kernel() -> tuple[Path, str] | None:
    """The installed PREEMPT_RT kernel image and its release, or None."""
    for image in sorted(Path("/boot").glob("vmlinuz-*-rt-*"), reverse=True):
        release = image.name.removeprefix("vmlinuz-")
        if (Path("/lib/modules") / release / "modules.dep").is_file():
            return image, release
    return None


def module_closure(release: str, names: tuple[str, ...] = MODULES) -> list[str]:
    """The modules to load, dependencies first, as paths relative to /lib/modules/<release>."""
    base = Path("/lib/modules") / release
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

    for name in names:
        if name in by_name:  # absent: built into this kernel
            visit(by_name[name])
    return order


def _decompress(src: Path, dst: Path) -> None:
    """busybox insmod reads plain .ko files; Debian may ship them compressed."""
    if src.suffix == ".xz":
        dst.write_bytes(subprocess.run(["xz", "-dc", str(src)], capture_output=True, check=True).stdout)
    elif src.suffix == ".zst":
        dst.write_bytes(subprocess.run(["zstd", "-dc", str(src)], capture_output=True, check=True).stdout)
    elif src.suffix == ".gz":
        dst.write_bytes(gzip.decompress(src.read_bytes()))
    else:
        shutil.copy(src, dst)


def build_initramfs(out: Path, release: str, shares: list[Path] | None = None) -> Path:
    root = out.parent / (out.name + ".root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "lib/modules"):
        (root / d).mkdir(parents=True, exist_ok=True)
    busybox = shutil.which("busybox") or "/bin/busybox"
    shutil.copy(busybox, root / "bin" / "busybox")
    applets = subprocess.run([busybox, "--list-full"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        link = root / applet
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink("/bin/busybox", link)
    order = module_closure(release)
    names = []
    for mod in order:
        name = Path(mod).name.split(".ko")[0] + ".ko"
        _decompress(Path("/lib/modules") / release / mod, root / "lib" / "modules" / name)
        names.append(name)
    (root / "lib" / "modules" / "load-order").write_text("".join(n + "\n" for n in names))
    (root / "init").write_text(INIT.replace("{SHARES}", _share_mounts(shares or [])))
    (root / "init").chmod(0o755)
    cpio = subprocess.run(
        ["sh", "-c", "find . | sort | cpio -o -H newc --quiet"], cwd=root, capture_output=True, check=True
    ).stdout
    shutil.rmtree(root, ignore_errors=True)
    with gzip.open(out, "wb", compresslevel=1) as f:
        f.write(cpio)
    return out


def _ask_where(monitor: Path) -> str:
    """Where a guest that stopped making progress is: each vCPU's instruction pointer, three times
    (QEMU's monitor reads it whatever the guest's state; the guest boots with nokaslr, so the
    kernel's /proc/kallsyms from any boot names it), then Magic SysRq keys: every CPU's backtrace,
    the blocked tasks, all tasks with the scheduler's run queues (the answers go to the console)."""
    report = []
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(monitor))
            for _ in range(3):
                s.sendall(b"info registers -a\n")
                time.sleep(1)
            s.settimeout(0.5)
            replies = b""
            with contextlib.suppress(OSError):
                while chunk := s.recv(65536):
                    replies += chunk
            for m in re.finditer(r"CPU#(\d+)\s.*?RIP=([0-9a-f]+)", replies.decode(errors="replace"), re.DOTALL):
                space = "kernel" if int(m[2], 16) >= 1 << 63 else "user space"
                report.append(f"{MARK} cpu {m[1]} at {m[2]} ({space})")
            for key in SYSRQ_KEYS:
                s.sendall(f"sendkey alt-sysrq-{key}\n".encode())
                time.sleep(2)
    except OSError as e:
        report.append(f"{MARK} cannot reach QEMU's monitor: {e}")
    return "".join(line + "\n" for line in report)


def _stuck(heartbeat: Path, elapsed: float, timeout: float) -> str | None:
    """Why the guest is to be stopped, or None while it goes on."""
    if elapsed > timeout:
        return f"not done after {timeout:.0f} s"
    with contextlib.suppress(FileNotFoundError):
        if (silent := time.time() - heartbeat.stat().st_mtime) > STALL_SECONDS:
            return f"its user space stopped: no heartbeat for {silent:.0f} s"
    return None


def boot(
    work: Path,
    timeout: float = 600,
    cpus: int = 2,
    memory_mb: int = 1536,
    kernel: tuple[Path, str] | None = None,
    shares: list[Path] | None = None,
    tcg_threads: str = "single",
) -> tuple[int | None, str, float]:
    """Boot the RT kernel, run work/run.sh in the guest; returns (script status or None, console, seconds).

    `shares` (default: this Python's prefix, i.e. the project's virtual environment) are seen in the
    guest at their own paths wherever they lie, /tmp included.

    TCG, not KVM: nested KVM hangs this kernel's early boot on our CI VMs. `-cpu max`: the host's
    Python packages (numpy) need x86-64-v2 instructions that TCG's default qemu64 CPU lacks.

    One TCG thread for all vCPUs by default: with a thread per vCPU (QEMU 7.2, Debian 12), starting
    a tracer sometimes wedges the guest for good. The kernel patches a static branch in __schedule
    (int3 first, then the jump) while the other vCPU runs it; that vCPU keeps executing the int3
    that memory no longer holds, and the kernel's int3 handler, reading the jump, sends it back to
    the same address, forever, with interrupts off (no watchdog can report it). Seen in one suite
    run in ten, and in 6 of 6 guests switching the timerlat tracer on and off beside another guest
    (after 27 to 754 switches); with one thread, 4,124 switches under the same load and no wedge."""
    kernel = kernel or rt_kernel()
    if kernel is None:
        raise RuntimeError("no PREEMPT_RT kernel in /boot (apt-get install linux-image-rt-amd64)")
    image, release = kernel
    work = work.resolve()
    for stale in ("guest.rc", "guest.log", "heartbeat"):
        (work / stale).unlink(missing_ok=True)
    shares = [p.resolve() for p in (shares if shares is not None else [Path(sys.prefix)])]
    initrd = build_initramfs(work.parent / f"{work.name}-initrd.cpio.gz", release, shares)
    sockets = Path(tempfile.mkdtemp(prefix="rtkernel-"))  # short: a socket's path is at most 107 bytes
    monitor = sockets / "monitor"
    argv = [
        "qemu-system-x86_64",
        "-accel",
        f"tcg,thread={tcg_threads}",
        "-cpu",
        "max",
        "-smp",
        str(cpus),
        "-m",
        str(memory_mb),
        "-nographic",
        "-no-reboot",
        "-monitor",
        f"unix:{_virtfs_path(monitor)},server=on,wait=off",
        "-nic",
        "none",
        "-kernel",
        str(image),
        "-initrd",
        str(initrd),
        "-append",
        # sysrq: a guest that stops making progress is asked, before it is killed, where it is.
        "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=4 sysrq_always_enabled=1 nokaslr",
        "-virtfs",
        "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
        "-virtfs",
        f"local,path={_virtfs_path(work)},mount_tag=work,security_model=none",
    ]
    for i, path in enumerate(shares):
        argv += ["-virtfs", f"local,path={_virtfs_path(path)},mount_tag=share{i},security_model=none,readonly=on"]
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    )
    try:
        while True:
            try:
                console, _ = proc.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                if stuck := _stuck(work / "heartbeat", time.monotonic() - start, timeout):
                    where = _ask_where(monitor)
                    try:
                        console, _ = proc.communicate(timeout=SYSRQ_SECONDS)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        console, _ = proc.communicate()
                    console += f"\n{MARK} QEMU killed: {stuck}\n{where}"
                    break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(sockets, ignore_errors=True)
    elapsed = time.monotonic() - start
    rc_file = work / "guest.rc"
    rc = int(rc_file.read_text().strip()) if rc_file.is_file() and rc_file.read_text().strip() else None
    return rc, console, elapsed


if __name__ == "__main__":
    workdir = Path(sys.argv[1])
    status, text, seconds = boot(workdir)
    print(text)
    print(f"{MARK} script status {status} after {seconds:.0f} s")
    log = workdir / "guest.log"
    if log.is_file():
        print(log.read_text())
