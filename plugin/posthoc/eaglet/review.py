"""The review module (paper 003, Sect. 4.4) on Label Studio: flags -> review tasks -> corrected gold.

"Users can accept, modify or reject the suggestions of the tool as well as add new entities."

Tasks (:func:`review_tasks`)
----------------------------
One task per document with flags (``data``: ``text``, ``dataset``, ``doc_id``), imported WITH one
prediction (``model_version`` ``eaglet``) in which every flag is a pre-filled region of the config
``label_configs/gold_review.xml``: a ``flag`` labels item (label = the rule, ``meta.text`` = the
suggestion and the reason) and a ``link`` textarea item pre-filled with the suggested link, sharing
the result id = the flag id. The reviewer picks ``decision`` accept / modify / reject per region
and may draw ``new_mention`` regions.

Decisions (:func:`apply_review_decisions`)
------------------------------------------
For a flag on an existing annotation: *accept* applies the suggestion -- ``delete`` and ``check``
remove the annotation, ``update-uri`` sets its link to the region's link (the suggested one unless
edited), ``update-span`` moves it to the suggested span (``partner_start``/``partner_end``; a
positioning flag's trimmed span) with the region's link; *modify* replaces it by the region's span
and link; *reject*, no decision, or deleting the region leave it unchanged. For a proposal
(``insert``): *accept* adds it with the region's link, *modify* adds the region's span and link,
anything else adds nothing. A region without a flag id (drawn by the reviewer) adds a mention
unless rejected. When one annotation gets both a removal and an update, the removal wins (logged).
An insert equal to an annotation already present changes nothing (logged). The latest
non-cancelled annotation of a task counts; documents without
a task or without an annotation are unchanged. Every decision is one row of the change log.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import pandas as pd

from posthoc.atomic import write_text_atomic
from posthoc.eaglet.flags import read_flags
from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records as ls
from posthoc.labelstudio.label_config import RegionTags, region_tags
from posthoc.labelstudio.regions import parse_regions
from posthoc.links import normalise_link
from posthoc.paths import label_config
from posthoc.readers.corpus import Corpus, mentions_frame

CONFIG_NAME: Final = "gold_review"
MODEL_VERSION: Final = "eaglet"
NEW_MENTION: Final = "new_mention"
CHANGE_COLUMNS: Final = ("dataset", "doc_id", "flag_id", "rule", "suggestion", "decision", "action", "old_start",
                         "old_end", "old_link", "new_start", "new_end", "new_link", "reviewer", "annotation_id",
                         "note")
#: An annotation of the checked system by ``(dataset, doc_id, start, end, link)``, and the table of them.
_Key = tuple[str, str, int, int, str]
_Current = dict[_Key, dict[Any, Any]]


def _prefilled_link(flag: dict[str, Any]) -> str:
    if flag["suggestion"] == "update-uri" and flag["partner_link"]:
        return str(flag["partner_link"])
    return "" if str(flag["link"]) == "nil:" else str(flag["link"])


@lru_cache(maxsize=1)
def review_tags() -> RegionTags:
    """The tags of ``label_configs/gold_review.xml`` (the flag's ``Labels``, the ``link`` TextArea, the
    ``decision`` Choices), read with Label Studio's parser."""
    return region_tags(label_config(CONFIG_NAME))


def _region(flag: dict[Any, Any], text: str) -> list[dict[str, Any]]:
    tags = review_tags()
    start, end = int(flag["start"]), int(flag["end"])
    if not 0 <= start < end <= len(text):
        raise PosthocInputError(f"flag {flag['flag_id']} of document {flag['doc_id']!r}: span [{start},{end}) is "
                                f"outside the text (length {len(text)}); rerun posthoc flags check")
    value = {"start": start, "end": end, "text": text[start:end]}
    meta = f"{flag['suggestion']}: {flag['detail']}" if flag["detail"] else str(flag["suggestion"])
    return [
        {"id": flag["flag_id"], "from_name": tags.labels_from, "to_name": tags.to_name, "type": "labels",
         "origin": "prediction", "value": {**value, "labels": [flag["rule"]]}, "meta": {"text": [meta]}},
        {"id": flag["flag_id"], "from_name": tags.link_from, "to_name": tags.to_name, "type": "textarea",
         "origin": "prediction", "value": {**value, "text": [_prefilled_link(flag)]}},
    ]


