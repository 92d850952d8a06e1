"""Opaque, deterministic identifiers and per-worker random streams.

Task keys and mention ids are what Label Studio and the annotators see; they are SHA-256 digests
of (study, seed, worker, item, replicate) in base32, so they reveal neither the system nor the
dataset, and the same plan always gets the same keys. :func:`stable_int` replaces Python's
``hash()`` (salted per process) wherever a seed is derived from a name.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np

_SEPARATOR = "\x1f"


def digest(*parts: object, length: int = 16) -> str:
    """A lowercase base32 SHA-256 digest of ``parts`` (joined by U+001F), ``length`` characters long."""
    raw = hashlib.sha256(_SEPARATOR.join(map(str, parts)).encode("utf-8")).digest()
    return base64.b32encode(raw).decode("ascii").lower()[:length]


def task_key(study: str, seed: int, worker: str, item_id: str, replicate: int) -> str:
    """The opaque key of one task: ``t`` + 16 base32 characters (80 bits)."""
    return "t" + digest("task", study, seed, worker, item_id, replicate)


def mention_key(study: str, seed: int, task: str, index: int) -> str:
    """The opaque id of the ``index``-th pre-filled annotation of task ``task``: ``m`` + 16 characters."""
    return "m" + digest("mention", study, seed, task, index)


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
