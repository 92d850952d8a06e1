"""Random judgement tables: ours equals the peer's ``Metrics.run``; invariances of the scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ct_helpers import max_abs_diff, peer_on_table, uas_from_counters
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posthoc.crowdtruth.metrics import crowdtruth_metrics
from posthoc.crowdtruth.vectors import build_vectors

ANNOTATIONS = ["a", "b", "c", "d"]


@st.composite
def judgement_tables(draw: st.DrawFn) -> pd.DataFrame:
    n_units = draw(st.integers(1, 5))
    n_workers = draw(st.integers(2, 6))
    rows: list[tuple[str, str, str]] = []
    for unit in range(n_units):
        workers = draw(st.lists(st.integers(0, n_workers - 1), min_size=2, max_size=n_workers, unique=True))
        for worker in workers:
            chosen = draw(st.lists(st.sampled_from(ANNOTATIONS), min_size=1, max_size=3, unique=True))
            rows.extend((f"u{unit}", f"w{worker}", a) for a in chosen)
    return pd.DataFrame(rows, columns=["unit", "worker", "annotation"])


@pytest.mark.parametrize("open_ended", [False, True], ids=["closed", "open"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=judgement_tables())
def test_random_tables_match_the_peer(table: pd.DataFrame, open_ended: bool) -> None:
    vector = None if open_ended else ANNOTATIONS
    result = crowdtruth_metrics(build_vectors(table, annotation_vector=vector, open_ended=open_ended))
    peer = peer_on_table(table, open_ended=open_ended, vector=vector)
    assert max_abs_diff(result.units.set_index("unit")["uqs"], peer["units"]["uqs"]) < 1e-9
    workers = result.workers.set_index("worker")
    for ours_column, peer_column in (("wqs", "wqs"), ("wwa", "wwa"), ("wua", "wsa"), ("wqs_initial", "wqs_initial")):
        assert max_abs_diff(workers[ours_column], peer["workers"][peer_column]) < 1e-9
    got = result.unit_annotations.set_index(["unit", "annotation"])["uas"]
    assert max_abs_diff(got, uas_from_counters(peer["units"]["unit_annotation_score"])) < 1e-9
    if not open_ended:
        assert max_abs_diff(result.annotations.set_index("annotation")["aqs"], peer["annotations"]["aqs"]) < 1e-9


@settings(max_examples=25, deadline=None)
@given(table=judgement_tables(), seed=st.integers(0, 2**32 - 1))
def test_scores_do_not_depend_on_row_order_or_names(table: pd.DataFrame, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shuffled = table.iloc[rng.permutation(len(table))].copy()
    shuffled["worker"] = "x-" + shuffled["worker"]
    first = crowdtruth_metrics(build_vectors(table, annotation_vector=ANNOTATIONS, open_ended=False))
    second = crowdtruth_metrics(build_vectors(shuffled, annotation_vector=ANNOTATIONS, open_ended=False))
    a = first.workers.set_index("worker")["wqs"]
    b = second.workers.set_index("worker")["wqs"]
    b.index = b.index.str.removeprefix("x-")
    assert max_abs_diff(a, b) < 1e-12
    for frame in (first.units["uqs"], first.workers["wqs"], first.annotations["aqs"], first.unit_annotations["uas"]):
        assert ((frame >= -1e-12) & (frame <= 1 + 1e-12)).all()
