"""WNED XML (Guo & Barbosa) with its ``RawText/`` folder into a :class:`Corpus`.

Layout::

    wikipedia.xml     <wikipediaData.entityAnnotation>   (any root element name)
                        <document docName="Jiří_Třanovský">
                          <annotation><mention>Teschen</mention><wikiName>Teschen</wikiName>
                                      <offset>37</offset><length>7</length></annotation> ...
    RawText/<docName> the document text, UTF-8

``path`` is the XML file or the folder holding one XML file beside ``RawText/``. Every file in
``RawText/`` is a document (``doc_id`` = its name), annotated ones in XML order first, then the
rest by name; the text is the file's exact content (no newline translation, no unescaping).
``offset`` / ``length`` are code point offsets into that text (verified on all of WNED-Wiki).

Rules found in the real data (WNED-Wiki: 345 RawText files, 320 ``<document>`` elements, 6821
annotations, all read without error):

- the raw texts are partly HTML-escaped (``&amp;``, ``&nbsp;``, ``&ndash;`` beside bare ``&``) and
  the offsets count those escapes as they stand, while ``<mention>`` holds the unescaped form
  (``Benson & Hedges`` for ``Benson &amp; Hedges``, 12 mentions). The text is kept as it is; a
  mention matches when ``<mention>`` equals the span, or equals it after :func:`html.unescape`;
- a ``docName`` may occur in two ``<document>`` elements (``Jiří_Třanovský`` does; the second
  repeats 28 of the first's 29 annotations): both name the same RawText file, so they are one
  document and every annotation is kept as a row (6821 rows; 28 of them repeat another row
  exactly — deduplicate with ``mentions.drop_duplicates()`` if a use needs it);
- ``wikiName`` is a bare Wikipedia title; empty or ``NIL`` is NIL.
"""

from __future__ import annotations

import html
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd
from tqdm import tqdm

from posthoc.errors import PosthocInputError
from posthoc.readers.corpus import Corpus
from posthoc.readers.validate import CorpusBuilder

RAW_FOLDER = "RawText"


def _unescaped_equal(surface: str, found: str) -> bool:
    return html.unescape(found) == surface


def _xml_file(path: Path) -> Path:
    if path.is_file():
        return path
    candidates = sorted(path.glob("*.xml"))
    if len(candidates) != 1:
        raise PosthocInputError(
            f"{path}: a WNED folder must hold exactly one .xml file beside {RAW_FOLDER}/, it holds "
            f"{len(candidates)}; give the .xml file itself"
        )
    return candidates[0]


def _integer(value: str | None) -> object:
    if value is None:
        return None
    text = value.strip()
    return int(text) if text.lstrip("-").isdigit() else text


def read_wned(path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
              progress: bool = False) -> Corpus:
    """Read a WNED XML file and its ``RawText/`` folder (rules in the module docstring).

    Examples:
        ``Doc1``'s text counts ``&amp;`` as five code points, so ``Benson &amp; Hedges`` is ``[0, 19)`` and matches
        ``<mention>Benson &amp; Hedges</mention>`` (``Benson & Hedges`` once unescaped); ``Paris`` is ``[23, 28)``.
        ``NIL`` is NIL; ``Doc2``, not in the XML, is a document too.

        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers.wned import read_wned
        >>> def annotation(mention, link, offset, length):
        ...     return (f"<annotation><mention>{mention}</mention><wikiName>{link}</wikiName>"
        ...             f"<offset>{offset}</offset><length>{length}</length></annotation>")
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     Path(folder, "RawText").mkdir()
        ...     _ = Path(folder, "RawText", "Doc1").write_text("Benson &amp; Hedges in Paris", encoding="utf-8")
        ...     _ = Path(folder, "RawText", "Doc2").write_text("Nothing here", encoding="utf-8")
        ...     _ = Path(folder, "wiki.xml").write_text('<data><document docName="Doc1">' + annotation(
        ...         "Benson &amp; Hedges", "NIL", 0, 19) + annotation("Paris", "Paris", 23, 5) + "</document></data>",
        ...         encoding="utf-8")
        ...     corpus = read_wned(Path(folder), dataset="wned", system="GT")
        >>> corpus.documents["doc_id"].tolist()
        ['Doc1', 'Doc2']
        >>> corpus.mentions[["start", "end", "surface", "link", "is_nil"]]
           start  end              surface                                 link  is_nil
        0      0   19  Benson &amp; Hedges                                 nil:    True
        1     23   28                Paris  https://en.wikipedia.org/wiki/Paris   False
    """
    xml_path = _xml_file(path)
    raw_folder = xml_path.parent / RAW_FOLDER
    builder = CorpusBuilder(xml_path, dataset=dataset, system=system)
    if not raw_folder.is_dir():
        raise builder.fail(f"no {RAW_FOLDER}/ folder beside the XML file; WNED texts live in {raw_folder}")
    try:
        root = ElementTree.parse(xml_path).getroot()  # noqa: S314 - a local corpus file, no external entities
    except ElementTree.ParseError as error:
        raise builder.fail(f"not well-formed XML ({error}); fix the file") from None
    except LookupError as error:  # an XML declaration naming an encoding Python does not know
        raise builder.fail(f"the XML declaration names an unknown encoding ({error}); use UTF-8") from None
    elements = root.findall("document")
    if not elements and root.tag == "document":
        elements = [root]
    names: list[str] = []
    for element in elements:
        name = element.get("docName")
        if not name:
            raise builder.fail("a <document> has no docName attribute; give every document its RawText file name")
        if name not in names:
            names.append(name)
    names += sorted(p.name for p in raw_folder.iterdir() if p.is_file() and p.name not in set(names))
    for name in tqdm(names, desc=xml_path.name, unit="doc", disable=not progress):
        raw = raw_folder / name
        if not raw.is_file():
            raise builder.fail(f"no text file {raw}; add the RawText file or fix the docName", doc_id=name)
        builder.add_document(name, raw.read_bytes().decode("utf-8"), where=f"{RAW_FOLDER}/{name}")
    counters: dict[str, int] = {}
    for element in elements:
        name = str(element.get("docName"))
        for annotation in element.findall("annotation"):
            index = counters.get(name, 0)
            counters[name] = index + 1
            offset = _integer(annotation.findtext("offset"))
            length = _integer(annotation.findtext("length"))
            if not isinstance(offset, int) or not isinstance(length, int):
                raise builder.fail(
                    f"<offset> {offset!r} and <length> {length!r} must be integers; fix the annotation",
                    doc_id=name, where=f"annotation {index}",
                )
            link = annotation.findtext("wikiName")
            builder.add_mention(
                name, offset, offset + length, link.strip() if link is not None else None,
                surface=annotation.findtext("mention"), where=f"annotation {index}", surface_rule=_unescaped_equal,
            )
    return builder.build()
