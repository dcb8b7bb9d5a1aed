# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeded random draws for the history's resampling (permutation tests, bootstrap intervals).

numpy.random is not used: its import (bit generators, secrets, hmac, hashlib) cost `history
compare` ~13 ms of a ~0.2 s command. This is SplitMix64 (Steele, Lea and Flood, 2014; the seeder of
the xoshiro generators, it passes BigCrush): word i of the stream seeded with s is the 64-bit
finaliser applied to s + i * 0x9E3779B97F4A7C15 (mod 2**64), so a block of words is computed at
once in numpy's wrapping uint64 arithmetic. The same seed gives the same draws on every machine
(no byte order or platform enters), which keeps a comparison's p-values reproducible."""

from __future__ import annotations

import numpy as np

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1
_MIX = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB))
BLOCK = 1 << 15  # words computed at once where many are drawn (256 KiB, twice: in cache)


class Draws:
    """One stream of draws; each call takes the next words of it."""

    def __init__(self, seed: int) -> None:
        self._state = seed & MASK

    def words(self, count: int) -> np.ndarray:
        """The next `count` 64-bit words (uint64)."""
        out = np.empty(count, dtype=np.uint64)
        self._fill(out, np.empty_like(out))
        return out

    def _fill(self, out: np.ndarray, scratch: np.ndarray) -> None:
        """The next len(out) words into out (scratch: as large, overwritten)."""
        np.multiply(np.arange(1, len(out) + 1, dtype=np.uint64), np.uint64(GAMMA), out=out)
        out += np.uint64(self._state)
        self._state = (self._state + len(out) * GAMMA) & MASK
        for shift, factor in _MIX:
            np.right_shift(out, np.uint64(shift), out=scratch)
            out ^= scratch
            out *= np.uint64(factor)
        np.right_shift(out, np.uint64(31), out=scratch)
        out ^= scratch

    def below(self, n: int, shape: tuple[int, int]) -> np.ndarray:
        """Integers in [0, n), n < 2**32, one word each (its high 32 bits times n, over 2**32:
        each value's chance is within n / 2**32 of 1/n, 2e-8 at n = 100)."""
        if not 0 < n < 1 << 32:
            raise ValueError(f"n = {n} is outside 1 .. 2**32 - 1")
        w = self.words(shape[0] * shape[1]).reshape(shape)
        w >>= np.uint64(32)
        w *= np.uint64(n)
        w >>= np.uint64(32)
        return w.astype(np.intp)

    def normals(self, shape: tuple[int, int]) -> np.ndarray:
        """Standard normal draws (Box and Muller, 1958): two words give two draws, from uniforms
        in (0, 1] of their high 53 bits."""
        total = shape[0] * shape[1]
        half = -(-total // 2)
        u = ((self.words(2 * half) >> np.uint64(11)).astype(float) + 1.0) * 2.0**-53
        radius = np.sqrt(-2.0 * np.log(u[:half]))
        angle = 2.0 * np.pi * u[half:]
        z: np.ndarray = np.concatenate((radius * np.cos(angle), radius * np.sin(angle)))
        return z[:total].reshape(shape)

    def coins(self, shape: tuple[int, int]) -> np.ndarray:
        """Fair coin flips (bool), 64 from each word, low bit first."""
        total = shape[0] * shape[1]
        w = self.words(-(-total // 64))
        flips: np.ndarray = (w[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
        return flips.reshape(-1)[:total].reshape(shape).astype(bool)

    def subsets(self, rows: int, n: int, k: int) -> np.ndarray:
        """rows x n, each row with exactly k of its n columns True, every k-subset equally likely:
        the k columns with the smallest random keys. A key is a word with its low bits replaced by
        the column's number, so no two keys of a row are equal; the remaining >= 50 random bits
        (n <= 16384) make a tie of their random parts, decided by the column number, a chance of
        n**2 / 2**51 per row or less."""
        if not 0 <= k <= n <= 1 << 14:
            raise ValueError(f"a subset of {k} of {n} columns is not drawn here")
        if k in (0, n):
            return np.full((rows, n), k == n)
        low = max(1, (n - 1).bit_length())
        columns = np.arange(n, dtype=np.uint64)
        chosen = np.empty((rows, n), dtype=bool)
        block = max(1, BLOCK // n)  # rows at a time: the keys stay in cache (2x faster at 20,000 x 20)
        keys, scratch = np.empty((block, n), dtype=np.uint64), np.empty(block * n, dtype=np.uint64)
        for first in range(0, rows, block):
            part = keys[: min(block, rows - first)]
            self._fill(part.reshape(-1), scratch[: part.size])
            part >>= np.uint64(low)
            part <<= np.uint64(low)
            part |= columns
            kth = np.partition(part, k - 1, axis=1)[:, k - 1 : k]
            np.less_equal(part, kth, out=chosen[first : first + len(part)])
        return chosen
