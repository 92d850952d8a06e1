"""Add a new system to a planned, running or finished study: reuse what was judged, sample what is new (issue 46).

A new linker's output on the study's documents is split, annotation by annotation, by :func:`place_system`:

* **placed**: each annotation goes to the stored chunk that holds its span (the study's own chunking,
  :mod:`posthoc.study.plan.chunking`; the chunks are not recomputed, so no stored task changes). An annotation
  that lies in no stored chunk (it crosses a cut: the study's chunks protected the study systems' spans, not
  this one's) is ``unplaced``: it has no task and no reused verdict, and the scoring side must say so.
* **reused**: same document, span (document offsets, code points) and canonical link
  (:func:`posthoc.links.normalise_link`) as an annotation that a study system had pre-filled in a real task
  that is not withdrawn: judged, or to be judged, blind to its system. ``reused_from`` names those systems.
  The keyword hook ``reusable`` (a function of the reused rows returning a boolean mask) lets the reuse check
  (``posthoc.metrics.reuse``) restrict reuse to where context does not change a verdict; default: every match.
* **novel**: every other placed annotation.

:func:`sample_chunks` draws the chunks to judge: the sorted ids of the chunks holding a novel annotation, in the
random order of ``stream_rng(seed, "add-system/<system>")`` with the study's seed, the first ``n`` (so a larger
``n`` holds a smaller one's chunks). How many is the caller's (``posthoc study add-system``:
:mod:`posthoc.study.planner.added_system`, ``--fraction`` or ``--target-halfwidth``).

:func:`plan_added_system` (pure) makes the :class:`~posthoc.study.plan.revision.Revision` of kind ``add-system``:
one item (chunk, new system) a sampled chunk, showing **all** the new system's annotations in that chunk (reused
ones too: the task is blind and looks like any system's task), judged ``k`` times by workers who have no task of
that chunk (:func:`~posthoc.study.plan.revision.assign_balanced`; a worker who saw it as a control task only when
nobody else can; ``new_workers`` new accounts may take slots), appended to their sequences in new batches with a
control task each (:func:`~posthoc.study.plan.revision.sequence_revision`), exactly as ``posthoc study extend``
and ``reassign`` do. The revision records every annotation of the new system in the manifest's
``added_annotations`` table with its ``status``: ``reused`` (whatever its chunk), ``sampled`` (novel, its chunk
judged), ``unsampled`` (novel, its chunk not drawn) or ``unplaced``; ``chunk_sampled`` says whether its chunk has a
task (a reused annotation in a sampled chunk gets a fresh verdict as well). The revision's parameters hold the
system, the digest of its annotations and the sampled chunks, so a rerun with the same output adds nothing
(:func:`added_before`). The new system's annotations are not added to ``source_mentions``: the stored chunks must
keep chunking as stored for later extensions and reassignments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posthoc.arrays import Bools
from posthoc.errors import PosthocInputError
from posthoc.links import normalise_link
from posthoc.study.plan import revision as plan_revision
from posthoc.study.plan.config import StudyConfig
from posthoc.study.plan.control_tasks import CONTROL_SYSTEM, control_pool
from posthoc.study.plan.design import _normalise
from posthoc.study.plan.keys import stream_rng
from posthoc.study.plan.reassign import new_accounts
from posthoc.study.plan.revision import Revision, Tables

KIND = "add-system"
REUSED, SAMPLED, UNSAMPLED, UNPLACED = "reused", "sampled", "unsampled", "unplaced"
#: a function of the reused annotations (columns of :attr:`NewSystem.annotations`) -> which may keep the verdict
Reusable = Callable[[pd.DataFrame], Bools]


def link_key(link: object) -> str:
    """The canonical form of a link for comparing annotations (:func:`posthoc.links.normalise_link`).

    Examples:
        >>> link_key("dbr:Côte_d'Ivoire") == link_key("https://en.wikipedia.org/wiki/C%C3%B4te_d%27Ivoire")
        True
        >>> link_key(None), link_key("--NME--")
        ('nil:', 'nil:')
    """
    return normalise_link(None if link is None else str(link)).link


@dataclass(frozen=True)
class NewSystem:
    """A new system's annotations placed in the study (module docstring).

    ``annotations``: ``dataset, doc_id, system, start, end, surface, link, link_original, is_nil`` (document
    offsets), ``chunk_id`` (``None`` when unplaced), ``chunk_start``, ``reused`` (bool), ``reused_from`` (the
    study systems, comma-separated, or ``None``); sorted by document and span. ``digest``: SHA-256 of the
    annotations' keys (what a rerun is compared by).
    """

    system: str
    annotations: pd.DataFrame
    digest: str

    @property
    def novel(self) -> Bools:
        """Placed annotations that are not reused."""
        return np.asarray(self.annotations["chunk_id"].notna() & ~self.annotations["reused"].astype(bool))

    def novel_chunks(self) -> list[str]:
        """Sorted ids of the chunks holding a novel annotation."""
        return sorted(set(self.annotations.loc[self.novel, "chunk_id"].astype(str)))


def judged_annotations(tables: Tables) -> pd.DataFrame:
    """``dataset, doc_id, doc_start, doc_end, link_key, system`` of every annotation pre-filled in a real task that
    is not withdrawn (judged, or to be judged)."""
    tasks = tables["tasks"]
    marks = tables["task_revisions"]
    withdrawn = set(marks.loc[marks["withdrawn_in"].notna(), "task_key"].astype(str))
    real = tasks.loc[~tasks["is_control"].astype(bool) & ~tasks["task_key"].astype(str).isin(withdrawn)]
    prefill = tables["prefill"].merge(real[["task_key", "chunk_id", "system"]], on="task_key")
    out = prefill.merge(tables["chunks"][["chunk_id", "dataset", "doc_id"]], on="chunk_id")
    return pd.DataFrame({"dataset": out["dataset"].astype(str), "doc_id": out["doc_id"].astype(str),
                         "doc_start": out["doc_start"].astype("int64"), "doc_end": out["doc_end"].astype("int64"),
                         "link_key": [link_key(v) for v in out["link"]], "system": out["system"].astype(str)})


def _check_documents(stored: pd.DataFrame, docs: pd.DataFrame, system: str) -> None:
    """PosthocInputError unless ``docs`` are the study's documents with the same texts."""
    study = {(str(d), str(i)): str(t) for d, i, t in zip(stored["dataset"], stored["doc_id"], stored["text"],
                                                         strict=True)}
    given = {(str(d), str(i)): str(t) for d, i, t in zip(docs["dataset"], docs["doc_id"], docs["text"], strict=True)}
    for key, text in sorted(given.items()):
        if key not in study:
            raise PosthocInputError(f"system {system!r}: document {key[1]!r} of dataset {key[0]!r} is not in the "
                                    "study; give the output on the study's documents (--dataset names the dataset)")
        if study[key] != text:
            raise PosthocInputError(f"system {system!r}: document {key[1]!r} of dataset {key[0]!r} has another "
                                    "text than the study's; give the output on the study's documents")
    missing = sorted(set(study) - set(given))
    if missing:
        raise PosthocInputError(f"system {system!r}: the output lacks {len(missing)} of the study's {len(study)} "
                                f"documents (first: {missing[0][1]!r} of dataset {missing[0][0]!r}); give its "
                                "output on every document of the study")


