"""`posthoc predict` on real GERBIL NIF data (../shared/data/nif, Reuters-128): the dictionary built from its
ground truth, and the NIF client against a Java-style (UTF-16) stand-in over the same documents."""

from __future__ import annotations

from pathlib import Path

from posthoc.links import title_of
from posthoc.predictors.nif import NIFLinker
from posthoc.readers import read_mentions
from predictors.conftest import run_posthoc
from predictors.standins import StandInNIF


def test_predict_over_reuters_128(shared_data: Path, tmp_path: Path) -> None:
    corpus_path = shared_data / "nif" / "Reuters-128.ttl"
    out = tmp_path / "dictionary.jsonl"
    assert run_posthoc(["predict", "--predictor", "dictionary", "--alias-file", str(corpus_path), str(corpus_path),
                        "--out", str(out), "--no-progress"]) == 0
    corpus = read_mentions(corpus_path)
    predicted = read_mentions(out)  # validates every offset and surface against the text
    assert len(predicted.documents) == len(corpus.documents) == 128
    assert set(predicted.documents["text"]) == set(corpus.documents["text"])
    assert len(predicted.mentions) > 300

    gt = corpus.system("GT")
    aliases = {str(s): str(title_of(str(link))).replace(" ", "_") for s, link, nil in
               gt[["surface", "link", "is_nil"]].itertuples(index=False) if not nil and title_of(str(link))}
    texts = list(corpus.documents["text"].astype(str))[:20]
    with StandInNIF(aliases, utf16=True).serve() as service:
        found = NIFLinker(service.url).link_texts(texts)
    assert sum(map(len, found)) > 20
    for text, mentions in zip(texts, found, strict=True):
        assert all(text[m.start:m.end] == m.surface for m in mentions)
