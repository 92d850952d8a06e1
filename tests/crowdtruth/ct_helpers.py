"""Shared helpers for the CrowdTruth tests: the tutorial inputs' configurations, ours and the peer's.

The configurations are those of the CrowdTruth-core tutorials (inferred from the input columns
and the published outputs; the RTE one is the notebook's ``TestConfig``).  The peer is the PyPI
package ``crowdtruth`` 2.1, run inside the tests (never on the RTE input: ~50 s).
"""

from __future__ import annotations

import functools
import logging
import string
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from posthoc.crowdtruth.io import CrowdTruthConfig, read_crowdtruth_csv
from posthoc.crowdtruth.metrics import CrowdTruthResult, crowdtruth_metrics
from posthoc.crowdtruth.vectors import build_vectors

RELATIONS = (
    "employee_or_member_of", "top_member_employee_of_org", "schools_attended", "founded_org", "origin",
    "alternate_names", "place_of_birth", "place_of_death", "subsidiaries", "places_of_residence",
    "place_of_headquarters", "spouse", "children", "title", "cause_of_death", "charges", "none",
)
RELEX_INPUTS = ("term1", "b1", "e1", "term2", "b2", "e2", "sent_id", "sentence")
EVENT_INPUTS = ("doc_id", "sentence_id", "events", "original_sentence")

#: case -> (input file, our config, reference output prefix or None)
CASES: dict[str, tuple[str, CrowdTruthConfig, str | None]] = {
    "relex-binary": (
        "relex-binary-choice.csv",
        CrowdTruthConfig(input_columns=RELEX_INPUTS, output_columns=("top_member_employee",), open_ended=False,
                         annotation_vector=("true", "false"), lowercase=True),
        "binary-relex",
    ),
    "relex-multiple": (
        "relex-multiple-choice.csv",
        CrowdTruthConfig(input_columns=RELEX_INPUTS, output_columns=("relations",), open_ended=False,
                         annotation_vector=RELATIONS, lowercase=True, annotation_separator="\n"),
        "multchoice-relex",
    ),
    "relex-sparse-multiple": (
        "relex-sparse-multiple-choice.csv",
        CrowdTruthConfig(input_columns=(*RELEX_INPUTS, "input_relations"), output_columns=("output_relations",),
                         open_ended=False, annotation_vector=RELATIONS, lowercase=True, annotation_separator="\n"),
        "sparsemultchoice-relex",
    ),
    "event-highlight": (
        "event-text-highlight.csv",
        CrowdTruthConfig(input_columns=EVENT_INPUTS, output_columns=("tagged_events",), open_ended=True,
                         remove_chars='[]"'),
        None,
    ),
    "event-sparse-multiple": (
        "event-text-sparse-multiple-choice.csv",
        CrowdTruthConfig(input_columns=EVENT_INPUTS, output_columns=("selected_events",), open_ended=True,
                         remove_chars='[]"'),
        None,
    ),
}

RTE_CONFIG = CrowdTruthConfig(
    input_columns=("gold", "task", "text", "hypothesis"),
    output_columns=("response",),
    custom_platform_columns=("!amt_annotation_ids", "orig_id", "!amt_worker_ids", "start", "end"),
    open_ended=False,
    annotation_vector=("0", "1"),
    lowercase=True,
)


def fixture_config(*, open_ended: bool) -> CrowdTruthConfig:
    """CrowdTruth-core's ``TestConfigClosed`` / ``TestConfigOpen`` for the unit fixtures."""
    return CrowdTruthConfig(input_columns=("in_col",), output_columns=("out_col",), open_ended=open_ended,
                            annotation_vector=tuple(string.ascii_uppercase), annotation_separator=" ")


def ours(path: Path, config: CrowdTruthConfig) -> CrowdTruthResult:
    data = read_crowdtruth_csv(path, config)
    vectors = build_vectors(data.judgements, annotation_vector=data.annotation_vector, open_ended=data.open_ended)
    return crowdtruth_metrics(vectors)


