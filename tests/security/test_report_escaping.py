"""Every report the project writes, fed hostile strings through each user-controlled field, is safe HTML.

Fields: study and dataset names, document ids, worker ids, surface forms, links and new links (study
report, seed 000); units, workers and annotations (CrowdTruth, seed 002); Eaglet flags (seed 003);
the sequence-effects section (seed 004); the report.html of ``posthoc crowdtruth`` / ``posthoc sequence``
(file names too). Each test also checks that the hostile strings did reach the page, escaped.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from posthoc.html import page
from security.htmlcheck import HOSTILE, assert_safe_html, shown

DATASETS = {"SYN-A": HOSTILE[0], "SYN-B": HOSTILE[1]}


def _hostile_study() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A synthetic study (k = 2) whose dataset names, document ids, workers, surfaces and links are hostile."""
    from posthoc.synthetic import synthetic_study

    documents, mentions, judgements = synthetic_study(n_docs=3, k=2, seed=7, study=HOSTILE[0])
    links = sorted(set(mentions["link"]))
    hostile_link = {link: f"{HOSTILE[3 + i % 10]}#{i}" for i, link in enumerate(links)}

    def rename(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.copy()
        frame["dataset"] = frame["dataset"].map(DATASETS)
        frame["doc_id"] = HOSTILE[2] + frame["doc_id"]
        if "link" in frame:
            frame["link"] = frame["link"].map(lambda link: hostile_link.get(link, HOSTILE[4] + link))
        if "surface" in frame:
            frame["surface"] = HOSTILE[11]
        return frame

    documents, mentions, judgements = rename(documents), rename(mentions), rename(judgements)
    mentions["link_original"] = mentions["link"]
    judgements["worker"] = HOSTILE[12] + judgements["worker"]
    edited = judgements["outcome"] == "edit"
    judgements["new_link"] = judgements["new_link"].astype(object).where(~edited, HOSTILE[8])
    return documents, mentions, judgements


@pytest.fixture(scope="module")
def hostile_study() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return _hostile_study()


def test_study_report_escapes_every_field(hostile_study: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]) -> None:
    from posthoc.jobs.study_sections import study_sections
    from posthoc.metrics import ScoringOptions, score_judgements
    from posthoc.report.study_report import build_report

    _, mentions, judgements = hostile_study
    assert (judgements["outcome"] == "edit").any()
    scores = score_judgements(judgements, mentions, options=ScoringOptions(n_resamples=20, seed=1, study=HOSTILE[0]))
    extra = study_sections(judgements)
    assert {section.anchor for section in extra} == {"sequence", "crowdtruth"}  # seed 004 and 002 sections ran
    document = build_report(scores, extra_sections=extra)
    assert_safe_html(document)
    assert f"<title>Posthoc verification report: {shown(HOSTILE[0])}</title>" in document
    for value in (HOSTILE[0], HOSTILE[1], HOSTILE[8], HOSTILE[11]):  # datasets, new_link, surfaces
        assert shown(value) in document, value
    assert shown(HOSTILE[12] + "w0000") in document  # worker ids (controls, CrowdTruth workers)
    assert shown(HOSTILE[3]) in document  # a hostile link, in a table, not a link


def test_eaglet_flags_report_escapes_every_field(
        hostile_study: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]) -> None:
    from posthoc.eaglet.pipeline import run_pipeline
    from posthoc.eaglet.report import flags_section
    from posthoc.readers.corpus import Corpus

    documents, mentions, _ = hostile_study
    flags = run_pipeline(Corpus(documents, mentions))
    assert {"missing_entity", "invalid_uri"} <= set(flags["rule"])
    document = page(HOSTILE[0], [flags_section(flags, documents, mentions)])
    assert_safe_html(document)
    for value in (HOSTILE[0], HOSTILE[1], HOSTILE[2], HOSTILE[11]):  # dataset, doc id, surface
        assert shown(value) in document, value


def test_crowdtruth_report_escapes_units_workers_and_annotations() -> None:
    from posthoc.crowdtruth.pipeline import run_crowdtruth

    units = [f"{HOSTILE[0]}{i}" for i in range(6)]
    workers = [f"{HOSTILE[1]}{i}" for i in range(5)]
    answers = [HOSTILE[3], HOSTILE[8], HOSTILE[9]]
    rows = [(unit, worker, answers[u % 3] if w < 4 or u % 2 else answers[(u + 1) % 3])
            for u, unit in enumerate(units) for w, worker in enumerate(workers)]
    judgements = pd.DataFrame(rows, columns=["unit", "worker", "annotation"])
    reference = pd.Series([u % 3 == 0 for u in range(6)], index=units)
    run = run_crowdtruth(judgements, reference=reference, positive_annotation=HOSTILE[3], worker_threshold=0.5,
                         title=HOSTILE[2])
    document = page(HOSTILE[1], [run.section])
    assert_safe_html(document)
    for value in (units[0], workers[0], HOSTILE[3], HOSTILE[8], HOSTILE[2]):
        assert shown(value) in document, value


def test_sequence_section_escapes_its_caveat_and_audit() -> None:
    from posthoc.sequence import audit_orders, lag1_by_subset, lag1_by_tertile
    from posthoc.sequence.report import sequence_section
    from posthoc.sequence.simulate import simulate_binary

    table = simulate_binary(6, 40, b1=0.5, seed=3)
    table["worker"] = HOSTILE[1] + table["worker"]
    table["sequence"] = table["worker"]
    table["item"] = HOSTILE[0] + table["item"]
    section = sequence_section(lag1_by_subset(table), lag1_by_tertile(table), audit=audit_orders(table),
                               caveat=HOSTILE[0])
    document = page(HOSTILE[2], [section])
    assert_safe_html(document)
    assert shown(HOSTILE[0]) in document


def _cli(*args: str) -> None:
    from posthoc.cli.main import cli

    run = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert run.exit_code == 0, run.output


def test_cli_report_files_are_safe_html(tmp_path: Path) -> None:
    from posthoc.sequence.simulate import simulate_binary

    # file names on Linux may hold < > " ' and spaces; they go into the report title
    name = "\"><img src=x onerror=alert(1)><script>alert(1)<"
    judgements = tmp_path / f"{name}.csv"
    rows = [(f"{HOSTILE[0]}u{u}", f"{HOSTILE[1]}w{w}", HOSTILE[3] if (u + w) % 3 else HOSTILE[8])
            for u in range(5) for w in range(4)]
    pd.DataFrame(rows, columns=["unit", "worker", "annotation"]).to_csv(judgements, index=False)
    _cli("crowdtruth", str(judgements), "--layout", "table", "--out", str(tmp_path / "ct"))
    sequence = tmp_path / f"{name}-sequence.csv"
    table = simulate_binary(5, 30, seed=2)
    table["worker"] = HOSTILE[1] + table["worker"]
    table.drop(columns="sequence").to_csv(sequence, index=False)
    _cli("sequence", str(sequence), "--out", str(tmp_path / "seq"), "--gold-col", "gold")
    for out in ("ct", "seq"):
        document = (tmp_path / out / "report.html").read_text(encoding="utf-8")
        assert_safe_html(document)
        assert shown(name) in document.split("</title>")[0]
    assert shown(HOSTILE[0] + "u0") in (tmp_path / "ct" / "report.html").read_text(encoding="utf-8")
