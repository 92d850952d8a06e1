"""Opaque, deterministic identifiers and per-worker random streams.

Task keys and mention ids are what Label Studio and the annotators see; they are 80-bit BLAKE2b
digests of (study, seed, worker, item, replicate) in hex, so they reveal neither the system nor the
dataset, and the same plan always gets the same keys. :func:`stable_int` replaces Python's
``hash()`` (salted per process) wherever a seed is derived from a name.
"""

from __future__ import annotations

import hashlib

import numpy as np

_SEPARATOR = "\x1f"


def digest(*parts: object) -> str:
    """A 20-character lowercase hex BLAKE2b digest (80 bits) of ``parts`` joined by U+001F."""
    return hashlib.blake2b(_SEPARATOR.join(map(str, parts)).encode("utf-8"), digest_size=10).hexdigest()


def task_key(study: str, seed: int, worker: str, item_id: str, replicate: int) -> str:
    """The opaque key of one task: ``t`` + 20 hex characters (80 bits)."""
    return "t" + digest("task", study, seed, worker, item_id, replicate)


def mention_key(study: str, seed: int, task: str, index: int) -> str:
    """The opaque id of the ``index``-th pre-filled annotation of task ``task``: ``m`` + 20 hex characters."""
    return "m" + digest("mention", study, seed, task, index)


def mention_keys(study: str, seed: int, tasks: list[str], indexes: list[int]) -> list[str]:
    """:func:`mention_key` of many annotations at once (the same values, faster)."""
    prefix = f"mention{_SEPARATOR}{study}{_SEPARATOR}{seed}{_SEPARATOR}"
    blake2b = hashlib.blake2b
    return ["m" + blake2b(f"{prefix}{task}{_SEPARATOR}{index}".encode(), digest_size=10).hexdigest()
            for task, index in zip(tasks, indexes, strict=True)]


def stable_int(*parts: object) -> int:
    """A 64-bit integer from ``parts`` that is the same in every process and on every machine."""
    raw = hashlib.sha256(_SEPARATOR.join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(raw[:8], "big")


def worker_rng(seed: int, worker: str) -> np.random.Generator:
    """The random stream of one worker's order: a function of the study seed and the worker id only."""
    return np.random.default_rng(np.random.SeedSequence([seed, stable_int("worker-order", worker)]))


def stream_rng(seed: int, purpose: str) -> np.random.Generator:
    """An independent random stream of the study for one ``purpose`` (assignment, controls, ...)."""
    return np.random.default_rng(np.random.SeedSequence([seed, stable_int("stream", purpose)]))
