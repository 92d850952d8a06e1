"""The sequence-effects and CrowdTruth sections a scored study gets when its data allow them."""

from __future__ import annotations

import pandas as pd

from posthoc.crowdtruth.io import judgements_from_posthoc
from posthoc.crowdtruth.pipeline import run_crowdtruth
from posthoc.report.study_sections import crowdtruth_run, crowdtruth_section, sequence_effects_section, study_sections
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
