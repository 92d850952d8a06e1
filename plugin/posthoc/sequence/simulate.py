"""Simulated annotators with a known lag-1 effect (for tests, benches and the demo; seed 004 section 2).

Binary: P(Y(t) = 1) = logistic(b0 + b1 Y(t-1) + b2 gold). Continuous: Y(t) = q(item) + b1 Y(t-1) + noise,
with the item quality q as gold. Each worker either gets their own seeded order of the items
(``shared_order=False``) or every worker gets one fixed order (``shared_order=True``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _orders(n_workers: int, n_items: int, rng: np.random.Generator, *, shared_order: bool) -> list[np.ndarray]:
    if shared_order:
        fixed = rng.permutation(n_items)
        return [fixed for _ in range(n_workers)]
    return [rng.permutation(n_items) for _ in range(n_workers)]


def simulate_binary(n_workers: int, n_items: int, *, b0: float = -1.0, b1: float = 0.0, b2: float = 2.0,
                    gold_rate: float = 0.5, shared_order: bool = False, seed: int = 0) -> pd.DataFrame:
    """A binary sequence table from the logistic lag-1 model with known b0, b1, b2."""
    rng = np.random.default_rng(seed)
    gold = (rng.random(n_items) < gold_rate).astype(float)
    rows = []
    for worker, order in enumerate(_orders(n_workers, n_items, rng, shared_order=shared_order)):
        previous = 0.0
        for position, item in enumerate(order):
            logit = b0 + b2 * gold[item] + (b1 * previous if position else 0.0)
            label = float(rng.random() < 1.0 / (1.0 + np.exp(-logit)))
            rows.append((f"w{worker:03d}", f"w{worker:03d}", f"i{item:04d}", position, label, gold[item]))
            previous = label
    return pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])


def simulate_continuous(n_workers: int, n_items: int, *, b1: float = 0.0, noise: float = 1.0,
                        shared_order: bool = False, seed: int = 0) -> pd.DataFrame:
    """A continuous sequence table: Y(t) = q + b1 Y(t-1) + N(0, noise^2), q ~ N(0, 1) known per item."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 1.0, n_items)
    rows = []
    for worker, order in enumerate(_orders(n_workers, n_items, rng, shared_order=shared_order)):
        previous = 0.0
        for position, item in enumerate(order):
            score = quality[item] + (b1 * previous if position else 0.0) + rng.normal(0.0, noise)
            rows.append((f"w{worker:03d}", f"w{worker:03d}", f"i{item:04d}", position, score, quality[item]))
            previous = score
    return pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])
