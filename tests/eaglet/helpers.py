"""Test helpers for the Eaglet tests: the paper's examples as a Corpus, and lenient JSON-LD parsing."""

from __future__ import annotations

import json
import re
from pathlib import Path

from posthoc.links import normalise_link
from posthoc.readers import Corpus, read_mentions
from posthoc.readers.corpus import documents_frame, mentions_frame

#: Eaglet's error types (hasErrorType) -> our rule names.
EAGLET_RULES = {
    "CombinedTagging": "combined_marking",
    "Overlapping": "overlapping",
    "WrongPos": "positioning",
    "LongDesc": "long_description",
    "OutdatedUriErr": "outdated_uri",
    "DisambiguationUriErr": "disambiguation_uri",
    "InvalidUriErr": "invalid_uri",
    "InconsistentMarking": "inconsistent_marking",
    "MissingEntity": "missing_entity",
}


def read_examples(shared_data: Path) -> Corpus:
    """The two running examples of paper 003 (NIF), through the project's reader."""
    return read_mentions(shared_data / "eaglet" / "paper_examples.ttl", dataset="paper_examples")


def expected_checks(path: Path) -> set[tuple[str, str, int, int]]:
    """``(document, rule, start, end)`` of Eaglet's flags in an expected-checks JSON-LD file.

    Parsed leniently: an HTML-escaped quote (``& quot;``; example 1 has one where a closing quote
    should be) is turned back into ``"`` and a raw newline or other control character inside a
    string is replaced by a space before JSON parsing.
    """
    raw = re.sub(r"&\s?quot;", '"', path.read_text(encoding="utf-8"))
    cleaned = re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: re.sub(r"[\x00-\x1f]", " ", m.group()), raw, flags=re.S)
    data = json.loads(cleaned)
    found = set()
    for node in data["@graph"]:
        error = node.get("hasErrorType")
        if error:
            name = str(error).rsplit("#", 1)[-1]
            document = str(node["@id"]).split("#", 1)[0]
            found.add((document, EAGLET_RULES[name], int(node["beginIndex"]), int(node["endIndex"])))
    return found


Spec = dict[str, tuple[str, list[tuple[str, str | None]]]]


def build_corpus(docs: dict[str, tuple[str, list[tuple[object, ...]]]], *, dataset: str = "d",
                 system: str = "GT") -> Corpus:
    """``{doc_id: (text, [(surface, link) | (surface, link, occurrence) | (start, end, link)])}`` -> Corpus.

    A surface is found in the text (its ``occurrence``-th appearance, default the first), so the
    offsets are the text's own code point offsets.
    """
    rows = []
    for doc_id, (text, marks) in docs.items():
        for mark in marks:
            if isinstance(mark[0], int):
                start, end, link = mark  # type: ignore[misc]
            else:
                surface, link = str(mark[0]), mark[1]
                occurrence = int(mark[2]) if len(mark) > 2 else 0  # type: ignore[arg-type]
                start = -1
                for _ in range(occurrence + 1):
                    start = text.index(surface, start + 1)
                end = start + len(surface)
            norm = normalise_link(None if link is None else str(link))
            rows.append((dataset, doc_id, system, int(start), int(end), text[int(start):int(end)], norm.link,
                         norm.original, norm.is_nil))
    documents = documents_frame([(dataset, doc_id, text) for doc_id, (text, _) in docs.items()])
    return Corpus(documents, mentions_frame(rows))