def review_tasks(flags: pd.DataFrame, documents: pd.DataFrame, *,
                 rules: list[str] | None = None) -> list[dict[str, Any]]:
    """One Label Studio task (with its prediction) per document that has flags (module docstring)."""
    chosen = flags if rules is None else flags[flags["rule"].isin(rules)]
    texts = {(str(d), str(i)): str(t) for d, i, t in documents[["dataset", "doc_id", "text"]].itertuples(
        index=False)}
    tasks = []
    for (dataset, doc_id), group in chosen.groupby(["dataset", "doc_id"], sort=True):
        key = (str(dataset), str(doc_id))
        if key not in texts:
            raise PosthocInputError(f"flags name document {doc_id!r} of {dataset!r}, which the corpus lacks")
        text = texts[key]
        result = [item for flag in group.to_dict("records") for item in _region(flag, text)]
        review_key = hashlib.sha1(f"{dataset}\x1f{doc_id}".encode(), usedforsecurity=False).hexdigest()[:16]
        tasks.append({"data": {"text": text, "dataset": key[0], "doc_id": key[1], "review_key": review_key},
                      "predictions": [{"model_version": MODEL_VERSION, "result": result}]})
    return tasks


# ---- Label Studio -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReviewProject:
    project_id: int
    created: int
    existing: int


def _load_flags_dir(flags_dir: Path) -> tuple[dict[str, Any], pd.DataFrame, Corpus]:
    from posthoc.readers import read_mentions

    meta_path = flags_dir / "meta.json"
    if not meta_path.is_file():
        raise PosthocInputError(f"{flags_dir}: no meta.json; give the folder written by `posthoc flags check`")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        flags_file, system = str(meta["flags_file"]), str(meta["system"])
    except (ValueError, KeyError, TypeError) as exc:  # ValueError: not JSON or not UTF-8
        raise PosthocInputError(f"{meta_path}: not the meta.json `posthoc flags check` writes "
                                f"({type(exc).__name__}: {exc}); rerun `posthoc flags check`") from None
    flags = read_flags(flags_dir / flags_file)
    corpus = read_mentions(flags_dir / "checked.jsonl", fmt="jsonl", system=system)
    return meta, flags, corpus


def create_review_project(flags_dir: str | os.PathLike[str], *, url: str, token: str, title: str | None = None,
                          rules: list[str] | None = None) -> ReviewProject:
    """Create (or reuse, by title) the review project and import the tasks not yet there."""
    from posthoc.labelstudio.calls import PROJECT_FIELDS
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.study.live.projects import REVIEW_MARKER, marked_projects, marker_html

    flags_dir = Path(flags_dir)
    _, flags, corpus = _load_flags_dir(flags_dir)
    title = title or f"Eaglet review: {flags_dir.resolve().name}"
    marker = f"{REVIEW_MARKER} {title}"
    client = LabelStudioClient(url, token)
    projects = client.projects(include=PROJECT_FIELDS)  # every project (a review is no study), the fields read
    # by its marker (projects.py, as the study's projects are found); one made before markers: by its title
    found = marked_projects(projects, marker) or [p for p in projects if ls.project_title(p) == title]
    if found:
        project_id = ls.int_id(found[0])
    else:
        project_id = ls.int_id(client.post("/api/projects/", {"title": title,
                                                               "label_config": label_config(CONFIG_NAME),
                                                               "maximum_annotations": 1,
                                                               "expert_instruction": marker_html(marker)}))
    present = {(str(data.get("dataset")), str(data.get("doc_id")))
               for data in map(ls.task_data, client.tasks(project_id))}
    tasks = [t for t in review_tasks(flags, corpus.documents, rules=rules)
             if (ls.task_data(t)["dataset"], ls.task_data(t)["doc_id"]) not in present]
    if tasks:
        client.post(f"/api/projects/{project_id}/import", tasks)
    write_text_atomic(flags_dir / "review.json", json.dumps({"project_id": project_id, "title": title,
                                                             "rules": rules}, indent=1))
    return ReviewProject(project_id, len(tasks), len(present))


def export_tasks(url: str, token: str, project_id: int) -> list[ls.Task]:
    """Every task of the project with its annotations (Label Studio's JSON export); reviewers by e-mail."""
    from posthoc.labelstudio.client import LabelStudioClient

    client = LabelStudioClient(url, token)
    answer = client.get(f"/api/projects/{project_id}/export", exportType="JSON", download_all_tasks="true")
    if not isinstance(answer, list):
        raise PosthocInputError(f"project {project_id}: the export is not a list of tasks; is it a review project?")
    emails = {ls.int_id(u): str(u.get("email") or ls.record_id(u)) for u in client.members()}
    for task in answer:
        for annotation in ls.task_annotations(task):
            ls.expand_completed_by(annotation, emails)
    return answer


