"""`posthoc predict`: every built-in predictor writes a mentions file that reads back with every surface
equal to text[start:end] (astral text); defaults; resuming after a stop; one-line errors naming the document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posthoc.readers import read_mentions
from posthoc.sample import sample_paths
from predictors.conftest import ALIASES, TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS, run_posthoc, write_corpus
from predictors.standins import StandInNIF, StandInREL


def _aliases_csv(path: Path) -> Path:
    lines = ["surface,link"] + [f'"{surface}",{title}' for surface, title in ALIASES.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _stored_output(path: Path) -> Path:
    """A system's stored output on the astral corpus (as some linker wrote it)."""
    lines = [{"id": "d1", "dataset": "astral", "system": "old-linker", "text": TEXT,
              "mentions": [{"start": s, "end": e, "link": ALIASES[surface]} for s, e, surface in TEXT_MENTIONS]},
             {"id": "d2", "dataset": "astral", "system": "old-linker", "text": TEXT2, "mentions": []}]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def _check_output(out: Path, *, system: str) -> dict[str, list[tuple[int, int, str]]]:
    corpus = read_mentions(out)  # the project's own reader validates offsets and surfaces
    assert corpus.systems == [system]
    texts = dict(zip(corpus.documents["doc_id"], corpus.documents["text"], strict=True))
    spans: dict[str, list[tuple[int, int, str]]] = {doc: [] for doc in texts}
    for doc, start, end, surface in corpus.mentions[["doc_id", "start", "end", "surface"]].itertuples(index=False):
        assert texts[doc][start:end] == surface
        spans[doc].append((int(start), int(end), str(surface)))
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert all(record["text"][m["start"]:m["end"]] == m["surface"] for m in record["mentions"])
    return spans


