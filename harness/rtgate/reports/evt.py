# SPDX-License-Identifier: GPL-2.0-or-later
"""How high could latency go in an hour? An extreme-value estimate from block maxima.

The block maxima are fitted with a generalised extreme value (GEV) distribution by
probability-weighted moments (Hosking, Wallis & Wood, 1985); the latency exceeded with
probability p per hour follows from it, with a bootstrap interval. Information, never a gate.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from statistics import median

from rtgate.history.stats import mann_whitney_greater


@dataclass
class GEV:
    xi: float  # shape: > 0 bounded tail, < 0 heavy tail (Hosking's sign), 0 Gumbel
    mu: float
    sigma: float

    def quantile(self, q: float) -> float:
        y = -math.log(q)
        if abs(self.xi) < 1e-9:
            return self.mu - self.sigma * math.log(y)
        return float(self.mu + self.sigma * (1.0 - y**self.xi) / self.xi)


def fit_pwm(x: list[float]) -> GEV:
    """Hosking's PWM estimator (k = xi in his sign convention)."""
    s = sorted(x)
    n = len(s)
    b0 = sum(s) / n
    b1 = sum((i / (n - 1)) * v for i, v in enumerate(s)) / n
    b2 = sum((i * (i - 1) / ((n - 1) * (n - 2))) * v for i, v in enumerate(s)) / n
    c = (2 * b1 - b0) / (3 * b2 - b0) - math.log(2) / math.log(3) if 3 * b2 != b0 else 0.0
    k = 7.8590 * c + 2.9554 * c * c
    if abs(k) < 1e-6:
        sigma = (2 * b1 - b0) / math.log(2)
        return GEV(0.0, b0 - 0.5772156649 * sigma, sigma)
    g = math.gamma(1 + k)
    sigma = (2 * b1 - b0) * k / (g * (1 - 2**-k))
    mu = b0 + sigma * (g - 1) / k
    return GEV(k, mu, sigma)


@dataclass
class Estimate:
    level: float  # latency exceeded with probability p per hour
    interval: tuple[float, float]  # bootstrap 95 % interval
    per_hour: float
    blocks: int
    block_seconds: float
    fit: GEV
    checks: list[str] = field(default_factory=list)  # assumptions checked, with their outcome
    failed: list[str] = field(default_factory=list)  # those of the checks that do not hold
    valid: bool = True


def estimate(
    maxima: list[float], block_seconds: float, per_hour: float = 1e-3, rounds: int = 400, seed: int = 1
) -> Estimate:
    blocks_per_hour = 3600.0 / block_seconds
    q = (1.0 - per_hour) ** (1.0 / blocks_per_hour)  # P(block max <= level) for that per-hour risk
    if len(maxima) < 3:  # the PWM fit needs three order statistics; there is nothing to estimate from
        nothing = Estimate(
            level=math.nan,
            interval=(math.nan, math.nan),
            per_hour=per_hour,
            blocks=len(maxima),
            block_seconds=block_seconds,
            fit=GEV(0.0, 0.0, 0.0),
        )
        nothing.checks.append(f"{len(maxima)} blocks of {block_seconds:g} s (too few: at least 30 are needed)")
        nothing.failed = list(nothing.checks)
        nothing.valid = False
        return nothing
    fit = fit_pwm(maxima)
    rng = random.Random(seed)
    levels = sorted(fit_pwm(rng.choices(maxima, k=len(maxima))).quantile(q) for _ in range(rounds))
    est = Estimate(
        level=fit.quantile(q),
        interval=(levels[int(0.025 * rounds)], levels[int(0.975 * rounds) - 1]),
        per_hour=per_hour,
        blocks=len(maxima),
        block_seconds=block_seconds,
        fit=fit,
    )
    est.checks.append(
        f"{len(maxima)} blocks of {block_seconds:g} s "
        + ("(enough)" if len(maxima) >= 30 else "(too few: at least 30 are needed)")
    )
    half = len(maxima) // 2
    p = min(mann_whitney_greater(maxima[half:], maxima[:half]), mann_whitney_greater(maxima[:half], maxima[half:]))
    est.checks.append(
        f"first and second half alike (rank test p={p:.2g})"
        if p >= 0.001
        else f"the maxima drift between the first and second half (p={p:.2g}): not stationary"
    )
    est.checks.append(
        f"shape {fit.xi:+.3f} " + ("(heavy tail: extrapolation is fragile)" if fit.xi < -0.5 else "(sane)")
    )
    held = [len(maxima) >= 30, p >= 0.001, fit.xi >= -0.5]
    est.failed = [text for text, ok in zip(est.checks, held) if not ok]
    if median(maxima) <= 0:
        est.failed.append("the median block maximum is 0: nothing to extrapolate from")
    est.valid = not est.failed
    return est
