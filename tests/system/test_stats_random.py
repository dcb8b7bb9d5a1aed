# SPDX-License-Identifier: GPL-2.0-or-later
"""The rate bounds at scale: the fast incomplete beta (rtgate.core.stats) against the continued-fraction
implementation it replaced, verdict by verdict, and against the sampler's C gates on random rate vectors.
Pure computation, but ~1 min of it (and a meson build): not the unit tier. Exact sums: tests/unit/test_stats.py."""

from __future__ import annotations

import math
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from rtgate.core.stats import CP_MARGIN, decide_rate, normal_quantile

# ---- the implementation before the expansion (v0.x, continued fraction for every evaluation), as a reference


def old_betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def old_betainc(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * old_betacf(a, b, x) / a
    return 1.0 - front * old_betacf(b, a, 1.0 - x) / b


def old_binom_cdf(k: int, n: int, p: float) -> float:
    if k >= n:
        return 1.0
    return 1.0 - old_betainc(k + 1, n - k, p)


def old_cdf_root(k: int, n: int, level: float, rel_tol: float) -> tuple[float, float]:
    a, b = k + 1, n - k
    log_norm = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    lo = k / n if level <= 0.5 else 0.0
    hi = (k + 1) / n if level >= 0.5 else 1.0
    z = normal_quantile(1.0 - level)
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    skew = 2.0 * (b - a) * math.sqrt(a + b + 1.0) / ((a + b + 2.0) * math.sqrt(a * b))
    p = mean + sd * (z + skew * (z * z - 1.0) / 6.0)
    p = min(max(p, lo + (hi - lo) * 1e-9), hi - (hi - lo) * 1e-9)
    for _ in range(200):
        f = old_binom_cdf(k, n, p) - level
        if f > 0:
            lo = p
        else:
            hi = p
        if hi - lo <= rel_tol * hi:
            break
        density = math.exp((a - 1) * math.log(p) + (b - 1) * math.log1p(-p) - log_norm)
        step = f / density if density > 0 else math.inf
        if abs(step) < rel_tol * p / 4:
            nxt = p + rel_tol * p / 2 if f > 0 else p - rel_tol * p / 2
        else:
            nxt = p + step
        p = nxt if lo < nxt < hi else (lo + hi) / 2.0
    return lo, hi


def old_upper(k: int, n: int, confidence: float) -> float:
    if k >= n:
        return 1.0
    if k == 0:
        exact = -math.expm1(math.log1p(-confidence) / n)
    else:
        exact = old_cdf_root(k, n, 1.0 - confidence, 1e-7)[1]
    return min(1.0, exact * (1.0 + CP_MARGIN))


def old_lower(k: int, n: int, confidence: float) -> float:
    if k <= 0:
        return 0.0
    if k == n:
        exact = math.exp(math.log1p(-confidence) / n)
    else:
        exact = old_cdf_root(k - 1, n, confidence, 1e-7)[0]
    return exact * (1.0 - CP_MARGIN)


def old_verdict(k_min: int, k_max: int, n: int, allowed: float, confidence: float) -> str:
    if old_upper(k_max, n, confidence) <= allowed:
        return "PASS"
    if old_lower(k_min, n, confidence) > allowed:
        return "FAIL"
    return "INCONCLUSIVE"


# Where the old implementation is itself right and affordable: its lgamma-based front loses ~2e-16 n ln n
# of the tail (bounds off by ~1e-7 at n = 1e8, 1e-3 at 1e12) and its continued fraction needs ~sqrt(k) terms.
OLD_MAX_N = 10**8
OLD_CLOSE_N = 10**6  # where it is also within its own tolerance (1.1e-7) of the exact bounds
OLD_MAX_K = 10**5


def random_decision(rng: random.Random, max_n: int, max_k: int) -> tuple[int, int, int, float, float]:
    """(k_min, k_max, n, allowed, confidence): n log-uniform in [10, max_n], k_max log-uniform up to
    max_k (a tenth of the time n - that: rates near 1), k_min = k_max or below it (an overflow's range),
    confidence in [0.9, 0.999], the limit 1e-6 to 10 % above or below one of the two bounds."""
    n = int(math.exp(rng.uniform(math.log(10), math.log(max_n))))
    k_max = min(n, int(math.exp(rng.uniform(0, math.log(min(n, max_k) + 1)))))
    if rng.random() < 0.1:
        k_max = n - k_max
    k_min = k_max if rng.random() < 0.7 else rng.randint(max(0, k_max - max_k), k_max)
    conf = rng.uniform(0.9, 0.999)
    d = decide_rate(k_min, k_max, n, 0.5, conf)
    bound = d.upper if rng.random() < 0.5 or d.lower <= 0.0 else d.lower
    off = 10 ** rng.uniform(-6, -1)
    # above the bound unless that is 1 or more (a gate's limit is under 1): never clamped into the 2e-7 band
    allowed = bound * (1 + off) if rng.random() < 0.5 and bound * (1 + off) < 0.999999 else bound * (1 - off)
    return k_min, k_max, n, allowed, conf


@pytest.mark.slow
def test_verdicts_equal_the_old_implementation_on_100000_random_cases() -> None:
    rng = random.Random(20261126)
    differ = []
    for _ in range(100_000):
        k_min, k_max, n, allowed, conf = random_decision(rng, OLD_MAX_N, OLD_MAX_K)
        new = decide_rate(k_min, k_max, n, allowed, conf).verdict
        if new != old_verdict(k_min, k_max, n, allowed, conf):
            differ.append((k_min, k_max, n, allowed, conf, new))
    assert not differ, differ[:10]


@pytest.mark.slow
def test_bounds_stay_within_the_old_ones_tolerance() -> None:
    """Both brackets are 1e-7 wide and CP_MARGIN outward: the bounds agree to 2.2e-7 where the old one is right."""
    rng = random.Random(7)
    for _ in range(5000):
        k_min, k_max, n, _, conf = random_decision(rng, OLD_CLOSE_N, OLD_MAX_K)
        d = decide_rate(k_min, k_max, n, 0.5, conf)
        assert math.isclose(d.upper, old_upper(k_max, n, conf), rel_tol=2.2e-7), (k_max, n, conf)
        assert math.isclose(d.lower, old_lower(k_min, n, conf), rel_tol=2.2e-7, abs_tol=1e-300), (k_min, n, conf)


def rate_vector(i: int, k: int, n: int, allowed: float, conf: float) -> str:
    """A miss-rate vector in tests/vectors/gates.txt's format, its expectation from the Python gates' rule."""
    buckets = [(30, n - k), (150, k)]
    buckets = [b for b in buckets if b[1]]
    d = decide_rate(k, k, n, allowed, conf)
    hist = ",".join(f"{lo}:{lo + 1}:{c}" for lo, c in buckets)
    return (
        f"vector random-{i}-k{k}-n{n}\n"
        f"thread index=0 cpu=0 prio=80 cycles={n} missed=0 min={buckets[0][0]} max={buckets[-1][0]} "
        f"sum={sum(lo * c for lo, c in buckets)} buckets={hist}\n"
        f"gate name=b,kind=miss_rate,above=100,rate={allowed!r},confidence={conf!r}\n"
        f"expect cpu0 {d.verdict} value={k / n!r} bound={d.upper!r} lower={d.lower!r} samples={n}\n"
        "end\n"
    )


def test_c_gates_agree_on_random_rate_vectors(tool: Any, tmp_path: Path) -> None:
    """Random miss-rate cases through sampler/gate.c: the same verdicts, the same bounds to 1e-6."""
    tool("meson", "meson")
    build = tmp_path / "build"
    for args in (["setup", str(build), str(ROOT), "-Dharness=disabled"], ["compile", "-C", str(build)]):
        r = subprocess.run(["meson", *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    rng = random.Random(5)
    vectors = []
    for i in range(3000):
        _, k_max, n, allowed, conf = random_decision(rng, 2**48, 2**48)
        vectors.append(rate_vector(i, k_max, n, allowed, round(conf, 4)))
    path = tmp_path / "random.txt"
    path.write_text("".join(vectors))
    r = subprocess.run(
        [str(build / "sampler" / "tests" / "test_gate_vectors"), str(path)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-3000:]
