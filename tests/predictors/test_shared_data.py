"""`posthoc predict` on real data from ../shared/data: GERBIL's NIF Reuters-128 (the dictionary built from its
ground truth, and the NIF client against a Java-style (UTF-16) stand-in over the same documents), and all of
WNED-Wikipedia (12 of its 345 texts hold ``&amp;``) through the rel predictor against the REL stand-in that
rewrites ``&amp;`` as REL/server.py's read_json does, its aliases the gold mentions."""

from __future__ import annotations

from pathlib import Path

import pytest

from posthoc.links import title_of
from posthoc.predictors.nif import NIFLinker
from posthoc.readers import read_mentions
from predictors.conftest import run_posthoc
from predictors.standins import StandInNIF, StandInREL, find_aliases


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


@pytest.mark.slow  # waits on a dead service's retries or runs thousands of cases: not in the fast loop
def test_rel_predict_over_all_of_wned_wikipedia_amp_texts_included(shared_data: Path, tmp_path: Path) -> None:
    corpus_path = shared_data / "wned-wikipedia" / "wikipedia.xml"
    corpus = read_mentions(corpus_path)
    gt = corpus.system("GT")
    aliases = {str(s): str(title_of(str(link))).replace(" ", "_") for s, link, nil in
               gt[["surface", "link", "is_nil"]].itertuples(index=False) if not nil and title_of(str(link))}
    texts = dict(zip(corpus.documents["doc_id"].astype(str), corpus.documents["text"].astype(str), strict=True))
    assert len(texts) == 345 and sum("&amp;" in text for text in texts.values()) == 12
    out = tmp_path / "rel.jsonl"
    with StandInREL(aliases).serve() as service:
        code = run_posthoc(["predict", "--predictor", "rel", "--url", service.url, str(corpus_path), "--out",
                            str(out), "--no-progress"])
    assert code == 0
    predicted = read_mentions(out)  # validates every offset and surface against the text
    assert len(predicted.documents) == 345
    found: dict[str, list[tuple[int, int, str]]] = {doc: [] for doc in texts}
    for doc, start, end, surface in predicted.mentions[["doc_id", "start", "end", "surface"]].itertuples(index=False):
        found[str(doc)].append((int(start), int(end), str(surface)))
    assert {doc: sorted(spans) for doc, spans in found.items()} == {doc: _rel_expected(text, aliases)
                                                                       for doc, text in texts.items()}
    gold = {(str(d), int(s), int(e), str(x)) for d, s, e, x in gt[["doc_id", "start", "end", "surface"]]
            .itertuples(index=False)}
    amp_gold = {m for m in gold if "&amp;" in m[3]}
    written = {(doc, *span) for doc, spans in found.items() for span in spans}
    assert len(amp_gold) >= 12 and amp_gold <= written  # every gold mention holding &amp;, exact


def _rel_expected(text: str, aliases: dict[str, str]) -> list[tuple[int, int, str]]:
    """The stand-in's matches in REL's rewritten text, mapped back by a character-by-character walk."""
    rewritten, where = "", []  # where[i]: the offset in text of rewritten[i]
    i = 0
    while i < len(text):
        where.append(i)
        rewritten += text[i]
        i += 5 if text.startswith("&amp;", i) else 1
    where.append(len(text))
    table = {surface.replace("&amp;", "&"): title for surface, title in aliases.items()}
    return [(where[s], where[e - 1] + (5 if text.startswith("&amp;", where[e - 1]) else 1),
             text[where[s]:where[e - 1] + (5 if text.startswith("&amp;", where[e - 1]) else 1)])
            for s, e, _, _ in find_aliases(rewritten, table)]
