"""``posthoc flags check`` end to end, and the pipeline on the shared real corpora (NIF and WNED)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from posthoc.cli.flags import check_command
from posthoc.cli.main import main
from posthoc.eaglet.pipeline import default_pipeline
from posthoc.eaglet.report import SHARE_RULES, rule_shares
from posthoc.eaglet.rules.positioning import edge_problem
from posthoc.eaglet.words import inside_word
from posthoc.readers import read_mentions


def test_check_writes_every_output(shared_data: Path, tmp_path: Path) -> None:
    kb = tmp_path / "kb.tsv"
    kb.write_text("People's Republic of China\tredirect\tChina\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(check_command, [str(shared_data / "eaglet" / "paper_examples.ttl"), "--out", str(out),
                                                "--kb-tsv", str(kb), "--format", "parquet",
                                                "--rules", "positioning,uri"])
    assert result.exit_code == 0, result.output
    flags = pd.read_parquet(out / "flags.parquet")
    assert sorted(flags["rule"]) == ["outdated_uri", "positioning"]
    shares = pd.read_csv(out / "rule_shares.csv")
    row = shares[shares["dataset"] == "paper_examples"].iloc[0]
    assert (row["documents"], row["annotations"]) == (2, 8)
    assert row["positioning"] == pytest.approx(1 / 8) and row["outdated_uri"] == pytest.approx(1 / 8)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Flags per rule as a share of annotations" in html and "12.5%" in html
    assert (out / "flags.nif.ttl").stat().st_size > 0 and (out / "checked.jsonl").is_file()


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["flags", "check", str(tmp_path / "absent.ttl"), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "absent.ttl" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_pipeline_on_the_shared_nif_and_wned_corpora(shared_data: Path) -> None:
    corpus = read_mentions(shared_data / "nif" / "Reuters-128.ttl").merge(
        read_mentions(shared_data / "nif" / "RSS-500.ttl")).merge(read_mentions(shared_data / "wned-wikipedia"))
    flags = default_pipeline(tagger="rules").run(corpus.documents, corpus.mentions)
    texts = {(d, i): t for d, i, t in corpus.documents.itertuples(index=False)}
    for row in flags.itertuples():
        text = texts[(row.dataset, row.doc_id)]
        assert text[row.start:row.end] == row.surface
        if row.rule == "positioning":
            assert inside_word(text, row.start) or inside_word(text, row.end) or edge_problem(row.surface)[0]
        if row.suggestion == "insert" and row.rule == "inconsistent_marking":
            assert not inside_word(text, row.start) and not inside_word(text, row.end)
    shares = rule_shares(flags, corpus.documents, corpus.mentions).set_index("dataset")
    assert shares.loc["Reuters-128", "documents"] == 128 and shares.loc["RSS-500", "documents"] == 500
    assert shares.loc["wned-wikipedia", "documents"] == 345
    assert ((shares[list(SHARE_RULES)] >= 0) & (shares[list(SHARE_RULES)] <= 1)).all().all()
    assert shares.loc["all", "annotations"] == sum(shares.loc[d, "annotations"] for d in
                                                   ("Reuters-128", "RSS-500", "wned-wikipedia"))


def test_other_systems_given_as_system_equals_path_vote_for_missing_entities(tmp_path: Path) -> None:
    from tests.eaglet.helpers import build_corpus

    from posthoc.writers import write_jsonl

    text = "Angela Merkel met Macron in Berlin."
    files = []
    for system, marks in (("GT", [("Berlin", "Berlin")]), ("A", [("Angela Merkel", "Angela_Merkel")]),
                          ("B", [("Angela Merkel", "Angela_Merkel"), ("Macron", "Emmanuel_Macron")])):
        path = tmp_path / f"{system}.jsonl"
        write_jsonl(build_corpus({"1": (text, marks)}, system=system), path, system=system)
        files.append(str(path) if system == "GT" else f"{system}={path}")
    out = tmp_path / "out"
    result = CliRunner().invoke(check_command, [*files, "--out", str(out), "--rules", "missing_entity"])
    assert result.exit_code == 0, result.output
    flags = pd.read_csv(out / "flags.csv", keep_default_na=False)
    assert flags[["surface", "rule", "suggestion", "link"]].values.tolist() == [
        ["Angela Merkel", "missing_entity", "insert", "https://en.wikipedia.org/wiki/Angela_Merkel"]]
    assert "2 of 2 systems: A, B" in flags["detail"].iloc[0]


def test_check_proposes_only_names_unless_common_words_is_given(tmp_path: Path) -> None:
    from tests.eaglet.helpers import build_corpus

    from posthoc.writers import write_jsonl

    corpus = build_corpus({"1": ("In 1986 his rivals met Reuter.", [("1986", "1986"), ("rivals", "Rivalry"),
                                                                    ("Reuter", "Reuter")]),
                           "2": ("By 1986 the rivals left Reuter.", [])})
    write_jsonl(corpus, tmp_path / "gt.jsonl", system="GT")
    proposed = {}
    for extra in ([], ["--common-words"]):
        out = tmp_path / f"out{len(extra)}"
        result = CliRunner().invoke(check_command, [str(tmp_path / "gt.jsonl"), "--out", str(out),
                                                    "--rules", "inconsistent_marking", *extra])
        assert result.exit_code == 0, result.output
        proposed[len(extra)] = sorted(pd.read_csv(out / "flags.csv", keep_default_na=False)["surface"].astype(str))
    assert proposed == {0: ["Reuter"], 1: ["1986", "Reuter", "rivals"]}