@pytest.mark.parametrize("predictor", ["dictionary", "rel", "nif", "spacy", "manifest"])
def test_each_built_in_predictor_writes_a_mentions_file(predictor: str, astral_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / f"{predictor}.jsonl"
    args = ["predict", "--predictor", predictor, str(astral_corpus), "--out", str(out)]  # defaults otherwise
    with StandInREL(ALIASES).serve() as rel, StandInNIF(ALIASES, utf16=True).serve() as nif:
        if predictor == "dictionary":
            args += ["--alias-file", str(_aliases_csv(tmp_path / "aliases.csv"))]
        elif predictor in ("rel", "nif"):
            args += ["--url", rel.url if predictor == "rel" else nif.url]
        elif predictor == "spacy":
            pytest.importorskip("spacy", reason="spaCy is the optional `spacy` extra")
            from predictors.spacy_pipeline import save_pipeline

            args += ["--spacy-model", str(save_pipeline(tmp_path / "pipeline"))]
        else:
            args += ["--source", str(_stored_output(tmp_path / "old.jsonl"))]
        assert run_posthoc(args) == 0
    spans = _check_output(out, system=predictor)
    assert spans["d1"] == TEXT_MENTIONS
    assert spans["d2"] == ([] if predictor == "manifest" else TEXT2_MENTIONS)
    assert spans["d3"] == [] and spans["d4"] == []
    assert not out.with_name(out.name + ".partial").exists()


def test_defaults_on_the_bundled_sample_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dictionary.jsonl"
    gt = str(sample_paths()["GT"])
    assert run_posthoc(["predict", "--predictor", "dictionary", "--alias-file", gt, gt, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "20 documents predicted by dictionary" in err and "predict (dictionary)" in err  # the progress bar
    spans = _check_output(out, system="dictionary")
    assert len(spans) == 20 and sum(map(len, spans.values())) > 100
    before = out.read_bytes()
    assert run_posthoc(["predict", "--predictor", "dictionary", "--alias-file", gt, gt, "--out", str(out)]) == 0
    assert "nothing to do" in capsys.readouterr().err and out.read_bytes() == before


def test_a_stopped_run_resumes_where_it_stopped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", [("d1", TEXT), ("d2", TEXT2), ("d3", "POISON " + TEXT),
                                                  ("d4", TEXT2 + " again")])
    out = tmp_path / "rel.jsonl"
    partial = out.with_name("rel.jsonl.partial")
    with StandInREL(ALIASES, poison="POISON").serve() as service:
        args = ["predict", "--predictor", "rel", "--url", service.url, str(corpus), "--out", str(out),
                "--no-progress", "--batch-size", "1"]
        assert run_posthoc(args) == 3
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "document 'd3' of dataset 'astral'" in err[0] and "not JSON" in err[0]
        assert not out.exists() and [json.loads(x)["id"] for x in partial.read_text().splitlines()] == ["d1", "d2"]
        service.poison = None
        service.texts.clear()
        assert run_posthoc(args) == 0
        assert service.texts == ["POISON " + TEXT, TEXT2 + " again"]  # d1 and d2 were not asked again
    resumed = out.read_bytes()
    fresh = tmp_path / "fresh.jsonl"
    with StandInREL(ALIASES).serve() as service:
        assert run_posthoc(["predict", "--predictor", "rel", "--url", service.url, str(corpus), "--out", str(fresh),
                            "--no-progress"]) == 0
    assert resumed == fresh.read_bytes()  # resuming gives the file one run gives
    assert not partial.exists()


def test_a_line_cut_off_by_a_kill_is_redone(tmp_path: Path, astral_corpus: Path) -> None:
    out = tmp_path / "rel.jsonl"
    with StandInREL(ALIASES).serve() as service:
        args = ["predict", "--predictor", "rel", "--url", service.url, str(astral_corpus), "--out", str(out),
                "--no-progress"]
        assert run_posthoc(args) == 0
        complete = out.read_text(encoding="utf-8")
        first, second = complete.splitlines(keepends=True)[:2]
        out.unlink()
        out.with_name("rel.jsonl.partial").write_text(first + second[: len(second) // 2], encoding="utf-8")
        assert run_posthoc(args) == 0
    assert out.read_text(encoding="utf-8") == complete


@pytest.mark.parametrize(("extra", "message"), [
    (["--predictor", "rel"], "needs --url"),
    (["--predictor", "nif", "--url", "ftp://x"], "needs --url http"),
    (["--predictor", "spacy"], "needs --spacy-model"),
    (["--predictor", "dictionary"], "needs --alias-file"),
    (["--predictor", "manifest"], "needs --source"),
    (["--predictor", "nonsense"], "not a built-in"),
    (["--predictor", "no_such_pkg_q:Model"], "cannot import no_such_pkg_q"),
], ids=["rel without --url", "nif with an ftp url", "spacy without a model", "dictionary without aliases",
        "manifest without a source", "unknown name", "unknown module"])
def test_bad_options_are_one_line_and_exit_2(extra: list[str], message: str, astral_corpus: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.jsonl"
    assert run_posthoc(["predict", *extra, str(astral_corpus), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not out.exists()


def test_an_out_file_of_another_system_is_refused(astral_corpus: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.jsonl"
    aliases = str(_aliases_csv(tmp_path / "aliases.csv"))
    assert run_posthoc(["predict", "--predictor", "dictionary", "--alias-file", aliases, str(astral_corpus),
                        "--out", str(out), "--no-progress"]) == 0
    before = out.read_bytes()
    assert run_posthoc(["predict", "--predictor", "dictionary", "--alias-file", aliases, str(astral_corpus),
                        "--out", str(out), "--system", "other", "--no-progress"]) == 2
    assert "is for system 'dictionary', not 'other'" in capsys.readouterr().err
    assert out.read_bytes() == before


def test_rel_error_in_a_200_and_an_unreadable_nif_answer_stop_with_one_line(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", [("d1", TEXT2), ("d2", "😀 Angela Merkel visited Paris.")])
    with StandInREL(ALIASES, mode="error").serve() as rel:
        assert run_posthoc(["predict", "--predictor", "rel", "--url", rel.url, str(corpus), "--out",
                            str(tmp_path / "rel.jsonl"), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "document 'd1'" in err[0] and "'HTTP/1.0 400 Bad Request'" in err[0]
    with StandInNIF(ALIASES, utf16=True, anchors=False, mode="wrong-offsets").serve() as nif:
        assert run_posthoc(["predict", "--predictor", "nif", "--url", nif.url, str(corpus), "--out",
                            str(tmp_path / "nif.jsonl"), "--no-progress", "--batch-size", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "document 'd1'" in err[0] and "give --nif-offsets codepoints or utf16" in err[0]
