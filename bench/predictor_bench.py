"""Benchmark: predictions per second through the backend's live mode, for dictionary, spacy and the stand-in REL.

Workload: the chunk texts of the bundled sample study (the texts Label Studio sends), repeated to
``--tasks`` tasks without a study key, sent to ``/predict`` in batches of ``--batch`` tasks (the Data
Manager's "retrieve predictions" sends a project's tasks in one request) by one client, against
``posthoc backend serve``'s production setup (gunicorn, ``--workers`` workers, the predictor chosen
through the environment as ``--predictor`` does).

Predictors: ``dictionary`` (an alias table of the sample ground truth), ``spacy`` (real spaCy:
``spacy.blank("xx")`` with an entity ruler holding the same aliases as patterns with ids, saved and loaded
with ``spacy.load``) and ``rel`` (the tests' stand-in REL server, tests/predictors/standins.py, on loopback:
it links by the same alias table, so the figure is the client's and the backend's cost, not REL's).

Baseline: the same predictor called directly in this process on the same texts (``link_texts``), which is
what the backend cannot beat; the ratio through-backend / direct is the backend's overhead (HTTP, JSON,
building and validating Label Studio regions). Both sides are timed by :func:`benchlib.time_both`, and the
bench checks both give the same regions before it prints a ratio.

Usage: ``python bench/predictor_bench.py [--tasks 400] [--batch 100] [--workers 2] [--runs 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
from benchlib import BenchRun, time_both
from predict_bench import start_gunicorn


def workload(count: int) -> tuple[list[str], dict[str, str]]:
    """``count`` chunk texts of the sample study (repeated) and the ground truth's alias -> title table."""
    from posthoc.links import title_of
    from posthoc.sample import sample_corpus
    from posthoc.study.plan.config import sample_study_config
    from posthoc.study.plan.design import plan_study

    corpus = sample_corpus()
    plan = plan_study(corpus.documents, corpus.mentions, sample_study_config(name="bench"))
    texts = list(dict.fromkeys(plan.chunks["text"].astype(str)))
    gt = corpus.system("GT")
    aliases = {str(s): str(title_of(str(link))).replace(" ", "_")
               for s, link, nil in gt[["surface", "link", "is_nil"]].itertuples(index=False)
               if not nil and title_of(str(link))}
    return [texts[i % len(texts)] for i in range(count)], aliases


_SERVE_REL = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from predictors.standins import StandInREL
with StandInREL(json.load(open(sys.argv[2], encoding="utf-8"))).serve() as service:
    print(service.url, flush=True)
    while True:
        time.sleep(60)
"""


@contextlib.contextmanager
def rel_process(aliases: dict[str, str], folder: Path) -> Iterator[str]:
    """The stand-in REL in its own process (so neither side shares a GIL with it); yields its URL."""
    table = folder / "aliases.json"
    table.write_text(json.dumps(aliases, ensure_ascii=False), encoding="utf-8")
    tests = str(Path(__file__).resolve().parents[1] / "tests")
    process = subprocess.Popen([sys.executable, "-c", _SERVE_REL, tests, str(table)], stdout=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


def regions_of(reply: dict[str, Any]) -> list[list[tuple[int, int, str]]]:
    return [[(i["value"]["start"], i["value"]["end"], i["value"]["text"]) for i in p.get("result", [])
             if i["type"] == "labels"] for p in reply["results"]]


def through_backend(url: str, texts: list[str], batch: int, config: str) -> list[list[tuple[int, int, str]]]:
    found: list[list[tuple[int, int, str]]] = []
    with requests.Session() as session:
        for first in range(0, len(texts), batch):
            tasks = [{"id": first + n, "data": {"text": t}} for n, t in enumerate(texts[first:first + batch])]
            reply = session.post(f"{url}/predict", json={"tasks": tasks, "label_config": config}, timeout=120)
            if reply.status_code != 200 or "errors" in reply.json():
                raise SystemExit(f"/predict failed: {reply.status_code} {reply.text[:300]}")
            found.extend(regions_of(reply.json()))
    return found


def direct(linker: Any, texts: list[str], batch: int) -> list[list[tuple[int, int, str]]]:
    found: list[list[tuple[int, int, str]]] = []
    for first in range(0, len(texts), batch):
        for mentions in linker.link_texts(texts[first:first + batch]):
            found.append([(m.start, m.end, m.surface) for m in mentions])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from posthoc.paths import label_config
    from posthoc.predictors.registry import PredictorSpec

    config = label_config("entity_verification")
    texts, aliases = workload(args.tasks)
    with BenchRun("predictor_bench") as run, tempfile.TemporaryDirectory() as folder, \
            rel_process(aliases, Path(folder)) as rel_url:
        alias_csv = Path(folder) / "aliases.csv"
        import pandas as pd

        pd.DataFrame({"surface": list(aliases), "link": list(aliases.values())}).to_csv(alias_csv, index=False)
        import spacy

        nlp = spacy.blank("xx")
        ruler = nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "ORTH"})
        ruler.add_patterns([{"label": "ENTITY", "pattern": s, "id": t} for s, t in aliases.items()])  # type: ignore
        nlp.to_disk(Path(folder) / "nlp")
        specs = {
            "dictionary": PredictorSpec("dictionary", alias_files=(str(alias_csv),)),
            "spacy": PredictorSpec("spacy", spacy_model=str(Path(folder) / "nlp")),
            "rel (stand-in)": PredictorSpec("rel", url=rel_url, concurrency=1),
        }
        run.print(f"workload: {len(texts)} tasks ({len(set(texts))} distinct sample chunk texts, "
                  f"{sum(map(len, texts)) / len(texts):.0f} code points each on average), /predict batches of "
                  f"{args.batch}, one client; gunicorn with {args.workers} sync workers; {args.runs} runs a side")
        run.print(f"{'predictor':<14} {'regions':>7} {'backend pred/s':>15} {'direct pred/s':>14} "
                  f"{'backend/direct':>15}")
        headlines: list[str] = []
        for name, spec in specs.items():
            linker = spec.linker()
            process, url = start_gunicorn(None, None, workers=args.workers, predictor=spec.to_env())
            try:
                through_backend(url, texts[:args.batch], args.batch, config)  # warm every worker's first call
                ours, base = time_both(lambda url=url: through_backend(url, texts, args.batch, config),
                                       lambda linker=linker: direct(linker, texts, args.batch), runs=args.runs)
            finally:
                process.terminate()
                process.wait(timeout=30)
            if ours.result != base.result:
                run.fail(f"{name}: the backend's regions differ from the predictor's own mentions")
            regions = sum(map(len, ours.result))
            backend_rate = len(texts) / ours.wall_median
            direct_rate = len(texts) / base.wall_median
            run.print(f"{name:<14} {regions:>7} {backend_rate:>15.1f} {direct_rate:>14.1f} "
                      f"{backend_rate / direct_rate:>15.2f}")
            headlines.append(f"headline: {name}: {backend_rate:.0f} predictions/s through the backend, "
                             f"{backend_rate / direct_rate:.2f}x the predictor called directly "
                             f"(same {regions} regions)")
        run.print("pred/s: predictions (tasks pre-filled) per second, wall median; both sides give the same regions")
        for line in headlines:
            run.print(line)


if __name__ == "__main__":
    main()
