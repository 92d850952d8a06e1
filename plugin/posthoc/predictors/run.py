"""``posthoc predict``'s job: run a predictor over a corpus into one system's mentions file (JSONL).

The output is the project's JSONL (:mod:`posthoc.readers.jsonl`): one line a document, ``{"id", "dataset",
"system", "text", "mentions": [{"start", "end", "surface", "link", "score"?}]}``, code point offsets with
``surface == text[start:end]``, canonical links (an anonymous NIL is ``null``), in corpus order; it is one
more system for ``posthoc study plan`` (an ``[[inputs]]`` table with its ``system``), judged blind like
the others.

A linker with ``link_stream`` (the spaCy one) is given the whole stream of texts at once, so it runs one
``nlp.pipe`` over the corpus instead of one a batch; lines are still written as each result comes and
flushed every ``batch_size`` documents.

Resumable: lines go to ``<out>.partial`` as each batch of documents is done (flushed); a run that stops
(Ctrl-C, a service down) leaves that file, and the next run with the same ``--out`` skips every document
already in it (or in ``<out>``), then renames it over ``<out>`` (fsync first) when the corpus is done. So
``<out>`` itself is always complete. A document already written must have the corpus's text and system.

A service answering nonsense, failing, or a text that makes the predictor fail stops the run with one
line naming the document (:class:`~posthoc.errors.PosthocServiceError`, or
:class:`~posthoc.errors.PosthocInputError` for bad input); the documents done stay in the partial file.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from tqdm import tqdm

from posthoc.atomic import folder_kept_if_written
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.labelstudio.label_config import region_tags
from posthoc.predictors.base import PredictedMention, PredictModel, TextLinker, call_model, mentions_of_prediction
from posthoc.readers.corpus import Corpus
from posthoc.writers import json_line

Linker = Callable[[Sequence[str]], list[list[PredictedMention]]]
#: texts in, one mention list a text out, lazily and in order (``SpacyLinker.link_stream``)
Stream = Callable[[Iterable[str]], Iterator[list[PredictedMention]]]
Document = tuple[str, str, str]


@dataclass(frozen=True)
class PredictSummary:
    """What a run did: documents in the corpus, predicted now, skipped (already written), mentions written now."""

    out: Path
    documents: int
    predicted: int
    skipped: int
    mentions: int
    seconds: float


def model_linker(model: PredictModel, label_config: str, *, name: str) -> Linker:
    """A label-studio-ml-style model as a function texts -> mentions (its predictions read back)."""
    tags = region_tags(label_config)

    def link(texts: Sequence[str]) -> list[list[PredictedMention]]:
        tasks = [{"id": number, "data": {tags.text_key: text}} for number, text in enumerate(texts)]
        predictions = call_model(model, tasks, name=name)
        return [mentions_of_prediction(p, t, name=name, tags=tags) for p, t in zip(predictions, texts, strict=True)]

    return link


def text_linker(linker: TextLinker) -> Linker:
    """A :class:`TextLinker` as a function texts -> mentions."""
    return lambda texts: linker.link_texts(texts)


def _line(dataset: str, doc_id: str, system: str, text: str, mentions: list[PredictedMention]) -> str:
    rows: list[dict[str, object]] = []
    for item in mentions:
        row: dict[str, object] = {"start": item.start, "end": item.end, "surface": item.surface,
                                  "link": None if item.link == "nil:" else item.link}
        if item.score is not None:
            row["score"] = item.score
        rows.append(row)
    return json_line({"id": doc_id, "dataset": dataset, "system": system, "text": text, "mentions": rows})


def _written(path: Path, *, system: str, texts: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """Documents already in ``path`` (complete lines only), checked against the corpus: key -> line."""
    done: dict[tuple[str, str], str] = {}
    if not path.exists():
        return done
    data = path.read_text(encoding="utf-8")
    for number, line in enumerate(data.split("\n")[:-1] if not data.endswith("\n") else data.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["dataset"]), str(record["id"]))
        except (ValueError, KeyError, TypeError):
            raise PosthocInputError(f"{path}: line {number} is not a line this command writes; remove the file or "
                                    "choose another --out") from None
        if record.get("system") != system:
            raise PosthocInputError(f"{path}: line {number} is for system {record.get('system')!r}, not {system!r}; "
                                    "choose another --out, or the same --system")
        if key in texts and texts[key] != record.get("text"):
            raise PosthocInputError(f"{path}: document {key[1]!r} of dataset {key[0]!r} was written with another "
                                    "text than the corpus has; remove the file or choose another --out")
        done[key] = line + "\n"
    return done


def predict_corpus(corpus: Corpus, linker: Linker, out: str | os.PathLike[str], *, system: str, name: str,
                   batch_size: int = 8, progress: bool = True, stream: Stream | None = None) -> PredictSummary:
    """Run ``linker`` over every document of ``corpus`` into ``out`` (see the module docstring)."""
    if batch_size < 1:
        raise PosthocInputError("--batch-size must be at least 1")
    out = Path(out)
    if out.is_dir():
        raise PosthocInputError(f"--out {out} is a folder; give a file path for the mentions file (JSONL)")
    partial = out.with_name(out.name + ".partial")
    started = time.perf_counter()
    documents = [(str(d), str(i), str(t)) for d, i, t in
                 corpus.documents[["dataset", "doc_id", "text"]].itertuples(index=False)]
    texts = {(d, i): t for d, i, t in documents}
    finished = _written(out, system=system, texts=texts)
    if finished and not partial.exists() and all((d, i) in finished for d, i, _ in documents):
        return PredictSummary(out, len(documents), 0, len(documents), 0, time.perf_counter() - started)
    if not partial.exists() and finished:
        partial.write_text("".join(finished.values()), encoding="utf-8")
    done = _written(partial, system=system, texts=texts)
    if partial.exists():
        with partial.open("r+", encoding="utf-8") as handle:  # drop a line cut off when the last run stopped
            data = handle.read()
            if data and not data.endswith("\n"):
                handle.seek(0)
                handle.truncate(len(data[:data.rfind("\n") + 1].encode("utf-8")))
    todo = [doc for doc in documents if (doc[0], doc[1]) not in done]
    written = 0
    kept = len(done)
    with folder_kept_if_written(out.parent):  # an unreachable linker leaves no empty folder
        try:
            with partial.open("a", encoding="utf-8") as handle, \
                    tqdm(total=len(documents), initial=len(documents) - len(todo), desc=f"predict ({name})", unit="doc",
                         disable=not progress) as bar:
                results = _link_stream(stream, todo, name=name) if stream is not None else \
                    _link_batches(linker, todo, batch_size=batch_size, name=name)
                shown = 0
                for number, ((dataset, doc_id, text), mentions) in enumerate(results, 1):
                    handle.write(_line(dataset, doc_id, system, text, mentions))
                    written += len(mentions)
                    kept += 1
                    if number % batch_size == 0 or number == len(todo):
                        handle.flush()
                        bar.update(number - shown)
                        shown = number
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            if kept == 0:  # nothing done: leave no file behind
                partial.unlink(missing_ok=True)
            raise
    os.replace(partial, out)
    return PredictSummary(out, len(documents), len(todo), len(documents) - len(todo), written,
                          time.perf_counter() - started)


def _link_batches(linker: Linker, todo: list[Document], *, batch_size: int,
                  name: str) -> Iterator[tuple[Document, list[PredictedMention]]]:
    """Each document with its mentions, the linker called once a batch."""
    for first in range(0, len(todo), batch_size):
        batch = todo[first:first + batch_size]
        yield from zip(batch, _link_batch(linker, batch, name=name), strict=True)


def _link_stream(stream: Stream, todo: list[Document], *,
                 name: str) -> Iterator[tuple[Document, list[PredictedMention]]]:
    """Each document with its mentions, the whole stream of texts given to the linker at once."""
    results = stream(text for _, _, text in todo)
    for doc in todo:
        try:
            found = next(results)
        except (PosthocServiceError, PosthocInputError) as exc:
            _fail(doc, name, exc)
        except StopIteration:
            raise PosthocServiceError(f"predict ({name}): the predictor gave fewer results than texts") from None
        yield doc, found


def _link_batch(linker: Linker, batch: list[Document], *, name: str) -> list[list[PredictedMention]]:
    """The batch's mentions; on a failure, the documents one by one so the error names the one at fault."""
    try:
        return linker([text for _, _, text in batch])
    except (PosthocServiceError, PosthocInputError) as exc:
        if len(batch) == 1:
            _fail(batch[0], name, exc)
    results = []
    for doc in batch:
        try:
            results.extend(linker([doc[2]]))
        except (PosthocServiceError, PosthocInputError) as exc:
            _fail(doc, name, exc)
    return results


def _fail(doc: Document, name: str, exc: Exception) -> NoReturn:
    where = f"document {doc[1]!r} of dataset {doc[0]!r}"
    message = " ".join(str(exc).split())
    if isinstance(exc, PosthocInputError):
        raise PosthocInputError(f"predict ({name}), {where}: {message}") from None
    raise PosthocServiceError(f"predict ({name}), {where}: {message}; the documents before it are kept, run the "
                              "same command again to go on") from None
