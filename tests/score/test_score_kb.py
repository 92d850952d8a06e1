"""``posthoc score --kb``: strict_kb beside strict (issue 42; paper 000 section 5). Equal to strict when no link is
a redirect; more true positives by exactly the redirect-only disagreements when some are; never instead of strict."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from posthoc.errors import PosthocInputError
from posthoc.jobs.score import ScoreOptions, with_kb_entities
from posthoc.links import title_of
from posthoc.metrics.inputs import mention_rows
from posthoc.metrics.preannotation import counts_of_rows, preannotation_scores
from posthoc.metrics.strict_categories import error_categories
from posthoc.readers.wiki_index_build import build_index

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
from kb_dumps import PAGE_COLUMNS, PROPS_COLUMNS, REDIRECT_COLUMNS, dump_text, sql_string


def _sample_mentions() -> pd.DataFrame:
    from posthoc.study.plan.config import read_study_inputs, sample_study_config

    return read_study_inputs(sample_study_config(name="sample", seed=5, k=3))[1]


def _write_index(folder: Path, articles: list[str], redirects: dict[str, str]) -> Path:
    """A KB index from dumps holding ``articles`` and ``redirects`` (title -> target), all in namespace 0."""
    titles = [*articles, *redirects]
    pages = [f"({i},0,{sql_string(t)},{int(t in redirects)},0,0.5,'20261120000000',NULL,1,1,'wikitext',NULL)"
             for i, t in enumerate(titles, start=1)]
    rds = [f"({titles.index(t) + 1},0,{sql_string(target)},'','')" for t, target in redirects.items()]
    for name, columns, rows in (("page", PAGE_COLUMNS, pages), ("redirect", REDIRECT_COLUMNS, rds),
                                ("page_props", PROPS_COLUMNS, ["(1,'defaultsort','x',NULL)"])):
        (folder / f"enwiki-20261201-{name}.sql").write_text(dump_text(name, columns, [rows]), encoding="utf-8")
    out = folder / "kb.sqlite"
    build_index(**{t: folder / f"enwiki-20261201-{t}.sql" for t in ("page", "redirect", "page_props")}, out=out)
    return out


def _titles(links: pd.Series) -> list[str]:
    return sorted({t.replace(" ", "_") for t in (title_of(link) for link in links.astype(str)) if t})


def test_strict_kb_equals_strict_when_no_link_is_a_redirect(tmp_path: Path) -> None:
    mentions = _sample_mentions()
    index = _write_index(tmp_path, _titles(mentions["link"]), {})
    scores = preannotation_scores(with_kb_entities(mentions, index))
    strict = scores[scores["matching"] == "strict"].drop(columns="matching").reset_index(drop=True)
    kb = scores[scores["matching"] == "strict_kb"].drop(columns="matching").reset_index(drop=True)
    assert len(strict) > 0
    pd.testing.assert_frame_equal(strict, kb)
    assert set(scores["matching"]) == {"strict", "overlap", "strict_kb"}  # beside, never instead


def test_strict_kb_moves_by_exactly_the_redirect_only_disagreements(tmp_path: Path) -> None:
    mentions = _sample_mentions()
    rows = mention_rows(mentions)
    gt = rows[rows["system"] == "GT"]
    systems = rows[rows["system"] != "GT"]
    key = ["dataset", "doc_id", "start", "end", "link"]
    matched = systems.merge(gt[key], on=key)  # strict true positives
    rng = np.random.default_rng(3)
    chosen = matched.iloc[rng.choice(len(matched), size=min(12, len(matched)), replace=False)]
    renamed = {link: f"{title_of(link).replace(' ', '_')}_(old_name)" for link in chosen["link"].unique()}
    changed = mentions.copy()
    wanted = changed.set_index(["dataset", "doc_id", "system", "start", "end", "link"]).index.isin(
        chosen.set_index(["dataset", "doc_id", "system", "start", "end", "link"]).index)
    changed.loc[wanted, "link"] = ["https://en.wikipedia.org/wiki/" + renamed[link]
                                   for link in changed.loc[wanted, "link"]]
    redirects = {new: title_of(old).replace(" ", "_") for old, new in renamed.items()}
    index = _write_index(tmp_path, _titles(mentions["link"]), redirects)
    before = counts_of_rows(mention_rows(mentions), gt_system="GT", matching=["strict"])
    after = counts_of_rows(mention_rows(with_kb_entities(changed, index)), gt_system="GT")
    strict_after = after[after["matching"] == "strict"].reset_index(drop=True)
    kb_after = after[after["matching"] == "strict_kb"].reset_index(drop=True)
    moved = int(wanted.sum())
    assert moved >= 5
    assert before["tp_system"].sum() - strict_after["tp_system"].sum() == moved  # strict counts them wrong now
    assert kb_after["tp_system"].sum() == before["tp_system"].sum()  # strict_kb still right: exactly the moved ones
    assert (kb_after["n_system"] == strict_after["n_system"]).all() and (kb_after["n_gt"] == strict_after["n_gt"]).all()
    # the error categories count exactly those as their own kind of disambiguation error, on both sides
    categories = error_categories(with_kb_entities(changed, index), gt_system="GT")
    redirect_only = categories[categories["kind"] == "redirect_only"]
    assert (redirect_only["category"] == "disambiguation_wrong").all()
    sides = redirect_only["side"].value_counts()
    assert sides["system"] == moved and sides["ground_truth"] == moved
    plain = error_categories(changed, gt_system="GT")  # no index: no such kind, the same categories otherwise
    assert "redirect_only" not in set(plain["kind"])
    assert plain["category"].tolist() == categories["category"].tolist()


def test_a_missing_index_is_bad_input() -> None:
    with pytest.raises(PosthocInputError, match="no such KB index"):
        ScoreOptions(kb_index="/nonexistent/kb.sqlite")


def test_the_fingerprint_names_the_index_only_when_given(tmp_path: Path) -> None:
    index = _write_index(tmp_path, ["Paris"], {})
    assert "kb_index" not in ScoreOptions().fingerprinted()
    chosen: dict[str, Any] = ScoreOptions(kb_index=str(index)).fingerprinted()
    assert chosen["kb_index"].startswith("kb.sqlite:")


def test_the_score_job_with_kb_writes_strict_kb_beside_strict(tmp_path: Path) -> None:
    from posthoc.export.synthetic import write_synthetic_export
    from posthoc.jobs.score import JudgementSource, run_score_job
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.paths import label_config
    from posthoc.study.plan.config import read_study_inputs, sample_study_config
    from posthoc.study.plan.design import plan_study
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.manifest import Manifest

    config = sample_study_config(name="sample", seed=5, k=1)
    documents, mentions = read_study_inputs(config)
    manifest = Manifest.create(tmp_path / "sample.manifest", plan_study(documents, mentions, config))
    texts = dict(zip(manifest.tasks()["task_key"], manifest.tasks()["text"], strict=True))
    export = write_synthetic_export(tmp_path / "export.json", ManifestIndex.from_manifest(manifest),
                                    verification_tags(label_config("entity_verification")), texts=texts, seed=1)
    index = _write_index(tmp_path, _titles(mentions["link"]), {})
    outputs = {}
    for name, kb in (("plain", None), ("kb", str(index))):
        result = run_score_job(manifest_path=tmp_path / "sample.manifest", out_dir=tmp_path / name,
                               source=JudgementSource(export_files=[export.path]),
                               options=ScoreOptions(n_resamples=20, kb_index=kb))
        assert result.status == "updated"
        outputs[name] = pd.read_csv(tmp_path / name / "tables" / "preannotation.csv")
    plain, with_kb = outputs["plain"], outputs["kb"]
    assert "strict_kb" not in set(plain["matching"]) and "strict_kb" in set(with_kb["matching"])
    pd.testing.assert_frame_equal(plain, with_kb[with_kb["matching"] != "strict_kb"].reset_index(drop=True))
    kb_rows = with_kb[with_kb["matching"] == "strict_kb"].drop(columns="matching").reset_index(drop=True)
    strict_rows = with_kb[with_kb["matching"] == "strict"].drop(columns="matching").reset_index(drop=True)
    pd.testing.assert_frame_equal(kb_rows[["precision", "recall", "f1"]], strict_rows[["precision", "recall", "f1"]])
    assert "strict_kb" in (tmp_path / "kb" / "report.html").read_text(encoding="utf-8")
