"""Opaque, deterministic identifiers and per-worker random streams.

Task keys and mention ids are what Label Studio and the annotators see; they are 80-bit BLAKE2b
digests of (study, seed, worker, item, replicate) in hex, so they reveal neither the system nor the
dataset, and the same plan always gets the same keys. :func:`stable_int` replaces Python's
``hash()`` (salted per process) wherever a seed is derived from a name.

Keyed: a study's keys are computed with BLAKE2b's keyed mode (a MAC, RFC 7693 section 2.9, used
where HMAC would be) under a per-study secret of 32 random bytes (:func:`new_key_secret`), kept
beside the manifest with permissions 0600 (:mod:`posthoc.study.plan.secret`). The study's name, seed,
worker ids and the item counter are guessable, so without the secret anyone could recompute which
key belongs to which worker and item; with it nobody can. ``key=None`` gives the unkeyed digest
(reproducible from public facts: for simulations and tests only).
"""

from __future__ import annotations

import hashlib
import secrets

import numpy as np

_SEPARATOR = "\x1f"


KEY_SECRET_BYTES = 32


def new_key_secret() -> bytes:
    """A fresh per-study secret for the keys (32 random bytes from the OS)."""
    return secrets.token_bytes(KEY_SECRET_BYTES)


def digest(*parts: object, key: bytes | None = None) -> str:
    """A 20-character lowercase hex BLAKE2b digest (80 bits) of ``parts`` joined by U+001F, keyed by ``key``."""
    return hashlib.blake2b(_SEPARATOR.join(map(str, parts)).encode("utf-8"), digest_size=10,
                           key=key or b"").hexdigest()


def task_key(study: str, seed: int, worker: str, item_id: str, replicate: int, *, key: bytes | None = None) -> str:
    """The opaque key of one task: ``t`` + 20 hex characters (80 bits), keyed by the study's secret."""
    return "t" + digest("task", study, seed, worker, item_id, replicate, key=key)


def mention_key(study: str, seed: int, task: str, index: int, *, key: bytes | None = None) -> str:
    """The opaque id of the ``index``-th pre-filled annotation of task ``task``: ``m`` + 20 hex characters."""
    return "m" + digest("mention", study, seed, task, index, key=key)


def mention_keys(study: str, seed: int, tasks: list[str], indexes: list[int], *, key: bytes | None = None) -> list[str]:
    """:func:`mention_key` of many annotations at once (the same values, faster)."""
    prefix = f"mention{_SEPARATOR}{study}{_SEPARATOR}{seed}{_SEPARATOR}"
    blake2b = hashlib.blake2b
    secret = key or b""
    return ["m" + blake2b(f"{prefix}{task}{_SEPARATOR}{index}".encode(), digest_size=10, key=secret).hexdigest()
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
