"""REL's output JSON (van Hulst et al., the system of paper 000) into a :class:`Corpus`.

REL returns, per document, a list of predictions ``[start, length, mention, entity, confidence,
ner_score, tag]`` (its API answer; ``start``/``length`` are Python ``str`` offsets, i.e. code
points). Accepted files:

- ``{"doc_id": [[start, length, mention, entity, confidence, ner_score, tag], ...], ...}``;
- the same with dict predictions ``{"start": .., "length": .., "mention": .., "entity": ..,
  "confidence": .., "ner_score": .., "tag": ..}`` (``end`` instead of ``length`` is accepted);
- a bare list of predictions (one API answer): it belongs to the only document of ``documents``,
  or to the document whose id is the file stem.

REL's output carries no text, so ``documents=`` (a documents table) is required; every document
id in the file must be in it. The corpus returned holds all documents of the dataset (a document
without predictions is one where the system found nothing). ``entity`` is a Wikipedia title with
underscores, ``NIL`` is NIL. ``confidence``, ``ner_score`` and ``tag`` are not part of the mentions
table and are not kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from posthoc.readers.corpus import Corpus
from posthoc.readers.validate import CorpusBuilder

_FIELDS = ("start", "length", "mention", "entity", "confidence", "ner_score", "tag")


def read_rel(path: Path, *, dataset: str, system: str, documents: pd.DataFrame | None = None,
             progress: bool = False) -> Corpus:
    """Read a REL output JSON file against ``documents`` (forms in the module docstring).

    Examples:
        REL's ``[start, length, mention, entity, ...]`` on the text of ``documents``: ``Bob`` starts at 8, length 3.

        >>> import json
        >>> import tempfile
        >>> from pathlib import Path
        >>> from posthoc.readers.corpus import documents_frame
        >>> from posthoc.readers.rel import read_rel
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = Path(folder.name) / "rel.json"
        >>> _ = path.write_text(json.dumps({"d1": [[8, 3, "Bob", "Bob_Marley", 0.9, 0.99, "PER"]]}), encoding="utf-8")
        >>> documents = documents_frame([("toy", "d1", "Ann met Bob.")])
        >>> corpus = read_rel(path, dataset="toy", system="REL", documents=documents)
        >>> corpus.mentions[["start", "end", "surface", "link"]]
           start  end surface                                    link
        0      8   11     Bob  https://en.wikipedia.org/wiki/Bob_Marley
        >>> folder.cleanup()
    """
    builder = CorpusBuilder(path, dataset=dataset, system=system)
    if documents is None:
        raise builder.fail("REL output has no document text; pass documents= (e.g. the ground truth's documents)")
    mine = documents[documents["dataset"] == dataset]
    if mine.empty:
        have = ", ".join(sorted(map(str, set(documents["dataset"])))) or "none"
        raise builder.fail(f"documents= has no document of dataset {dataset!r} (it has {have}); give dataset=")
    for doc_id, text in mine[["doc_id", "text"]].itertuples(index=False):
        builder.add_document(str(doc_id), str(text))
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except json.JSONDecodeError as error:
        reason = error.msg.removesuffix(" at")  # "Unterminated string starting at": not "at at line"
        raise builder.fail(f"not valid JSON ({reason} at line {error.lineno} column {error.colno}); "
                           "fix the file") from None
    if isinstance(data, list):
        ids = [str(i) for i in mine["doc_id"]]
        doc_id = ids[0] if len(ids) == 1 else path.stem
        if not builder.has_document(doc_id):
            raise builder.fail("a bare list of predictions names no document; write {doc_id: predictions} "
                               "or name the file after the document id")
        data = {doc_id: data}
    if not isinstance(data, dict):
        raise builder.fail("expected {doc_id: [predictions]} or a list of predictions")
    for doc_id, predictions in tqdm(data.items(), desc=path.name, unit="doc", disable=not progress):
        if not builder.has_document(doc_id):
            raise builder.fail(f"is not among the documents of dataset {dataset!r}; give the matching documents",
                               doc_id=doc_id)
        if not isinstance(predictions, list):
            raise builder.fail("the predictions must be a list", doc_id=doc_id)
        for index, prediction in enumerate(predictions):
            where = f"prediction {index}"
            record = _record(builder, doc_id, prediction, where)
            start, length, end = record.get("start"), record.get("length"), record.get("end")
            if end is None and isinstance(start, int) and isinstance(length, int):
                end = start + length
            mention = record.get("mention")
            entity = record.get("entity")
            if mention is not None and not isinstance(mention, str):
                raise builder.fail("the mention must be a string", doc_id=doc_id, where=where)
            if entity is not None and not isinstance(entity, str):
                raise builder.fail("the entity must be a string (a Wikipedia title) or NIL", doc_id=doc_id,
                                   where=where)
            builder.add_mention(doc_id, start, end, entity, surface=mention, where=where)
    return builder.build()


def _record(builder: CorpusBuilder, doc_id: str, prediction: object, where: str) -> dict[str, object]:
    if isinstance(prediction, list):
        if len(prediction) < 4:
            raise builder.fail("a prediction list needs at least [start, length, mention, entity]", doc_id=doc_id,
                               where=where)
        return dict(zip(_FIELDS, prediction, strict=False))
    if isinstance(prediction, dict):
        if "start" not in prediction or ("length" not in prediction and "end" not in prediction):
            raise builder.fail('a prediction object needs "start" and "length" (or "end")', doc_id=doc_id,
                               where=where)
        return dict(prediction)
    raise builder.fail("a prediction must be a list or an object", doc_id=doc_id, where=where)