def _place(ments: pd.DataFrame, chunks: pd.DataFrame) -> pd.DataFrame:
    """The mentions with the stored chunk holding each span (``chunk_id``, ``chunk_start``; ``None`` / -1 if none)."""
    rows = ments.reset_index(drop=True).reset_index(names="row")
    spans = chunks[["dataset", "doc_id", "chunk_id", "chunk_start", "chunk_end"]].astype(
        {"dataset": str, "doc_id": str, "chunk_start": "int64", "chunk_end": "int64"})
    joined = rows[["row", "dataset", "doc_id", "start", "end"]].merge(spans, on=["dataset", "doc_id"])
    inside = joined.loc[(joined["chunk_start"] <= joined["start"]) & (joined["end"] <= joined["chunk_end"])]
    found = inside.drop_duplicates("row").set_index("row")
    out = rows.drop(columns="row")
    out["chunk_id"] = rows["row"].map(found["chunk_id"]).astype(object)
    out["chunk_id"] = out["chunk_id"].where(out["chunk_id"].notna(), None)
    out["chunk_start"] = rows["row"].map(found["chunk_start"]).fillna(-1).astype("int64")
    return out


def _digest(ments: pd.DataFrame) -> str:
    keys = sorted(f"{d}\x1f{i}\x1f{s}\x1f{e}\x1f{link_key(link)}" for d, i, s, e, link in zip(
        ments["dataset"], ments["doc_id"], ments["start"], ments["end"], ments["link"], strict=True))
    return hashlib.sha256("\x1e".join(keys).encode("utf-8", "surrogatepass")).hexdigest()


