"""Timing helper shared by the benchmarks."""
from __future__ import annotations

import time


def best_of(fn, repeat: int = 5, number: int = 20) -> float:
    """Best mean seconds per call over `repeat` rounds of `number` calls (after one warm-up)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best
