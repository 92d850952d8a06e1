"""Test helpers for the Eaglet tests: the paper's examples as a Corpus, and lenient JSON-LD parsing."""

from __future__ import annotations

import json
import re
from pathlib import Path

from posthoc.readers import Corpus, read_mentions

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
