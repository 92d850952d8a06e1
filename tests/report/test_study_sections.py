"""The sequence-effects and CrowdTruth sections a scored study gets when its data allow them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posthoc.crowdtruth.io import judgements_from_posthoc
from posthoc.crowdtruth.pipeline import run_crowdtruth
from posthoc.jobs.study_sections import crowdtruth_run, crowdtruth_section, sequence_effects_section, study_sections
from posthoc.sequence import lag1_by_subset, lag1_by_tertile, sequence_table_from_judgements
from posthoc.sequence.report import sequence_section
from posthoc.synthetic import synthetic_study


def _with_per_judge_ids(judgements: pd.DataFrame) -> pd.DataFrame:
    """As the manifest makes them: every judge's copy of an annotation has its own mention_id."""
    return judgements.assign(mention_id=[f"m{i:07d}" for i in range(len(judgements))])


def test_k1_study_gets_the_sequence_section_only() -> None:
    _, _, judgements = synthetic_study(20, k=1, seed=2)
    sections = study_sections(judgements)
    assert [s.title for s in sections] == ["Sequence effects"]
    assert "Order audit" in sections[0].body_html and "data:image/png;base64," in sections[0].body_html


def test_k3_study_gets_crowdtruth_on_annotations_not_on_per_judge_ids() -> None:
    _, _, judgements = synthetic_study(20, k=3, seed=3)
    per_judge = _with_per_judge_ids(judgements)
    section = crowdtruth_section(per_judge)
    assert section is not None and "CrowdTruth" in section.title
    run = crowdtruth_run(per_judge)
    # the same scores as CrowdTruth run directly on the synthetic ids, which are one per shared annotation
    direct = run_crowdtruth(judgements_from_posthoc(judgements), annotation_vector=("verify", "edit", "remove"))
    ours = sorted(run.result.units["uqs"].round(12))
    theirs = sorted(direct.result.units["uqs"].round(12))
    assert len(ours) == judgements.loc[~judgements["is_control"], "mention_id"].nunique() and ours == theirs
    assert sequence_effects_section(per_judge) is not None


def test_too_little_data_gives_no_sections() -> None:
    _, _, judgements = synthetic_study(20, k=1, seed=4)
    one_worker = judgements[judgements["worker"] == judgements["worker"].iloc[0]]
    assert study_sections(one_worker.iloc[0:0]) == []
    assert sequence_effects_section(one_worker) is None


def test_sequence_section_defines_its_subsets_and_leaves_out_the_excluded_workers() -> None:
    _, _, judgements = synthetic_study(30, k=1, seed=5, failing_worker_share=0.3)
    from posthoc.metrics.controls import control_results

    controls = control_results(judgements)
    excluded = sorted(controls.loc[controls["excluded"], "worker"])
    assert excluded  # the synthetic click-through workers fail their control task
    section = sequence_effects_section(judgements, exclude_workers=excluded)
    assert section is not None
    body = section.body_html
    assert "Items are tasks" in body and "moderate, without workers whose every task had the same outcome" in body
    assert "good, workers whose task outcome matched the gold" in body
    assert f"Left out, as in the main metrics: {len(excluded)} worker(s)" in body
    table = sequence_table_from_judgements(judgements, exclude_workers=excluded)
    assert f"Workers: all {table['worker'].nunique()}," in body
    kept = judgements.loc[~judgements["worker"].isin(excluded) & ~judgements["is_control"]]
    assert table["worker"].nunique() == kept["worker"].nunique()
    # the counts named for each label are those its table fits (issue 29: "good 3, bad 1" above a share table
    # whose good row had 1 worker): the share label's subsets follow paper 004 section 3.2
    from posthoc.sequence.lag_model import worker_subsets

    shares = sequence_table_from_judgements(judgements, exclude_workers=excluded, label="verify_share")
    share_subsets = worker_subsets(shares)
    assert f"above 0.5: good {len(share_subsets['good'])}, bad {len(share_subsets['bad'])}." in body
    fitted = lag1_by_subset(shares).set_index("subset")["n_workers"]
    for name in ("good", "bad"):
        if len(share_subsets[name]) >= 2:
            assert fitted[name] == len(share_subsets[name])


def test_sequence_section_notes_separation() -> None:
    rows = []
    gold = np.random.default_rng(1).random((4, 16))
    for worker in range(4):
        for position in range(12 + worker):  # alternating labels: the previous one predicts each perfectly
            rows.append((f"w{worker}", f"w{worker}", f"i{position}", position, float((position + worker) % 2),
                         gold[worker, position]))
    table = pd.DataFrame(rows, columns=["worker", "sequence", "item", "position", "label", "gold"])
    by_subset, by_tertile = lag1_by_subset(table), lag1_by_tertile(table)
    assert by_subset["note"].str.contains("separation|not converge").any()
    html = sequence_section(by_subset, by_tertile).body_html
    assert "Separation in all" in html and "not estimable" in html
    from posthoc.sequence.report import shown_fits

    shown = shown_fits(by_subset)
    separated = by_subset["note"].str.contains("separation|not converge")
    assert shown.loc[separated, "b1"].isna().all() and shown.loc[separated, "b1_p"].isna().all()
    assert shown.loc[separated, "note"].str.startswith("not estimable: ").all()
    assert by_subset.loc[separated, "b1"].notna().all()  # the tables written to disk keep the numbers
    for value in by_subset.loc[separated, "b1"]:
        assert f"{value:.3f}" not in html and f"{value:.4g}" not in html


def test_sequence_section_shows_the_randomisation_test_of_both_labels() -> None:
    """The study-level test (issue 45): one row a task label, the p-value the test gives on the same table."""
    from posthoc.sequence.randomisation import order_randomisation_test

    _, _, judgements = synthetic_study(20, k=1, seed=2)
    section = sequence_effects_section(judgements)
    assert section is not None
    body = section.body_html
    assert "Study-level test of order effects (randomisation)" in body
    assert body.index("Study-level test of order effects") < body.index("data:image/png;base64,")
    for label in ("all_verified", "verify_share"):
        test = order_randomisation_test(sequence_table_from_judgements(judgements, label=label))
        assert 0 < test.p_value <= 1 and test.n_permutations == 999
        assert f"<td class=\"l\">{label}</td><td>{test.statistic:.4g}</td><td>{test.p_value:.4g}</td>" in body
