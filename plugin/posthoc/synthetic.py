"""Seeded synthetic studies with known true parameters: documents, mentions and judgements tables.

Used by the metrics tests (bootstrap coverage: the true verification probability of every system
is known), by other areas' tests and by the benches. Everything is drawn from one
:class:`numpy.random.Generator` seeded by ``seed``: the same arguments give identical tables.

The model (seed 000 section 2.1): each dataset has documents made of words (some non-ASCII:
accents, CJK, an emoji, a combining mark, so offsets are exercised as code points); the ground
truth ``GT`` annotates distinct words; every other system copies a share of GT's annotations
(exactly, with another link, or with an overlapping two-word span) and adds annotations of its
own on other words (missing from GT). Documents are cut into chunks of at most ~300 characters at
word boundaries (mentions never cut); an item is chunk x system; each item is judged by ``k``
workers (no worker judges an item twice). A worker of a normal kind judges every annotation of
system ``m`` independently: ``verify`` with probability ``verify_prob[m]``, ``edit`` with
``edit_prob[m]``, ``remove`` otherwise. Each worker also does one control task of ``n_control``
annotations with known ``expected_outcome``; a share ``failing_worker_share`` of workers are
click-through workers who verify everything and answer controls at random.

Document effects (issues 45 and 46; off by default, so the default tables are unchanged draw for draw): real
documents differ, so a verdict's chance can move with its document. With ``doc_effect_sd`` and
``system_doc_sd`` the verify probability of system ``m``'s annotations in document ``d`` is
``expit(logit(verify_prob[m]) + u_d + v_md)`` with ``u_d ~ N(0, doc_effect_sd)`` a difficulty every system of the
document shares and ``v_md ~ N(0, system_doc_sd)`` a system x document term; ``edit`` keeps its share of the
rest (``edit_prob[m] / (1 - verify_prob[m])``). A system's true rate is then the mean of that probability over
documents, not ``verify_prob[m]`` (:func:`document_verify_probability`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from posthoc.arrays import Bools, Floats, Ints
from posthoc.tables import DOCUMENT_COLUMNS, JUDGEMENT_COLUMNS, MENTION_COLUMNS

#: Seed 000, Table 1: documents and annotations (GT, E2E, REL) per dataset. The cells sum to
#: 167,433; the text reports 167,432 judgements, so :func:`paper_sized_study` drops one GT
#: annotation of AIDA-train to match the text.
PAPER_TABLE1: Final[dict[str, tuple[int, dict[str, int]]]] = {
    "AIDA-train": (946, {"GT": 18541, "E2E": 18301, "REL": 21204}),
    "AIDA-A": (216, {"GT": 4791, "E2E": 4758, "REL": 5443}),
    "AIDA-B": (231, {"GT": 4485, "E2E": 4375, "REL": 5086}),
    "ACE2004": (57, {"GT": 257, "E2E": 1355, "REL": 1675}),
    "AQUAINT": (50, {"GT": 727, "E2E": 810, "REL": 925}),
    "CLUEWEB": (320, {"GT": 11154, "E2E": 12273, "REL": 23114}),
    "MSNBC": (20, {"GT": 656, "E2E": 629, "REL": 756}),
    "WIKIPEDIA": (345, {"GT": 6793, "E2E": 8141, "REL": 11184}),
}
PAPER_JUDGEMENTS: Final = 167_432

DEFAULT_VERIFY_PROB: Final = {"GT": 0.90, "E2E": 0.93, "REL": 0.92}
DEFAULT_EDIT_PROB: Final = {"GT": 0.06, "E2E": 0.04, "REL": 0.05}

_WORDS: Final = (
    "Paris", "Berlin", "Zürich", "東京", "São", "Paulo", "Ōsaka", "café", "naïve", "Ångström",
    "Ke\u0301vin", "rocket😀", "北京大学", "Smith", "Obama", "river", "league", "said", "the", "of",
    "match", "bank", "Nile", "Dvořák", "Łódź", "Straße", "Ελλάδα", "Москва", "Jerusalem", "goal",
)  # fmt: skip
_CHUNK_CHARS: Final = 300
_WIKI: Final = "https://en.wikipedia.org/wiki/"


#: ``(documents, mentions, judgements)``
Tables = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]
#: probabilities of a verify or an edit judgement, by system
Probabilities = Mapping[str, float] | None


def synthetic_study(n_docs: int = 20, *, datasets: Sequence[str] = ("SYN-A", "SYN-B"),
                    systems: Sequence[str] = ("GT", "E2E", "REL"), k: int = 1, verify_prob: Probabilities = None,
                    edit_prob: Probabilities = None, mentions_per_doc: float = 8.0, shared_share: float = 0.6,
                    n_control: int = 3, failing_worker_share: float = 0.0, tasks_per_worker: int = 19,
                    study: str = "synthetic", doc_effect_sd: float = 0.0, system_doc_sd: float = 0.0,
                    seed: int = 0) -> Tables:
    """A synthetic study of ``n_docs`` documents per dataset: ``(documents, mentions, judgements)``.

    ``verify_prob`` / ``edit_prob`` map a system to its true probability of a ``verify`` /
    ``edit`` judgement (defaults :data:`DEFAULT_VERIFY_PROB` / :data:`DEFAULT_EDIT_PROB`, 0.9 /
    0.05 for other names). Each system has ``round(mentions_per_doc * n_docs)`` annotations per
    dataset, spread over documents at random. Tables have the columns of :mod:`posthoc.tables`.
    ``doc_effect_sd`` / ``system_doc_sd``: the document effects of the module docstring (logit scale; 0: none).

    Examples:
        Document effects leave the tables' shape alone and are off by default (the same draws as before).

        >>> _, mentions, judgements = synthetic_study(4, datasets=("D",), n_control=0, seed=1)
        >>> _, _, shifted = synthetic_study(4, datasets=("D",), n_control=0, seed=1, doc_effect_sd=1.0,
        ...                                 system_doc_sd=0.5)
        >>> len(judgements) == len(shifted) == len(mentions)
        True
    """
    counts = {name: (n_docs, {m: round(mentions_per_doc * n_docs) for m in systems}) for name in datasets}
    return _generate(counts, k=k, verify_prob=verify_prob, edit_prob=edit_prob, shared_share=shared_share,
                     n_control=n_control, failing_worker_share=failing_worker_share,
                     tasks_per_worker=tasks_per_worker, study=study,
                     effects=DocumentEffects(doc_effect_sd, system_doc_sd), seed=seed)


def paper_sized_study(*, k: int = 1, seed: int = 0, scale: float = 1.0, n_control: int = 3,
                      failing_worker_share: float = 0.0, shared_share: float = 0.6) -> Tables:
    """A synthetic study with seed 000's Table 1 sizes: 8 datasets, 3 systems, 167,432 judgements at k=1.

    The 167,432 are the non-control judgements; each worker's control task adds ``n_control`` rows
    with ``is_control`` True. ``scale`` multiplies every document and annotation count.
    """
    counts: dict[str, tuple[int, dict[str, int]]] = {}
    for name, (n_docs, per_system) in PAPER_TABLE1.items():
        scaled = {m: max(1, round(n * scale)) for m, n in per_system.items()}
        counts[name] = (max(1, round(n_docs * scale)), scaled)
    if scale == 1.0:
        counts["AIDA-train"][1]["GT"] -= 1
    return _generate(counts, k=k, n_control=n_control, failing_worker_share=failing_worker_share,
                     shared_share=shared_share, seed=seed)


def _generate(counts: Mapping[str, tuple[int, Mapping[str, int]]], *, k: int = 1, verify_prob: Probabilities = None,
              edit_prob: Probabilities = None, shared_share: float = 0.6, n_control: int = 3,
              failing_worker_share: float = 0.0, tasks_per_worker: int = 19, study: str = "synthetic",
              effects: DocumentEffects | None = None, seed: int = 0) -> Tables:
    if k < 1:
        raise ValueError("k must be at least 1")
    effects = effects or DocumentEffects()
    if effects.doc_sd < 0 or effects.system_doc_sd < 0:
        raise ValueError("doc_effect_sd and system_doc_sd must be at least 0")
    rng = np.random.default_rng(seed)
    verify = {**DEFAULT_VERIFY_PROB, **(verify_prob or {})}
    edit = {**DEFAULT_EDIT_PROB, **(edit_prob or {})}
    documents: list[tuple[str, str, str]] = []
    rows: list[tuple[str, str, str, int, int, str, str, str]] = []
    for dataset, (n_docs, per_system) in counts.items():
        systems = list(per_system)
        per_doc = {m: rng.multinomial(n, np.full(n_docs, 1.0 / n_docs)) for m, n in per_system.items()}
        for d in range(n_docs):
            doc_id = f"{dataset}-{d:04d}"
            wanted = {m: int(per_doc[m][d]) for m in systems}
            text, doc_rows = _document(rng, dataset, doc_id, wanted, shared_share)
            documents.append((dataset, doc_id, text))
            rows.extend(doc_rows)
    mentions = pd.DataFrame(rows, columns=["dataset", "doc_id", "system", "start", "end", "surface", "link", "chunk"])
    mentions["link_original"] = mentions["link"]
    mentions["is_nil"] = False
    judgements = _judgements(rng, mentions, k, verify, edit, n_control, failing_worker_share, tasks_per_worker, study,
                             effects)
    docs = pd.DataFrame(documents, columns=list(DOCUMENT_COLUMNS))
    return docs, mentions[list(MENTION_COLUMNS)].reset_index(drop=True), judgements


@dataclass(frozen=True)
class DocumentEffects:
    """Logit-scale standard deviations of a document's difficulty (shared by its systems) and of a system x
    document term (module docstring); both 0 by default: every verdict independent, as before issue 46."""

    doc_sd: float = 0.0
    system_doc_sd: float = 0.0


def document_verify_probability(verify_prob: float, *, doc_effect_sd: float = 0.0, system_doc_sd: float = 0.0,
                                nodes: int = 80) -> float:
    """A system's true verify rate under document effects: ``E[expit(logit p + e)]``, ``e ~ N(0, s)`` with
    ``s^2 = doc_effect_sd^2 + system_doc_sd^2`` (Gauss-Hermite quadrature of ``nodes`` points).

    Examples:
        No effect keeps ``p``; a spread pulls the rate towards 1/2 (0.9 becomes about 0.83 at ``s = 1.5``; Monte
        Carlo agrees).

        >>> document_verify_probability(0.9)
        0.9
        >>> round(document_verify_probability(0.9, doc_effect_sd=1.5), 2)
        0.83
    """
    spread = math.hypot(doc_effect_sd, system_doc_sd)
    if spread == 0:
        return float(verify_prob)
    points, weights = np.polynomial.hermite_e.hermegauss(nodes)
    logit = math.log(verify_prob / (1 - verify_prob))
    return float(np.sum(weights / (1 + np.exp(-(logit + spread * points)))) / math.sqrt(2 * math.pi))


def _with_effects(rng: np.random.Generator, mentions: pd.DataFrame, idx: Ints, p_verify: Floats, p_edit: Floats,
                  effects: DocumentEffects) -> tuple[Floats, Floats]:
    """Each judged row's verify and edit probabilities moved by its document's effects (module docstring)."""
    docs = mentions["dataset"].astype(str) + "|" + mentions["doc_id"].astype(str)
    doc_code = pd.factorize(docs)[0]
    cell_code = pd.factorize(docs + "|" + mentions["system"].astype(str))[0]
    doc_shift = rng.normal(0.0, effects.doc_sd, doc_code.max() + 1)
    cell_shift = rng.normal(0.0, effects.system_doc_sd, cell_code.max() + 1)
    shift = doc_shift[doc_code[idx]] + cell_shift[cell_code[idx]]
    clipped = np.clip(p_verify, 1e-9, 1 - 1e-9)
    moved = 1 / (1 + np.exp(-(np.log(clipped / (1 - clipped)) + shift)))
    edit_share = np.where(p_verify < 1, p_edit / np.maximum(1 - p_verify, 1e-12), 0.0)
    return moved, (1 - moved) * edit_share


def _document(
    rng: np.random.Generator, dataset: str, doc_id: str, wanted: Mapping[str, int], shared_share: float
) -> tuple[str, list[tuple[str, str, str, int, int, str, str, str]]]:
    """One document's text and all systems' annotations ``(dataset, doc, system, start, end, surface, link, chunk)``."""
    n_slots = 2 * max(wanted.values(), default=0) + 4
    words = [_WORDS[i] for i in rng.integers(0, len(_WORDS), n_slots)]
    starts, chunk_of, chunk, position, chunk_start = [], [], 0, 0, 0
    for word in words:
        if position + len(word) - chunk_start > _CHUNK_CHARS:
            chunk, chunk_start = chunk + 1, position
        starts.append(position)
        chunk_of.append(chunk)
        position += len(word) + 1
    text = " ".join(words)
    ends = [s + len(w) for s, w in zip(starts, words, strict=True)]
    last = n_slots - 1  # the last slot is never annotated, so a two-word span always fits

    def row(system: str, slot: int, two_words: bool, link: str) -> tuple[str, str, str, int, int, str, str, str]:
        end = ends[slot + 1] if two_words else ends[slot]
        return (
            dataset,
            doc_id,
            system,
            starts[slot],
            end,
            text[starts[slot] : end],
            link,
            f"{doc_id}#c{chunk_of[slot]}",
        )

    rows: list[tuple[str, str, str, int, int, str, str, str]] = []
    gt_slots: Sequence[int] = []
    if "GT" in wanted:
        gt_slots = np.sort(rng.choice(last, size=min(wanted.get("GT", 0), last), replace=False)).tolist()
    gt_link = {int(s): f"{_WIKI}{dataset}_E{int(s) % 97}" for s in gt_slots}
    rows.extend(row("GT", s, False, link) for s, link in gt_link.items())
    free = np.setdiff1d(np.arange(last), np.asarray(list(gt_link), dtype=int))
    for system, n in wanted.items():
        if system == "GT" or n == 0:
            continue
        n_shared = min(int(rng.binomial(n, shared_share)), len(gt_link))
        n_own = min(n - n_shared, len(free))
        n_shared = min(n - n_own, len(gt_link))
        shared = rng.choice(np.asarray(list(gt_link), dtype=int), size=n_shared, replace=False)
        # 0 exact copy (A), 1 same span other link (B), 2 longer span same link (C), 3 longer span other link (D)
        kinds = rng.choice(4, size=n_shared, p=[0.65, 0.15, 0.1, 0.1])
        for slot, kind in zip(shared.tolist(), kinds.tolist(), strict=True):
            longer = kind >= 2 and chunk_of[slot + 1] == chunk_of[slot]
            link = gt_link[slot] + ("_(other)" if kind in (1, 3) else "")
            rows.append(row(system, slot, longer, link))
        for slot in rng.choice(free, size=n_own, replace=False).tolist():
            rows.append(row(system, slot, False, f"{_WIKI}{dataset}_E{slot % 97}"))
    return text, rows


def _judgements(
    rng: np.random.Generator,
    mentions: pd.DataFrame,
    k: int,
    verify: Mapping[str, float],
    edit: Mapping[str, float],
    n_control: int,
    failing_worker_share: float,
    tasks_per_worker: int,
    study: str,
    effects: DocumentEffects,
) -> pd.DataFrame:
    items, item_index = np.unique(
        mentions["chunk"].astype(str) + "|" + mentions["system"].astype(str), return_inverse=True
    )
    n_items = len(items)
    per_replicate = max(1, math.ceil(n_items / tasks_per_worker))
    # item x replicate -> worker; replicate r draws from its own pool, so nobody judges an item twice
    assignment = np.empty((n_items, k), dtype=np.int64)
    slot_in_worker = np.empty((n_items, k), dtype=np.int64)
    for r in range(k):
        order = rng.permutation(n_items)
        assignment[order, r] = r * per_replicate + np.arange(n_items) // tasks_per_worker
        slot_in_worker[order, r] = np.arange(n_items) % tasks_per_worker
    n_workers = k * per_replicate
    failing = rng.random(n_workers) < failing_worker_share
    control_slot = rng.integers(0, tasks_per_worker + 1, n_workers)

    n = len(mentions)
    rep = np.tile(np.arange(k), n)
    idx = np.repeat(np.arange(n), k)
    worker = assignment[item_index[idx], rep]
    slot = slot_in_worker[item_index[idx], rep]
    position = slot + (slot >= control_slot[worker])
    systems = mentions["system"].to_numpy()[idx]
    p_verify = np.array([verify.get(s, 0.9) for s in systems])
    p_edit = np.array([edit.get(s, 0.05) for s in systems])
    u = rng.random(len(idx))
    if effects.doc_sd > 0 or effects.system_doc_sd > 0:
        p_verify, p_edit = _with_effects(rng, mentions, idx, p_verify, p_edit, effects)
    outcome = np.where(u < p_verify, "verify", np.where(u < p_verify + p_edit, "edit", "remove"))
    outcome = np.where(failing[worker], "verify", outcome)
    links = mentions["link"].to_numpy()[idx]
    frame = pd.DataFrame(
        {
            "study": study,
            "dataset": mentions["dataset"].to_numpy()[idx],
            "doc_id": mentions["doc_id"].to_numpy()[idx],
            "chunk_id": mentions["chunk"].to_numpy()[idx],
            "item_id": items[item_index[idx]],
            "task_key": [f"t{i:07d}-{r}" for i, r in zip(item_index[idx].tolist(), rep.tolist(), strict=True)],
            "mention_id": [f"m{i:07d}" for i in idx.tolist()],
            "system": systems,
            "start": mentions["start"].to_numpy()[idx],
            "end": mentions["end"].to_numpy()[idx],
            "surface": mentions["surface"].to_numpy()[idx],
            "link": links,
            "worker": [f"w{w:05d}" for w in worker.tolist()],
            "outcome": outcome,
            "new_link": pd.Series(links).astype(str).add("_(edited)").where(outcome == "edit", None).to_numpy(),
            "deleted_region": (outcome == "remove") & (rng.random(len(idx)) < 0.3),
            "position": position,
            "created_at": [f"2026-01-01T00:{p // 60:02d}:{p % 60:02d}Z" for p in position.tolist()],
            "lead_time": np.round(rng.exponential(20.0, len(idx)), 3),
            "is_control": False,
            "expected_outcome": None,
        }
    )
    controls = _controls(rng, frame, n_workers, n_control, failing, control_slot, study)
    if controls.empty:
        return frame[list(JUDGEMENT_COLUMNS)]
    joined = pd.concat([frame, controls], ignore_index=True)[list(JUDGEMENT_COLUMNS)]
    return joined.astype({"is_control": bool, "deleted_region": bool, "start": "int64", "end": "int64"})


def _controls(
    rng: np.random.Generator,
    frame: pd.DataFrame,
    n_workers: int,
    n_control: int,
    failing: Bools,
    control_slot: Ints,
    study: str,
) -> pd.DataFrame:
    if n_control == 0 or frame.empty:
        return pd.DataFrame(columns=list(JUDGEMENT_COLUMNS))
    workers = np.repeat(np.arange(n_workers), n_control)
    expected = np.array(["verify", "edit", "remove"])[np.tile(np.arange(n_control), n_workers) % 3]
    random_answer = np.array(["verify", "edit", "remove"])[rng.integers(0, 3, len(workers))]
    outcome = np.where(failing[workers], random_answer, expected)
    start = np.tile(np.arange(n_control), n_workers) * 10
    dataset = str(frame["dataset"].iloc[0])
    return pd.DataFrame(
        {
            "study": study,
            "dataset": dataset,
            "doc_id": "control",
            "chunk_id": "control#c0",
            "item_id": "control|GT",
            "task_key": [f"control-{w}" for w in workers.tolist()],
            "mention_id": [f"control-{s}" for s in start.tolist()],
            "system": "GT",
            "start": start,
            "end": start + 5,
            "surface": "Paris",
            "link": f"{_WIKI}Paris",
            "worker": [f"w{w:05d}" for w in workers.tolist()],
            "outcome": outcome,
            "new_link": pd.Series(outcome).eq("edit").map({True: f"{_WIKI}Paris,_Texas", False: None}).to_numpy(),
            "deleted_region": False,
            "position": control_slot[workers],
            "created_at": "2026-01-01T00:00:00Z",
            "lead_time": 10.0,
            "is_control": True,
            "expected_outcome": expected,
        }
    )
