"""Judgement tables for the CrowdTruth metrics, from three sources.

1. CrowdTruth's own CSV input (CrowdFlower / Figure Eight, Amazon Mechanical Turk, or a custom
   platform), read as the peer ``crowdtruth.load`` reads it: :func:`read_crowdtruth_csv` with a
   :class:`CrowdTruthConfig` that mirrors the peer's ``DefaultConfig``.
2. A posthoc study's judgements table (:mod:`posthoc.tables`) with k > 1 judges per annotation:
   :func:`judgements_from_posthoc` (unit = ``mention_id``, annotations = ``verify / edit / remove``).
3. A Label Studio JSON export of a project with a ``<Choices>`` control (the configs
   ``label_configs/relation_extraction.xml`` and ``multiple_choice.xml``):
   :func:`judgements_from_label_studio`.

All three return the tidy judgement table ``unit, worker, annotation`` (one row per chosen
annotation; see :mod:`posthoc.crowdtruth.vectors`).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from posthoc.crowdtruth.vectors import JudgementTable
from posthoc.errors import PosthocInputError
from posthoc.labelstudio import records as ls
from posthoc.tables import Judgements, require_columns

#: The peer's platform columns: (judgment id, unit id, worker id, started, submitted).
CROWDFLOWER_COLUMNS = ("_id", "_unit_id", "_worker_id", "_started_at", "_created_at")
MTURK_COLUMNS = ("AssignmentId", "HITId", "WorkerId", "AcceptTime", "SubmitTime")
POSTHOC_OUTCOMES = ("verify", "edit", "remove")


@dataclass(frozen=True)
class CrowdTruthConfig:
    """How to read a CrowdTruth CSV; the fields mirror the peer's ``DefaultConfig``.

    input_columns
        columns shown to workers (kept, first value per unit, in the units table).
    output_columns
        the answer column(s); the metrics use the first (as the peer).  Empty: detected as the
        peer does (CrowdFlower: columns whose value varies within a unit; MTurk: ``Answer.*``).
    custom_platform_columns
        judgment id, unit id, worker id, started, submitted: needed for files that are neither
        CrowdFlower (first column ``_unit_id``) nor MTurk (first column ``HITId``).
    open_ended
        True: each unit's vector has only the annotations its workers used; no AQS.
    annotation_vector
        the annotations of a closed task, in order.
    remove_empty_rows / none_token
        drop judgements with an empty answer, or (False) replace the answer with ``none_token``.
    annotation_separator
        separates several annotations in one answer.
    lowercase / remove_chars
        the usual ``processJudgments`` of the tutorials: lower-case the answers and delete these
        characters (e.g. ``[]"`` for JSON lists) before splitting.
    csv_separator
        the CSV field separator.
    """

    input_columns: tuple[str, ...] = ()
    output_columns: tuple[str, ...] = ()
    custom_platform_columns: tuple[str, ...] = ()
    open_ended: bool = True
    annotation_vector: tuple[str, ...] = ()
    remove_empty_rows: bool = True
    none_token: str = "NONE"  # noqa: S105 - the peer's placeholder answer, not a secret
    annotation_separator: str = ","
    lowercase: bool = False
    remove_chars: str = ""
    csv_separator: str = ","


@dataclass(frozen=True)
class CrowdTruthInput:
    """A CSV read for the metrics: the judgement table, the per-unit inputs and what was dropped."""

    judgements: JudgementTable
    unit_inputs: pd.DataFrame
    output_column: str
    annotation_vector: tuple[str, ...] | None
    open_ended: bool
    dropped: pd.DataFrame


def _platform_columns(frame: pd.DataFrame, config: CrowdTruthConfig, source: str) -> tuple[str, str, str]:
    first = str(frame.columns[0])
    if first == "_unit_id":
        judgment, unit, worker = CROWDFLOWER_COLUMNS[0], CROWDFLOWER_COLUMNS[1], CROWDFLOWER_COLUMNS[2]
    elif first == "HITId":
        judgment, unit, worker = MTURK_COLUMNS[0], MTURK_COLUMNS[1], MTURK_COLUMNS[2]
    else:
        if len(config.custom_platform_columns) != 5:
            raise PosthocInputError(
                f"{source}: not a CrowdFlower (first column _unit_id) or MTurk (HITId) file; give the five "
                "custom platform columns: judgment id, unit id, worker id, started, submitted"
            )
        judgment, unit, worker = config.custom_platform_columns[:3]
    require_columns(frame, [c for c in (unit, worker) if c], table=source)
    return judgment, unit, worker


def _output_columns(frame: pd.DataFrame, config: CrowdTruthConfig, unit: str, source: str) -> list[str]:
    if config.output_columns:
        require_columns(frame, config.output_columns, table=source)
        return list(config.output_columns)
    if str(frame.columns[0]) == "HITId":
        found = [str(c) for c in frame.columns if str(c).startswith("Answer.")]
    elif str(frame.columns[0]) == "_unit_id":
        candidates = [
            str(c)
            for c in frame.columns
            if c != "clustering"
            and not str(c).startswith(("_", "e_"))
            and not str(c).endswith(("_gold", "_reason", "browser"))
            and str(c) not in config.input_columns
        ]
        varying = frame.groupby(unit)[candidates].nunique().max() if candidates else pd.Series(dtype=int)
        found = [c for c in candidates if varying.get(c, 0) > 1]
    else:
        found = []
    if not found:
        raise PosthocInputError(f"{source}: no answer column found; name it with --output-column")
    return found


def read_crowdtruth_csv(path: str | os.PathLike[str], config: CrowdTruthConfig | None = None) -> CrowdTruthInput:
    """Read a CrowdTruth input CSV into a judgement table, as the peer's ``crowdtruth.load`` does.

    Steps (the peer's order): answers processed (``lowercase`` / ``remove_chars``), empty answers
    dropped or replaced by ``none_token``, answers split on ``annotation_separator``, units judged
    by a single worker dropped.  Two judgements of one worker on one unit are an error (the peer
    keeps only one of them silently).

    Examples:
        An MTurk file (first column ``HITId``; the answers in ``Answer.*``): w1 chose two relations on unit u1,
        w2 one; u2 was judged by w1 alone, so it is dropped.

        >>> import tempfile
        >>> import pandas as pd
        >>> from pathlib import Path
        >>> from posthoc.crowdtruth import read_crowdtruth_csv
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "answers.csv"
        >>> pd.DataFrame({"HITId": ["u1", "u1", "u2"], "AssignmentId": ["a1", "a2", "a3"],
        ...               "WorkerId": ["w1", "w2", "w1"], "AcceptTime": 0, "SubmitTime": 1,
        ...               "Answer.relation": ["cause,treat", "cause", "treat"]}).to_csv(path, index=False)
        >>> read = read_crowdtruth_csv(path)
        >>> read.judgements
          unit worker annotation
        0   u1     w1      cause
        1   u1     w1      treat
        2   u1     w2      cause
        >>> read.dropped
          unit worker                     reason
        0   u2     w1  unit judged by one worker
        >>> folder.cleanup()
    """
    config = config or CrowdTruthConfig()
    source = str(path)
    try:
        frame = pd.read_csv(path, dtype=str, sep=config.csv_separator, keep_default_na=True)
    except FileNotFoundError as exc:
        raise PosthocInputError(f"{source}: file not found") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise PosthocInputError(f"{source}: not a readable CSV ({exc.__class__.__name__}: {exc})") from exc
    if frame.empty:
        raise PosthocInputError(f"{source}: no rows")
    _judgment, unit_col, worker_col = _platform_columns(frame, config, source)
    outputs = _output_columns(frame, config, unit_col, source)
    output = outputs[0]
    if config.input_columns:
        require_columns(frame, config.input_columns, table=source)
    answers = frame[output]
    if config.lowercase:
        answers = answers.str.lower()
    for char in config.remove_chars:
        answers = answers.str.replace(char, "", regex=False)
    empty = answers.isna() | answers.isin(["", "nan"])
    if config.remove_empty_rows:
        dropped = frame.loc[empty, [unit_col, worker_col]].assign(reason="empty answer")
        frame, answers = frame.loc[~empty], answers.loc[~empty]
    else:
        answers = answers.mask(empty, config.none_token)
        dropped = frame.iloc[0:0][[unit_col, worker_col]].assign(reason="")
    judgements = pd.DataFrame({"unit": frame[unit_col].to_numpy(), "worker": frame[worker_col].to_numpy()})
    if judgements.isna().any().any():
        raise PosthocInputError(f"{source}: a row lacks its unit id ({unit_col}) or worker id ({worker_col})")
    duplicated = judgements.duplicated()
    if duplicated.any():
        row = judgements.loc[duplicated].iloc[0]
        raise PosthocInputError(
            f"{source}: worker {row['worker']!r} judged unit {row['unit']!r} twice; keep one judgement per worker"
        )
    sizes = judgements.groupby("unit")["worker"].transform("size")
    single = (sizes == 1).to_numpy()
    dropped = pd.concat(
        [
            dropped.rename(columns={unit_col: "unit", worker_col: "worker"}),
            judgements.loc[single].assign(reason="unit judged by one worker"),
        ],
        ignore_index=True,
    )
    judgements = judgements.loc[~single].assign(annotation=answers.loc[~single].to_numpy())
    frame = frame.loc[~single]
    judgements["annotation"] = judgements["annotation"].str.split(config.annotation_separator, regex=False)
    judgements = judgements.explode("annotation", ignore_index=True)
    unit_inputs = (
        frame.groupby(unit_col, sort=True)[list(config.input_columns)].first().reset_index()
        .rename(columns={unit_col: "unit", **{c: f"input.{c}" for c in config.input_columns}})
        if config.input_columns
        else pd.DataFrame({"unit": sorted(set(judgements["unit"]))})
    )
    return CrowdTruthInput(
        judgements=judgements,
        unit_inputs=unit_inputs,
        output_column=output,
        annotation_vector=tuple(config.annotation_vector) if config.annotation_vector else None,
        open_ended=config.open_ended,
        dropped=dropped,
    )


def judgements_from_posthoc(
    judgements: Judgements, *, include_controls: bool = False, source: str = "judgements table"
) -> JudgementTable:
    """A posthoc judgements table (k > 1) as a CrowdTruth judgement table.

    unit = ``mention_id``; worker = ``worker``; annotation = ``outcome`` (``verify | edit | remove``, a
    closed task with that annotation vector).  Control items are left out unless
    ``include_controls``; mentions with a single judge are left out (agreement needs two).

    Examples:
        Mention m1 was judged by two workers and stays; m2 by one (no agreement to measure) and goes.

        >>> import pandas as pd
        >>> from posthoc.crowdtruth.io import judgements_from_posthoc
        >>> judgements = pd.DataFrame({"mention_id": ["m1", "m1", "m2"], "worker": ["w1", "w2", "w1"],
        ...                            "outcome": ["verify", "edit", "remove"]})
        >>> judgements_from_posthoc(judgements)
          unit worker annotation
        0   m1     w1     verify
        1   m1     w2       edit
    """
    require_columns(judgements, ("mention_id", "worker", "outcome"), table=source)
    frame = judgements
    if not include_controls and "is_control" in frame.columns:
        control = frame["is_control"].map(lambda v: str(v).strip().lower() in ("true", "1", "yes", "1.0"))
        frame = frame.loc[~control.to_numpy(dtype=bool)]
    bad = ~frame["outcome"].isin(POSTHOC_OUTCOMES)
    if bad.any():
        raise PosthocInputError(
            f"{source}: outcome {frame.loc[bad, 'outcome'].iloc[0]!r} is not one of verify, edit, remove"
        )
    table = pd.DataFrame(
        {
            "unit": frame["mention_id"].astype(str).to_numpy(),
            "worker": frame["worker"].astype(str).to_numpy(),
            "annotation": frame["outcome"].astype(str).to_numpy(),
        }
    ).drop_duplicates(["unit", "worker"], keep="last")
    sizes = table.groupby("unit")["worker"].transform("size")
    return table.loc[sizes > 1].reset_index(drop=True)


def judgements_from_label_studio(
    tasks: Iterable[ls.Task] | str | os.PathLike[str],
    *,
    from_name: str = "relation",
    unit_field: str | None = None,
    source: str = "Label Studio export",
) -> pd.DataFrame:
    """A Label Studio JSON export of a ``<Choices>`` project as a CrowdTruth judgement table.

    ``tasks`` is the export (a list of tasks) or a path to its JSON file.  unit = ``data[unit_field]``
    (default: the task id); worker = the annotation's ``completed_by``; annotations = the choices of
    the control ``from_name``.  Cancelled (skipped) annotations and annotations without that control
    are left out.

    Examples:
        Task 7: user 3 chose ``treats`` and ``causes`` (two rows); user 4's cancelled annotation is left out.

        >>> from posthoc.crowdtruth.io import judgements_from_label_studio
        >>> choice = {"from_name": "relation", "type": "choices", "value": {"choices": ["treats", "causes"]}}
        >>> tasks = [{"id": 7, "data": {"sid": "s1"}, "annotations": [{"completed_by": 3, "result": [choice]},
        ...                                                          {"completed_by": 4, "was_cancelled": True}]}]
        >>> judgements_from_label_studio(tasks, unit_field="sid")
          unit worker annotation
        0   s1      3     treats
        1   s1      3     causes
    """
    if isinstance(tasks, (str, os.PathLike)):
        source = str(tasks)
        try:
            tasks = json.loads(Path(tasks).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # ValueError: bad JSON or not UTF-8
            raise PosthocInputError(f"{source}: not a readable Label Studio JSON export ({exc})") from exc
    if not isinstance(tasks, Sequence):
        raise PosthocInputError(f"{source}: expected a JSON list of tasks")
    rows: list[tuple[str, str, str]] = []
    for position, task in enumerate(tasks):
        if not isinstance(task, Mapping):
            raise PosthocInputError(f"{source}: task #{position} is not an object")
        data = ls.task_data(task)
        if unit_field is not None:
            if unit_field not in data:
                raise PosthocInputError(f"{source}: task {ls.record_id(task)} has no data field {unit_field!r}")
            unit = str(data[unit_field])
        else:
            unit = str(ls.record_id(task))
        for annotation in ls.task_annotations(task):
            if ls.was_cancelled(annotation):
                continue
            worker = ls.user_name(ls.completed_by(annotation))
            for region in ls.result_items(annotation):
                if ls.region_from_name(region) != from_name or ls.region_type(region) != "choices":
                    continue
                rows.extend((unit, worker, str(choice)) for choice in ls.region_choices(region))
    return pd.DataFrame(rows, columns=["unit", "worker", "annotation"])


#: The relations of the RelEx task (seed 002 section 3.2 / the CrowdTruth medical relation set), then other and none.
RELEX_RELATIONS = (
    "causes", "manifestation", "treats", "prevents", "symptom", "diagnose_by_test_or_drug", "location",
    "side_effect", "contraindicates", "associated_with", "is_a", "part_of", "other", "none",
)


def relation_extraction_task(
    unit_id: str, sentence: str, term1: tuple[int, int], term2: tuple[int, int]
) -> dict[str, Any]:
    """A task for ``label_configs/relation_extraction.xml``: the sentence as escaped HTML, both terms marked.

    ``term1`` / ``term2`` are ``(start, end)`` code-point offsets into ``sentence`` (``sentence[start:end]``);
    they must be inside the sentence and must not overlap.

    Examples:
        Both terms are marked in the escaped HTML, in the order they appear.

        >>> from posthoc.crowdtruth.io import relation_extraction_task
        >>> task = relation_extraction_task("u1", "Aspirin treats pain & fever.", (0, 7), (15, 19))
        >>> task["term1"], task["term2"]
        ('Aspirin', 'pain')
        >>> print(task["sentence_html"].replace("</mark>", "</mark>\\n"))
        <p><mark title="TERM 1"><b>Aspirin</b> <sup>TERM 1</sup></mark>
         treats <mark title="TERM 2"><b>pain</b> <sup>TERM 2</sup></mark>
         &amp; fever.</p>
    """
    spans = sorted([(int(term1[0]), int(term1[1]), "TERM 1"), (int(term2[0]), int(term2[1]), "TERM 2")])
    for start, end, name in spans:
        if not 0 <= start < end <= len(sentence):
            raise PosthocInputError(
                f"unit {unit_id}: {name} offsets ({start}, {end}) are outside the sentence ({len(sentence)} characters)"
            )
    if spans[0][1] > spans[1][0]:
        raise PosthocInputError(f"unit {unit_id}: the two terms overlap; give two separate spans")
    parts, cursor = [], 0
    for start, end, name in spans:
        parts.append(html.escape(sentence[cursor:start]))
        parts.append(f'<mark title="{name}"><b>{html.escape(sentence[start:end])}</b> <sup>{name}</sup></mark>')
        cursor = end
    parts.append(html.escape(sentence[cursor:]))
    return {
        "unit_id": str(unit_id),
        "sentence": sentence,
        "term1": sentence[term1[0]:term1[1]],
        "term2": sentence[term2[0]:term2[1]],
        "sentence_html": f"<p>{''.join(parts)}</p>",
    }


def multiple_choice_task(unit_id: str, text: str, question: str, options: Sequence[str]) -> dict[str, Any]:
    """A task for ``label_configs/multiple_choice.xml`` (the options become the task's dynamic choices).

    Examples:
        >>> from posthoc.crowdtruth.io import multiple_choice_task
        >>> multiple_choice_task("u1", "Paris is in France.", "Is this true?", ["yes", "no"])["options"]
        [{'value': 'yes'}, {'value': 'no'}]
    """
    if len(set(options)) != len(options) or not options:
        raise PosthocInputError(f"unit {unit_id}: give at least one option and no option twice")
    return {"unit_id": str(unit_id), "text": text, "question": question,
            "options": [{"value": str(option)} for option in options]}
