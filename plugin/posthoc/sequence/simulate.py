"""Simulated annotators with a known lag-1 effect (for tests, benches and the demo; seed 004 section 2).

Binary: P(Y(t) = 1) = logistic(b0 + b1 Y(t-1) + b2 gold). Continuous: Z(t) = q(item) + b1 Z(t-1) + noise,
with the item quality q as gold, and the worker's score Y(t) = centre + offset(i) + scale(i) Z(t): each worker
their own offset (normal, ``offset_sd``) and scale (uniform in ``scale_range``), the situation of seed 004
section 3.3 ("to eliminate differences due to different internal scales"). A linear map per worker leaves b1
unchanged, so b1 is the truth on either scale. Each worker either gets their own seeded order of the items
(``shared_order=False``) or every worker gets one fixed order (``shared_order=True``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posthoc.arrays import Ints


def _orders(n_workers: int, n_items: int, rng: np.random.Generator, *, shared_order: bool) -> list[Ints]:
    if shared_order:
        fixed = rng.permutation(n_items)
        return [fixed for _ in range(n_workers)]
    return [rng.permutation(n_items) for _ in range(n_workers)]


def simulate_binary(n_workers: int, n_items: int, *, b0: float = -1.0, b1: float = 0.0, b2: float = 2.0,
                    gold_rate: float = 0.5, shared_order: bool = False, worker_sd: float = 0.0,
                    seed: int = 0) -> pd.DataFrame:
    """A binary sequence table from the logistic lag-1 model with known b0, b1, b2; ``worker_sd`` gives each
    worker their own bias (a normal offset on the logit scale).

    Examples:
        One row a judgement, each worker's own order of the items (seeded: the same table for the same seed).

        >>> from posthoc.sequence.simulate import simulate_binary
        >>> table = simulate_binary(3, 5, b1=0.5, seed=1)
        >>> len(table), sorted(table["worker"].unique()), sorted(set(table["label"]) | set(table["gold"])) == [0.0, 1.0]
        (15, ['w000', 'w001', 'w002'], True)
        >>> table.equals(simulate_binary(3, 5, b1=0.5, seed=1))
        True
    """
    rng = np.random.default_rng(seed)
    workers_rng = np.random.default_rng([seed, 1])
    gold = (rng.random(n_items) < gold_rate).astype(float)
    rows = []
    for worker, order in enumerate(_orders(n_workers, n_items, rng, shared_order=shared_order)):
        previous = 0.0
        offset = workers_rng.normal(0.0, worker_sd)
        for position, item in enumerate(order):
            logit = b0 + offset + b2 * gold[item] + (b1 * previous if position else 0.0)
            label = float(rng.random() < 1.0 / (1.0 + np.exp(-logit)))
            rows.append((f"w{worker:03d}", f"w{worker:03d}", f"i{item:04d}", position, label, gold[item]))
            previous = label
    return pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])


def simulate_continuous(n_workers: int, n_items: int, *, b1: float = 0.0, noise: float = 1.0,
                        shared_order: bool = False, centre: float = 0.0, offset_sd: float = 0.0,
                        scale_range: tuple[float, float] = (1.0, 1.0), seed: int = 0) -> pd.DataFrame:
    """A continuous sequence table: Z(t) = q + b1 Z(t-1) + N(0, noise^2), q ~ N(0, 1) known per item (gold),
    label = centre + offset + scale Z(t) per worker (defaults: label = Z).

    Examples:
        With ``noise=0`` and ``b1=0`` each label is its item's quality, the gold column.

        >>> from posthoc.sequence.simulate import simulate_continuous
        >>> table = simulate_continuous(2, 4, noise=0.0, seed=3)
        >>> len(table), bool((table["label"] == table["gold"]).all())
        (8, True)
    """
    rng = np.random.default_rng(seed)
    workers_rng = np.random.default_rng([seed, 1])  # offsets and scales: the same Z for the same seed
    quality = rng.normal(0.0, 1.0, n_items)
    rows = []
    for worker, order in enumerate(_orders(n_workers, n_items, rng, shared_order=shared_order)):
        offset = centre + workers_rng.normal(0.0, offset_sd)
        scale = workers_rng.uniform(*scale_range)
        previous = 0.0
        for position, item in enumerate(order):
            latent = quality[item] + (b1 * previous if position else 0.0) + rng.normal(0.0, noise)
            rows.append((f"w{worker:03d}", f"w{worker:03d}", f"i{item:04d}", position, offset + scale * latent,
                         quality[item]))
            previous = latent
    return pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])