# ---- corrected gold standard --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Region:
    start: int
    end: int
    label: str
    link: str | None
    decision: str | None


def _regions(task: ls.Task, text: str) -> tuple[dict[str, _Region], ls.Annotation] | None:
    annotations = [a for a in ls.task_annotations(task) if not ls.was_cancelled(a)]
    if not annotations:
        return None
    latest = max(annotations, key=lambda a: (str(ls.last_changed_at(a) or ""), ls.int_id(a)))
    tags = review_tags()
    regions = {}
    for region in parse_regions(ls.result_items(latest)):
        rid, start, end = str(region.id), region.start, region.end
        if start is None or end is None:
            continue
        if not 0 <= start < end <= len(text):
            raise PosthocInputError(f"task {ls.record_id(task)}, region {rid}: span [{start},{end}) is outside "
                                    f"the text (length {len(text)}); fix the region in Label Studio")
        label = region.labels[0] if region.labels and region.label_from == tags.labels_from else ""
        lines = region.texts.get(str(tags.link_from))
        choices = region.choices.get(str(tags.decision_from), ())
        regions[rid] = _Region(start, end, label, None if lines is None else (lines[0] if lines else "").strip(),
                               choices[0] if choices else None)
    return regions, latest


def _reviewer(annotation: ls.Annotation) -> str:
    who = ls.completed_by(annotation)
    return "" if who is None else str(ls.user_email(who) or ls.user_id(who))


def apply_review_decisions(corpus: Corpus, flags: pd.DataFrame, tasks: list[ls.Task], *,
                           system: str = "GT") -> tuple[Corpus, pd.DataFrame]:
    """The corrected annotations of ``system`` and the change log (see the module docstring)."""
    checked = corpus.mentions[corpus.mentions["system"] == system]
    records = checked.to_dict("records")
    current: _Current = {
        (str(m["dataset"]), str(m["doc_id"]), int(m["start"]), int(m["end"]), str(m["link"])): m for m in records}
    texts = {(str(d), str(i)): str(t) for d, i, t in corpus.documents[["dataset", "doc_id", "text"]].itertuples(
        index=False)}
    by_doc: dict[Any, list[dict[Any, Any]]] = {
        key: group.to_dict("records") for key, group in flags.groupby(["dataset", "doc_id"], sort=False)}
    log: list[dict[str, Any]] = []
    for task in tasks:
        data = ls.task_data(task)
        doc = (str(data.get("dataset")), str(data.get("doc_id")))
        if doc not in texts:
            raise PosthocInputError(f"task {ls.record_id(task)}: document {doc[1]!r} of {doc[0]!r} is not in the "
                                    "checked corpus; give the flags folder this project was made from")
        text = texts[doc]
        parsed = _regions(task, text)
        if parsed is None:
            continue
        regions, annotation = parsed
        base = {"dataset": doc[0], "doc_id": doc[1], "reviewer": _reviewer(annotation),
                "annotation_id": ls.int_id(annotation)}
        removals, updates, inserts = [], [], []
        for flag in by_doc.get(doc, []):
            region = regions.get(str(flag["flag_id"]))
            decision = "reject" if region is None else (region.decision or "undecided")
            entry = {**base, "flag_id": flag["flag_id"], "rule": flag["rule"], "suggestion": flag["suggestion"],
                     "decision": decision, "note": "region deleted" if region is None else ""}
            target = (doc[0], doc[1], int(flag["start"]), int(flag["end"]), str(flag["link"]))
            if region is None or decision not in ("accept", "modify"):
                log.append({**entry, "action": "none"})
                continue
            link = region.link if region.link else (str(flag["partner_link"]) if flag["suggestion"] == "update-uri"
                                                     else str(flag["link"]))
            span = (int(flag["start"]), int(flag["end"])) if decision == "accept" else (region.start, region.end)
            if decision == "accept" and flag["suggestion"] == "update-span":
                span = (int(flag["partner_start"]), int(flag["partner_end"]))
            if flag["suggestion"] == "insert":
                inserts.append((entry, span, link))
            elif decision == "accept" and flag["suggestion"] in ("delete", "check"):
                removals.append((entry, target))
            else:
                updates.append((entry, target, span, link))
        for rid, region in regions.items():
            if rid in {str(f["flag_id"]) for f in by_doc.get(doc, [])} or region.decision == "reject":
                continue
            entry = {**base, "flag_id": "", "rule": region.label or NEW_MENTION, "suggestion": "insert",
                     "decision": region.decision or "added", "note": "added by the reviewer"}
            inserts.append((entry, (region.start, region.end), region.link or ""))
        removed = {target for _, target in removals}
        for entry, target in removals:
            _remove(current, target, entry, log)
        for entry, target, span, link in updates:
            if target in removed:
                log.append({**entry, "action": "none", "old_start": target[2], "old_end": target[3],
                            "old_link": target[4], "note": "superseded: the annotation was removed"})
                continue
            old = _remove(current, target, entry, None)
            if old is None:
                log.append({**entry, "action": "none", "note": "annotation not found (already changed)"})
                continue
            _insert(current, doc, text, span, link, system, {**entry, "action": "update", "old_start": target[2],
                                                            "old_end": target[3], "old_link": target[4]}, log)
        for entry, span, link in inserts:
            _insert(current, doc, text, span, link, system, {**entry, "action": "insert"}, log)
    rows = [tuple(m[c] for c in ("dataset", "doc_id", "system", "start", "end", "surface", "link", "link_original",
                                 "is_nil")) for m in current.values()]
    mentions = mentions_frame(rows)
    if not mentions.empty:
        mentions = mentions.sort_values(["dataset", "doc_id", "start", "end", "link"], kind="stable").reset_index(
            drop=True)
    changes = pd.DataFrame(log, columns=list(CHANGE_COLUMNS))
    for column in ("old_start", "old_end", "new_start", "new_end"):
        changes[column] = changes[column].astype("Int64")
    return Corpus(corpus.documents, mentions), changes


