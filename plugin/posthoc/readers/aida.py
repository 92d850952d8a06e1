"""AIDA-CoNLL TSV (the AIDA-YAGO2 layout) into a :class:`Corpus`, rebuilding text and offsets.

Layout (tab-separated, UTF-8)::

    -DOCSTART- (1 EU)
    EU	B	EU	--NME--
    rejects
    German	B	German	Germany	http://en.wikipedia.org/wiki/Germany	11867	/m/0345h
    call
    ...
                                  <- a blank line ends a sentence
    Peter	B	Peter Blackburn	--NME--
    Blackburn	I	Peter Blackburn	--NME--

- ``-DOCSTART-`` starts a document; its id is the text in parentheses (``1 EU``), else what follows
  the marker, else ``doc-<n>`` (1-based); ids must be unique;
- a token line is the token, then optionally ``B``/``I`` (begins / continues a mention), the full
  mention, the YAGO2 entity or ``--NME--`` (NIL), the Wikipedia URL, the Wikipedia numeric id and the
  Freebase id; the link is the URL when given, else the YAGO2 name (its ``\\uXXXX`` escapes decoded),
  ``--NME--`` is NIL;
- **text rule**: the tokens of a sentence are joined with one space, sentences with ``\\n``; the
  document text has no leading or trailing whitespace; offsets are code points into that text;
- the full-mention column, when present, must equal the mention's tokens joined with spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from posthoc.readers.corpus import Corpus
from posthoc.readers.validate import CorpusBuilder

DOCSTART = "-DOCSTART-"
_PAREN = re.compile(r"\((.*)\)\s*$")
_YAGO_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


@dataclass
class _Mention:
    start: int
    end: int
    surface: str | None
    link: str | None
    line: int


@dataclass
class _Document:
    doc_id: str
    line: int
    sentences: list[list[str]] = field(default_factory=lambda: [[]])
    mentions: list[_Mention] = field(default_factory=list)
    length: int = 0  # code points of the text so far

    def add_token(self, token: str) -> tuple[int, int]:
        sentence = self.sentences[-1]
        if sentence:
            self.length += 1  # the space before the token
        elif len(self.sentences) > 1:
            self.length += 1  # the newline before the sentence
        start = self.length
        sentence.append(token)
        self.length += len(token)
        return start, self.length

    def end_sentence(self) -> None:
        if self.sentences[-1]:
            self.sentences.append([])

    def text(self) -> str:
        return "\n".join(" ".join(tokens) for tokens in self.sentences if tokens)


def _doc_id(line: str, ordinal: int) -> str:
    rest = line[len(DOCSTART):].strip()
    match = _PAREN.search(rest)
    if match and match.group(1).strip():
        return match.group(1).strip()
    return rest or f"doc-{ordinal}"


def _link(columns: list[str]) -> str | None:
    if len(columns) >= 5 and columns[4].strip():
        return columns[4].strip()
    if len(columns) >= 4:
        entity = columns[3].strip()
        if not entity:
            return None
        return _YAGO_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), entity)
    return None


def read_aida(path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
              progress: bool = False) -> Corpus:
    """Read an AIDA-CoNLL TSV file (layout and text rule in the module docstring).

    Examples:
        Tokens joined with one space give the text ``Ann met Bob .``; ``Bob`` is the mention at 8-11 and its YAGO2
        name is the link.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers.aida import read_aida
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "toy.tsv"
        >>> lines = ["-DOCSTART- (1 toy)", "Ann", "met", "\\t".join(["Bob", "B", "Bob", "Bob_Marley"]), "."]
        >>> _ = path.write_text("\\n".join(lines) + "\\n", encoding="utf-8")
        >>> corpus = read_aida(path, dataset="toy", system="GT")
        >>> corpus.documents.loc[0, "doc_id"], corpus.documents.loc[0, "text"]
        ('1 toy', 'Ann met Bob .')
        >>> corpus.mentions[["start", "end", "surface", "link"]]
           start  end surface                                    link
        0      8   11     Bob  https://en.wikipedia.org/wiki/Bob_Marley
        >>> folder.cleanup()
    """
    builder = CorpusBuilder(path, dataset=dataset, system=system)
    parsed: list[_Document] = []
    current: _Document | None = None
    open_mention: _Mention | None = None
    content = path.read_bytes().decode("utf-8").lstrip("\ufeff")
    for number, raw in enumerate(content.split("\n"), start=1):
        line = raw.rstrip("\r")
        if line.startswith(DOCSTART):
            current = _Document(_doc_id(line, len(parsed) + 1), number)
            parsed.append(current)
            open_mention = None
            continue
        if not line.strip():
            if current is not None:
                current.end_sentence()
            open_mention = None
            continue
        if current is None:
            raise builder.fail(f"a token before the first {DOCSTART} line; start the file with a {DOCSTART} line",
                               where=f"line {number}")
        columns = line.split("\t")
        token = columns[0]
        if not token or token != token.strip() or any(c.isspace() for c in token):
            raise builder.fail(f"the token {token!r} is empty or holds whitespace; give one token a line",
                               doc_id=current.doc_id, where=f"line {number}")
        start, end = current.add_token(token)
        tag = columns[1].strip() if len(columns) > 1 else ""
        if tag == "B":
            surface = columns[2] if len(columns) > 2 and columns[2] else None
            open_mention = _Mention(start, end, surface, _link(columns), number)
            current.mentions.append(open_mention)
        elif tag == "I":
            if open_mention is None:
                raise builder.fail("an I tag that does not continue a B mention in the same sentence; "
                                   "start the mention with B", doc_id=current.doc_id, where=f"line {number}")
            open_mention.end = end
        elif tag in {"", "O"}:
            open_mention = None
        else:
            raise builder.fail(f"unknown tag {tag!r}; the second column is B, I or empty",
                               doc_id=current.doc_id, where=f"line {number}")
    for document in tqdm(parsed, desc=path.name, unit="doc", disable=not progress):
        builder.add_document(document.doc_id, document.text(), where=f"line {document.line}")
        for mention in document.mentions:
            builder.add_mention(document.doc_id, mention.start, mention.end, mention.link, surface=mention.surface,
                                where=f"mention on line {mention.line}")
    return builder.build()