def peer_config(config: CrowdTruthConfig) -> Any:
    """The peer's ``DefaultConfig`` subclass equivalent to ``config``."""
    from crowdtruth.configuration import DefaultConfig

    lowercase, remove = config.lowercase, config.remove_chars

    class PeerConfig(DefaultConfig):
        inputColumns = list(config.input_columns)  # noqa: RUF012
        outputColumns = list(config.output_columns)  # noqa: RUF012
        customPlatformColumns = list(config.custom_platform_columns)  # noqa: RUF012
        open_ended_task = config.open_ended
        annotation_vector = list(config.annotation_vector)  # noqa: RUF012
        annotation_separator = config.annotation_separator

        def processJudgments(self, judgments: pd.DataFrame) -> pd.DataFrame:
            for col in self.outputColumns:
                values = judgments[col].apply(str)
                if lowercase:
                    values = values.str.lower()
                for char in remove:
                    values = values.str.replace(char, "", regex=False)
                judgments[col] = values
            return judgments

    return PeerConfig()


@functools.cache
def peer_run(path: str, case: str, open_ended: bool | None = None) -> dict[str, pd.DataFrame]:
    """The peer's results on a file (cached per session)."""
    import crowdtruth

    config = fixture_config(open_ended=bool(open_ended)) if case == "fixture" else CASES[case][1]
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data, peer_cfg = crowdtruth.load(file=path, config=peer_config(config))
            return dict(crowdtruth.run(data, peer_cfg))
    finally:
        logging.disable(logging.NOTSET)


def peer_on_table(table: pd.DataFrame, *, open_ended: bool, vector: list[str] | None) -> dict[str, pd.DataFrame]:
    """Run the peer's ``Metrics.run`` directly on a judgement table (no CSV, no date parsing)."""
    from crowdtruth.models.metrics import Metrics

    col = "output.answer"
    vectors: dict[tuple[str, str], Counter[str]] = {}
    for unit, worker, annotation in zip(table["unit"], table["worker"], table["annotation"], strict=True):
        vectors.setdefault((unit, worker), Counter())[annotation] += 1
    keys = sorted(vectors)
    judgments = pd.DataFrame({"unit": [k[0] for k in keys], "worker": [k[1] for k in keys]})
    judgments[col] = [vectors[k] for k in keys]
    if not open_ended and vector:
        judgments[col] = [Counter({**{a: 0 for a in vector}, **c}) for c in judgments[col]]
    sums: dict[Any, Counter[str]] = {}
    for unit, vec in zip(judgments["unit"], judgments[col], strict=True):
        sums[unit] = sums.get(unit, Counter()) + vec
    if not open_ended and vector:
        for unit in sums:
            for a in vector:
                sums[unit].setdefault(a, 0)
    units = pd.DataFrame({col: pd.Series(sums)})
    workers = pd.DataFrame(index=sorted(set(judgments["worker"])))
    annotations = pd.DataFrame(index=vector or sorted(set(table["annotation"])))

    class Cfg:
        output = {"answer": col}  # noqa: RUF012
        open_ended_task = open_ended

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(Metrics.run({"judgments": judgments, "units": units, "workers": workers,
                                 "annotations": annotations}, Cfg()))


def max_abs_diff(ours_values: pd.Series, reference: pd.Series) -> float:
    """Largest absolute difference; the two must cover the same index."""
    ours_values = ours_values.copy()
    reference = reference.copy()
    ours_values.index = ours_values.index.map(str)
    reference.index = reference.index.map(str)
    assert set(ours_values.index) == set(reference.index)
    expected = reference.reindex(ours_values.index).to_numpy(dtype=float)
    return float(np.max(np.abs(ours_values.to_numpy(dtype=float) - expected)))


def uas_from_counters(counters: pd.Series) -> pd.Series:
    """The peer's per-unit ``Counter`` of unit-annotation scores as a ``(unit, annotation)`` Series."""
    records = {
        (str(unit), str(ann)): float(value) for unit, counter in counters.items() for ann, value in counter.items()
    }
    return pd.Series(records)