def _remove(current: _Current, target: _Key, entry: dict[str, Any],
            log: list[dict[str, Any]] | None) -> dict[Any, Any] | None:
    old = current.pop(target, None)
    if log is not None:
        if old is None:
            log.append({**entry, "action": "none", "note": "annotation not found (already changed)"})
        else:
            log.append({**entry, "action": "delete", "old_start": target[2], "old_end": target[3],
                        "old_link": target[4]})
    return old


def _insert(current: _Current, doc: tuple[str, str], text: str, span: tuple[int, int], link: str, system: str,
            entry: dict[str, Any], log: list[dict[str, Any]]) -> None:
    norm = normalise_link(link)
    key = (doc[0], doc[1], span[0], span[1], norm.link)
    entry = {**entry, "new_start": span[0], "new_end": span[1], "new_link": norm.link}
    if key in current:
        log.append({**entry, "action": "none" if entry["action"] == "insert" else entry["action"],
                    "note": (entry.get("note") or "") + ("; " if entry.get("note") else "")
                    + "already present"})
        return
    current[key] = {"dataset": doc[0], "doc_id": doc[1], "system": system, "start": span[0], "end": span[1],
                    "surface": text[span[0]:span[1]], "link": norm.link, "link_original": norm.original,
                    "is_nil": norm.is_nil}
    log.append(entry)


@dataclass(frozen=True)
class ApplyResult:
    changes: int
    corpus: Corpus
    log: pd.DataFrame


def apply_review(flags_dir: str | os.PathLike[str], *, url: str, token: str, project_id: int | None,
                 out_dir: str | os.PathLike[str]) -> ApplyResult:
    """Export the review project; write ``corrected.jsonl``, ``corrected.nif.ttl`` and ``changes.csv``."""
    from posthoc.writers import write_jsonl, write_nif, write_table

    flags_dir, out_dir = Path(flags_dir), Path(out_dir)
    meta, flags, corpus = _load_flags_dir(flags_dir)
    if project_id is None:
        review = flags_dir / "review.json"
        if not review.is_file():
            raise PosthocInputError(f"{flags_dir}: no review.json; give --project or run `posthoc flags review`")
        project_id = int(json.loads(review.read_text(encoding="utf-8"))["project_id"])
    tasks = export_tasks(url, token, project_id)
    corrected, changes = apply_review_decisions(corpus, flags, tasks, system=meta["system"])
    out_dir.mkdir(parents=True, exist_ok=True)
    write_jsonl(corrected, out_dir / "corrected.jsonl", system=meta["system"] if not corrected.mentions.empty
                else None)
    write_nif(corrected, out_dir / "corrected.nif.ttl", system=meta["system"] if not corrected.mentions.empty
              else None)
    write_table(changes, out_dir / "changes.csv")
    applied = int((changes["action"] != "none").sum())
    return ApplyResult(applied, corrected, changes)
