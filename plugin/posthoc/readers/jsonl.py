"""The project's own JSONL format: the reader (the writer is :func:`posthoc.writers.write_jsonl`).

One JSON object per line (blank lines are skipped), UTF-8::

    {"id": "doc-1", "text": "Zoë flew to 東京.", "dataset": "sample-news", "system": "GT",
     "mentions": [{"start": 0, "end": 3, "surface": "Zoë", "link": null},
                  {"start": 12, "end": 14, "surface": "東京", "link": "https://en.wikipedia.org/wiki/Tokyo"}]}

- ``id`` (string, required): the document id, unique per dataset and system within a file;
- ``text`` (string): the document text; may be left out only when ``documents=`` is given to
  :func:`~posthoc.readers.read_mentions` (then it is taken from there, and when present must equal it);
- ``dataset`` (string, optional): default the ``dataset`` argument, else the file stem;
- ``system`` (string, optional): default the ``system`` argument (``GT`` unless told);
- ``mentions`` (list, optional): ``start`` / ``end`` are Unicode code point offsets (Python ``str``
  indices, end exclusive), ``surface`` is optional and checked against ``text[start:end]`` when
  present, ``link`` is any form :func:`posthoc.links.normalise_link` knows, ``null`` for NIL.

Other keys are ignored. A file may hold several systems' mentions for the same document (one line
per document and system); the text must then be identical.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from posthoc.readers.corpus import Corpus
from posthoc.readers.validate import CorpusBuilder


def read_jsonl(path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
               progress: bool = False) -> Corpus:
    """Read a JSONL mentions file (format in the module docstring) into a :class:`Corpus`.

    Examples:
        Usually called through :func:`posthoc.readers.read_mentions`; ``dataset`` and ``system`` are the defaults of
        lines that do not name theirs.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers.jsonl import read_jsonl
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "out.jsonl"
        >>> _ = path.write_text('{"id": "d1", "text": "Ann met Bob.", "system": "REL", '
        ...                     '"mentions": [{"start": 8, "end": 11, "link": "Bob_Marley"}]}', encoding="utf-8")
        >>> corpus = read_jsonl(path, dataset="toy", system="GT")
        >>> corpus.mentions[["dataset", "system", "surface", "link"]]
          dataset system surface                                    link
        0     toy    REL     Bob  https://en.wikipedia.org/wiki/Bob_Marley
        >>> folder.cleanup()
    """
    builder = CorpusBuilder(path, dataset=dataset, system=system)
    known = _known_texts(documents)
    seen: set[tuple[str, str, str]] = set()
    # split on "\n" only: str.splitlines would also split inside strings at U+2028, U+0085, ...
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(tqdm(lines, desc=path.name, unit="doc", disable=not progress), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            reason = error.msg.removesuffix(" at")  # "Unterminated string starting at": not "at at column"
            raise builder.fail(f"not valid JSON ({reason} at column {error.colno}); fix the line",
                               where=where) from None
        if not isinstance(record, dict):
            raise builder.fail("each line must be a JSON object with id, text and mentions", where=where)
        doc_id = record.get("id")
        if not isinstance(doc_id, str) or not doc_id:
            raise builder.fail('the object has no string "id"; give every document a non-empty string id', where=where)
        doc_dataset = _string_field(builder, record, "dataset", dataset, doc_id, where)
        doc_system = _string_field(builder, record, "system", system, doc_id, where)
        text = record.get("text")
        given = known.get((doc_dataset, doc_id))
        if text is None and given is None:
            raise builder.fail('the object has no "text" (and no documents= were given); add the text', doc_id=doc_id,
                               where=where)
        if text is not None and not isinstance(text, str):
            raise builder.fail('"text" must be a string', doc_id=doc_id, where=where)
        if text is not None and given is not None and text != given:
            raise builder.fail("the text differs from the text of this document in documents=; use the same text",
                               doc_id=doc_id, where=where)
        text = text if text is not None else given
        assert text is not None
        key = (doc_dataset, doc_system, doc_id)
        if key in seen:
            raise builder.fail(f"duplicate document id for system {doc_system!r}; every document id must appear once "
                               "per system", doc_id=doc_id, where=where)
        seen.add(key)
        if builder.has_document(doc_id, dataset=doc_dataset):
            if builder.text_of(doc_id, dataset=doc_dataset) != text:
                raise builder.fail("the same document appears with a different text; use one text per document",
                                   doc_id=doc_id, where=where)
        else:
            builder.add_document(doc_id, text, dataset=doc_dataset, where=where)
        mentions = record.get("mentions")
        mentions = [] if mentions is None else mentions
        if not isinstance(mentions, list):
            raise builder.fail('"mentions" must be a list of objects', doc_id=doc_id, where=where)
        for index, mention in enumerate(mentions):
            place = f"{where}, mention {index}"
            if not isinstance(mention, dict) or "start" not in mention or "end" not in mention:
                raise builder.fail('a mention must be an object with "start" and "end"', doc_id=doc_id, where=place)
            surface = mention.get("surface")
            if surface is not None and not isinstance(surface, str):
                raise builder.fail('"surface" must be a string', doc_id=doc_id, where=place)
            link = mention.get("link")
            if link is not None and not isinstance(link, str):
                raise builder.fail('"link" must be a string or null', doc_id=doc_id, where=place)
            builder.add_mention(doc_id, mention["start"], mention["end"], link, surface=surface, where=place,
                                system=doc_system, dataset=doc_dataset)
    return builder.build()


def _string_field(builder: CorpusBuilder, record: dict[str, object], name: str, default: str, doc_id: str,
                  where: str) -> str:
    value = record.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str) or not value:
        raise builder.fail(f'"{name}" must be a non-empty string', doc_id=doc_id, where=where)
    return value


def _known_texts(documents: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    if documents is None:
        return {}
    return {(str(d), str(i)): str(t) for d, i, t in documents[["dataset", "doc_id", "text"]].itertuples(index=False)}