def place_system(tables: Tables, documents: pd.DataFrame, mentions: pd.DataFrame, *, system: str,
                 reusable: Reusable | None = None) -> NewSystem:
    """The new system's annotations placed in the study's chunks and split into reused and novel (module docstring).

    ``documents``/``mentions``: what the readers give for its output (:func:`posthoc.readers.read_mentions`);
    ``reusable``: the reuse check's hook. Raises PosthocInputError for another document set, a text that
    differs, annotations of another system, or an output with no annotation.
    """
    if not system or system == CONTROL_SYSTEM:
        raise PosthocInputError(f"system name {system!r} cannot be used: give the new system's name")
    docs, ments = _normalise(documents, mentions)
    _check_documents(tables["documents"], docs, system)
    others = sorted(set(ments["system"]) - {system})
    if others:
        raise PosthocInputError(f"the output holds annotations of system(s) {others}, not {system!r}: give one "
                                "system's output, or --system with the name its lines carry")
    if ments.empty:
        raise PosthocInputError(f"the output of system {system!r} holds no annotation: there is nothing to add")
    placed = _place(ments, tables["chunks"])
    judged = judged_annotations(tables)
    systems = judged.groupby(["dataset", "doc_id", "doc_start", "doc_end", "link_key"])["system"].agg(
        lambda s: ",".join(sorted(set(s))))
    keys = pd.MultiIndex.from_arrays([placed["dataset"].astype(str), placed["doc_id"].astype(str),
                                      placed["start"].astype("int64"), placed["end"].astype("int64"),
                                      [link_key(v) for v in placed["link"]]])
    where = systems.index.get_indexer(keys) if len(systems) else np.full(len(placed), -1)
    found = np.asarray(where) >= 0
    values = systems.to_numpy(dtype=object)
    placed["reused_from"] = pd.Series([values[w] if w >= 0 else None for w in np.asarray(where).tolist()],
                                      dtype=object, index=placed.index)
    placed["reused"] = found
    if reusable is not None and found.any():
        keep = np.asarray(reusable(placed.loc[found].reset_index(drop=True)), dtype=bool)
        if keep.shape != (int(found.sum()),):
            raise PosthocInputError("the reusable hook must give one boolean per reused annotation")
        reused = found.copy()
        reused[np.flatnonzero(found)[~keep]] = False
        placed["reused"] = reused
    return NewSystem(system=system, annotations=placed, digest=_digest(ments))


def added_before(tables: Tables, new: NewSystem) -> int | None:
    """The revision that added ``new.system`` with the same annotations (a rerun: nothing to add), else ``None``.

    Raises PosthocInputError when the name is a study system, or was added with other annotations.
    """
    for number, kind, parameters in zip(tables["revisions"]["number"], tables["revisions"]["kind"],
                                        tables["revisions"]["parameters"], strict=True):
        record = json.loads(str(parameters))
        if kind == KIND and record.get("system") == new.system:
            if record.get("annotations_digest") != new.digest:
                raise PosthocInputError(f"system {new.system!r} was added in revision {number} with other "
                                        "annotations; give the new output another --system name")
            return int(number)
    items = tables["items"]
    study = set(tables["source_mentions"]["system"].astype(str)) | set(
        items.loc[~items["is_control"].astype(bool), "system"].astype(str))
    if new.system in study:
        raise PosthocInputError(f"system {new.system!r} is already in the study (its systems: "
                                f"{', '.join(sorted(study))}); give the new system another --system name")
    return None


def sample_chunks(chunk_ids: Collection[str], n: int, *, seed: int, system: str) -> list[str]:
    """The first ``n`` of ``chunk_ids`` (sorted) in the seeded order of ``(seed, "add-system/<system>")``, sorted.

    Examples:
        >>> chunks = [f"c{i:06d}" for i in range(10)]
        >>> small = sample_chunks(chunks, 3, seed=7, system="NEW")
        >>> large = sample_chunks(chunks, 6, seed=7, system="NEW")
        >>> len(small), set(small) <= set(large), small == sample_chunks(chunks, 3, seed=7, system="NEW")
        (3, True, True)
    """
    ordered = sorted(map(str, chunk_ids))
    if not 0 <= n <= len(ordered):
        raise PosthocInputError(f"cannot sample {n} of {len(ordered)} chunks")
    permutation = stream_rng(seed, f"{KIND}/{system}").permutation(len(ordered))
    return sorted(ordered[i] for i in permutation[:n])


def _statuses(new: NewSystem, sampled: set[str], revision: int) -> pd.DataFrame:
    """The ``added_annotations`` rows of the new system (module docstring)."""
    a = new.annotations
    chunk = a["chunk_id"].astype(object)
    in_sample = np.array([c is not None and str(c) in sampled for c in chunk], dtype=bool)
    status = np.where(chunk.isna(), UNPLACED, np.where(a["reused"].astype(bool), REUSED,
                                                        np.where(in_sample, SAMPLED, UNSAMPLED)))
    return pd.DataFrame({"revision": revision, "system": new.system, "dataset": a["dataset"], "doc_id": a["doc_id"],
                         "start": a["start"], "end": a["end"], "surface": a["surface"], "link": a["link"],
                         "link_original": a["link_original"], "is_nil": a["is_nil"].astype(bool), "chunk_id": chunk,
                         "status": status.astype(object), "reused_from": a["reused_from"],
                         "chunk_sampled": in_sample})


def plan_added_system(tables: Tables, config: StudyConfig, new: NewSystem, sampled: Collection[str], *,
                      revision: int, key_secret: bytes | None, new_workers: int = 0,
                      parameters: dict[str, object] | None = None) -> Revision:
    """The ``add-system`` revision: the sampled chunks' tasks of the new system, every annotation's status.

    ``sampled``: chunk ids (from :func:`sample_chunks`); ``new_workers``: new accounts that may take slots
    (one that gets none is not made); ``parameters``: more to record (the sample's rule). Raises
    PosthocInputError when no worker is left who has not seen a sampled chunk (then give ``new_workers``).
    """
    chosen = {str(c) for c in sampled}
    record: dict[str, object] = {**(parameters or {}), "system": new.system, "annotations_digest": new.digest,
                                 "sampled_chunks": sorted(chosen), "novel_chunks": len(new.novel_chunks()),
                                 "new_workers": new_workers}
    annotations = _statuses(new, chosen, revision)
    if not chosen:
        return Revision(revision, KIND, record, added_annotations=annotations)
    placed = new.annotations.loc[new.annotations["chunk_id"].isin(chosen)].copy()
    item_keys = placed.groupby("chunk_id", sort=True).size().reset_index(name="n_mentions")
    first = plan_revision.next_number(tables["items"]["item_id"], "i")
    item_keys["item_id"] = [f"i{first + n:06d}" for n in range(len(item_keys))]
    item_keys["system"] = new.system
    slots = item_keys.loc[item_keys.index.repeat(config.k)].reset_index(drop=True)
    slots["replicate"] = np.tile(np.arange(config.k), len(item_keys))
    tasks = tables["tasks"]
    workers = [str(w) for w in tables["workers"]["worker"]]
    fresh = new_accounts(workers, new_workers)
    receivers = [w for w in workers if w not in plan_revision.taken_out(tables["revisions"])] + fresh
    control = tasks["is_control"].astype(bool)
    seen = {str(w): set(map(str, g["chunk_id"])) for w, g in tasks.loc[~control].groupby("worker")}
    shown = {str(w): set(map(str, g["chunk_id"])) for w, g in tasks.loc[control].groupby("worker")}
    rng = plan_revision.assignment_rng(config.seed, revision)
    slots["worker"] = plan_revision.assign_balanced(slots, receivers, seen, rng, avoid=shown)
    placed = placed.merge(item_keys[["chunk_id", "item_id"]], on="chunk_id")
    item_prefill = pd.DataFrame({"item_id": placed["item_id"], "start": placed["start"] - placed["chunk_start"],
                                 "end": placed["end"] - placed["chunk_start"], "doc_start": placed["start"],
                                 "doc_end": placed["end"], "surface": placed["surface"], "link": placed["link"],
                                 "is_nil": placed["is_nil"].astype(bool)})
    item_prefill = item_prefill.sort_values(["item_id", "start", "end", "link"], kind="stable", na_position="first")
    chunking, _ = plan_revision.study_chunking(tables["documents"], tables["source_mentions"], tables["chunks"],
                                               max_chars=config.max_chars)
    pool = control_pool(chunking) if config.control_tasks else None
    shown_prefill = item_prefill[list(plan_revision.ITEM_PREFILL_COLUMNS)]
    sequenced = plan_revision.sequence_revision(tables, slots, shown_prefill, config=config, revision=revision,
                                                chunking=chunking, pool=pool, key_secret=key_secret)
    plan_revision.reject_duplicates(tables, sequenced.tasks)
    items = pd.DataFrame({"item_id": item_keys["item_id"], "chunk_id": item_keys["chunk_id"], "system": new.system,
                          "replicates": config.k, "n_mentions": item_keys["n_mentions"].astype("int64"),
                          "is_control": False})
    used = set(sequenced.tasks["worker"])
    return Revision(revision, KIND, record, tasks=sequenced.tasks, prefill=sequenced.prefill,
                    items=pd.concat([items, sequenced.items], ignore_index=True), added_annotations=annotations,
                    workers=tuple(w for w in fresh if w in used))
