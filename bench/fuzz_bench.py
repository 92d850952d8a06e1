"""Bench: fuzz every reader and every backend endpoint with hypothesis and count what happens.

Each target gets ``--examples`` hypothesis examples (default 10,000): random bytes, and mutations (splices of
random bytes and structural characters, truncations) of a valid seed file of that format holding emoji, CJK
and combining marks. Every example must end in one of two ways: accepted (the reader returns a validated
table, the endpoint a 2xx JSON answer) or a clean rejection (``PosthocInputError`` with a message; a 4xx JSON
body with an ``error``). Anything else (another exception, a 5xx, a non-JSON answer) is a *traceback*, counted,
and the first ones are printed. The target is 0 tracebacks. The bench exits 1 when any target found one.

There is no baseline: this bench counts robustness, not speed (the per-example time is printed for planning).

    python bench/fuzz_bench.py                    # 10,000 examples per target
    python bench/fuzz_bench.py --examples 500 --only nif,predict
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from benchlib import BenchRun
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from posthoc.errors import PosthocInputError

ROOT = Path(__file__).resolve().parents[1]
READER_DATA = ROOT / "tests" / "readers" / "data"
STRUCTURE = [b"\n", b"\t", b'"', b"{", b"}", b"[", b"]", b",", b":", b"<", b">", b"/", b"@", b".", b";", b"=",
             b"\x00", b"\xff", "👩‍👩‍👧".encode(), "東京".encode(), "e\u0301".encode(), b"-1", b"99999999999", b"NaN"]


def mutated(seed: bytes) -> st.SearchStrategy[bytes]:
    """``seed`` with up to 6 splices (random bytes or structural characters at random places) or truncated."""
    piece = st.binary(max_size=12) | st.sampled_from(STRUCTURE)
    edit = st.tuples(st.integers(0, max(len(seed), 1)), st.integers(0, 16), piece)

    def apply(edits: list[tuple[int, int, bytes]], cut: int | None) -> bytes:
        data = seed
        for where, drop, insert in edits:
            where = min(where, len(data))
            data = data[:where] + insert + data[where + drop:]
        return data[:cut] if cut is not None else data

    return st.builds(apply, st.lists(edit, max_size=6), st.none() | st.integers(0, len(seed)))


class Tally:
    """Counts of one target: examples, accepted, rejected cleanly, tracebacks (with the first few kept)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.tracebacks: list[str] = []

    def run(self, call: Callable[[], Any]) -> None:
        self.counts["examples"] += 1
        try:
            outcome = call()
        except PosthocInputError as exc:
            if str(exc).strip():
                self.counts["rejected"] += 1
                return
            outcome = "empty error message"
        except Exception:
            outcome = traceback.format_exc(limit=6)
        if outcome is None:
            self.counts["accepted"] += 1
            return
        self.counts["tracebacks"] += 1
        if len(self.tracebacks) < 3:
            self.tracebacks.append(str(outcome))


def fuzz(tally: Tally, strategy: st.SearchStrategy[Any], body: Callable[[Any], Any], examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        tally.run(lambda: body(value))

    run()


# -- readers -----------------------------------------------------------------------------------------
def reader_targets(work: Path) -> dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], Any]]]:
    from posthoc.readers import read_mentions

    jsonl_seed = (READER_DATA / "small.jsonl").read_bytes()
    documents = read_mentions(READER_DATA / "small.jsonl").documents.assign(dataset="small")  # as REL is read
    nif_file = READER_DATA / "small.ttl"
    targets: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], Any]]] = {}

    def file_reader(name: str, suffix: str, seed: bytes, **kwargs: Any) -> None:
        path = work / f"fuzz-{name}{suffix}"

        def body(data: bytes) -> None:
            path.write_bytes(data)
            corpus = read_mentions(path, **kwargs)
            for _, row in corpus.mentions.iterrows():  # accepted means consistent: surfaces are the text's
                text = corpus.documents.set_index(["dataset", "doc_id"]).loc[(row["dataset"], row["doc_id"]), "text"]
                assert text[row["start"]:row["end"]] == row["surface"], "surface is not text[start:end]"

        targets[name] = (mutated(seed) | st.binary(max_size=200), body)

    file_reader("jsonl", ".jsonl", jsonl_seed)
    file_reader("nif", ".ttl", nif_file.read_bytes())
    file_reader("aida", ".tsv", (READER_DATA / "small-aida.tsv").read_bytes())
    file_reader("rel", ".json", (READER_DATA / "small-rel.json").read_bytes(), documents=documents,
                system="REL")

    wned_seed = READER_DATA / "wned"
    if wned_seed.is_dir():
        xml_seed = next(wned_seed.glob("*.xml")).read_bytes()
        folder = work / "wned"
        import shutil

        shutil.copytree(wned_seed, folder)
        xml_path = next(folder.glob("*.xml"))

        def wned_body(data: bytes) -> None:
            xml_path.write_bytes(data)
            read_mentions(folder, fmt="wned")

        targets["wned"] = (mutated(xml_seed) | st.binary(max_size=200), wned_body)

    from posthoc.crowdtruth.io import read_crowdtruth_csv

    ct_seed = ("_unit_id,_worker_id,_started_at,_created_at,sentence,relation\n"
               "1,w1,2024-01-01 10:00:00,2024-01-01 10:01:00,Zoë in 東京,[born_in]\n"
               "1,w2,2024-01-01 10:00:00,2024-01-01 10:02:00,Zoë in 東京,[none]\n"
               "2,w1,2024-01-01 10:03:00,2024-01-01 10:04:00,Jose\u0301 🇫🇷,[born_in] [none]\n").encode()
    ct_path = work / "fuzz-ct.csv"

    def ct_body(data: bytes) -> None:
        ct_path.write_bytes(data)
        read_crowdtruth_csv(ct_path)

    targets["crowdtruth-csv"] = (mutated(ct_seed) | st.binary(max_size=200), ct_body)

    from posthoc.study.plan.config import load_study_config

    toml_dir = work / "study"
    toml_dir.mkdir()
    (toml_dir / "gt.jsonl").write_bytes(jsonl_seed)
    toml_seed = (b'[study]\nname = "fuzz"\nseed = 1\nk = 1\ntasks_per_batch = 20\nmax_chars = 300\n'
                 b'n_workers = 4\ncontrol_tasks = true\n\n[[inputs]]\npath = "gt.jsonl"\nformat = "jsonl"\n'
                 b'dataset = "d"\nsystem = "GT"\n')

    def toml_body(data: bytes) -> None:
        (toml_dir / "study.toml").write_bytes(data)
        load_study_config(toml_dir / "study.toml")

    targets["study-toml"] = (mutated(toml_seed) | st.binary(max_size=200), toml_body)

    targets["label-studio-export"] = label_studio_export_target(work)
    return targets


def label_studio_export_target(work: Path) -> tuple[st.SearchStrategy[Any], Callable[[Any], Any]]:
    from posthoc.export.flatten import ExportFlattener
    from posthoc.export.synthetic import write_synthetic_export
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.paths import label_config
    from posthoc.study.plan.index import ManifestIndex

    text = "👩‍👩‍👧 Zoë met Jose\u0301 in 東京 and 🇫🇷 Paris."
    spans = [(text.index(w), text.index(w) + len(w)) for w in ("Zoë", "Jose\u0301", "東京")]
    tasks = pd.DataFrame({"task_key": ["k0", "k1"], "worker": ["w0", "w1"], "position": [0, 0],
                          "item_id": ["i0", "i1"], "chunk_id": "c0", "dataset": "d", "doc_id": "doc",
                          "system": "GT", "is_control": False})
    rows = [(f"k{i}", f"m{i}-{j}", s, e, s, e, text[s:e], f"https://en.wikipedia.org/wiki/E{j}", None)
            for i in range(2) for j, (s, e) in enumerate(spans)]
    mentions = pd.DataFrame(rows, columns=["task_key", "mention_id", "start", "end", "doc_start", "doc_end",
                                           "surface", "link", "expected_outcome"])
    index = ManifestIndex.from_frames("p", tasks, mentions)
    tags = verification_tags(label_config("entity_verification"))
    seed_path = work / "seed-export.json"
    write_synthetic_export(seed_path, index, tags, texts={"k0": text, "k1": text}, seed=3)
    path = work / "fuzz-export.json"

    def body(data: bytes) -> None:
        path.write_bytes(data)
        flattener = ExportFlattener(index, tags)
        flattener.add_export(path)
        flattener.result()

    return mutated(seed_path.read_bytes()) | st.binary(max_size=200), body


# -- backend endpoints -------------------------------------------------------------------------------
def endpoint_targets(work: Path) -> dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], Any]]]:
    import dataclasses

    from posthoc.study import plan_study, read_study_inputs, sample_study_config
    from posthoc.study.plan.manifest import Manifest
    from posthoc_backend.app import create_app

    config = dataclasses.replace(sample_study_config(name="fuzz", n_workers=4), tasks_per_batch=5)
    documents, mentions = read_study_inputs(config)
    keep = documents.head(4)[["dataset", "doc_id"]]
    manifest = Manifest.create(work / "fuzz.manifest", plan_study(documents.merge(keep), mentions.merge(keep),
                                                                  config))
    client = create_app(manifest, events_db=work / "events.sqlite3").test_client()
    real = manifest.tasks().iloc[0]
    scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats() | st.text(max_size=20)
    anything = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                            | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
    task = st.fixed_dictionaries({}, optional={
        "id": anything, "data": st.fixed_dictionaries({}, optional={
            "text": st.just(str(real.text)) | st.text(max_size=40) | anything,
            "task_key": st.just(str(real.task_key)) | st.text(max_size=22) | anything}) | anything})
    bodies = {
        "predict": st.fixed_dictionaries({"tasks": st.lists(task | anything, max_size=4)},
                                         optional={"label_config": anything, "project": anything,
                                                   "params": anything}) | anything,
        "setup": st.fixed_dictionaries({}, optional={"project": anything, "schema": anything,
                                                     "hostname": anything, "access_token": anything,
                                                     "extra_params": anything}) | anything,
        "webhook": st.fixed_dictionaries(
            {"action": st.sampled_from(["ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED"])
             | anything},
            optional={"annotation": anything, "annotations": anything, "task": task | anything,
                      "project": anything}) | anything,
    }

    def endpoint(name: str) -> Callable[[Any], Any]:
        def body(value: Any) -> str | None:
            payload, raw = value
            if raw is not None:
                reply = client.post(f"/{name}", data=raw, content_type="application/json")
            else:
                reply = client.post(f"/{name}", data=json.dumps(payload, allow_nan=True),
                                    content_type="application/json")
            if reply.status_code >= 500 or not reply.is_json or not isinstance(reply.json, dict):
                return f"{name}: HTTP {reply.status_code} {reply.get_data(as_text=True)[:300]}"
            if reply.status_code >= 400:
                if not (isinstance(reply.json.get("error"), str) and reply.json["error"]):
                    return f"{name}: HTTP {reply.status_code} without an error message"
                raise PosthocInputError(reply.json["error"])  # a clean 4xx: counted as rejected
            return None

        return body

    raw_seed = '{"tasks": [{"data": {"text": "Zoë 東京"}}]}'.encode()
    return {name: (st.tuples(bodies[name], st.none() | mutated(raw_seed)), endpoint(name)) for name in bodies}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000, help="hypothesis examples per target")
    parser.add_argument("--only", default="", help="comma-separated target names (default: all)")
    args = parser.parse_args()
    import logging

    logging.disable(logging.CRITICAL)  # the backend logs every rejected request; the counts are the output
    with BenchRun("fuzz_bench") as run, tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        targets = {**reader_targets(work), **endpoint_targets(work)}
        chosen = [t for t in args.only.split(",") if t] or list(targets)
        run.print(f"{args.examples:,} hypothesis examples per target: bytes and mutations of a valid seed file "
                  "(emoji, CJK, combining marks); endpoints: JSON bodies and mutated raw bodies")
        run.print(f"{'target':<22} {'examples':>9} {'accepted':>9} {'rejected':>9} {'tracebacks':>10} {'ms/ex':>7}")
        found = 0
        for name in chosen:
            strategy, body = targets[name]
            tally = Tally()
            started = time.perf_counter()
            fuzz(tally, strategy, body, args.examples)
            per = (time.perf_counter() - started) / max(tally.counts["examples"], 1) * 1000
            c = tally.counts
            run.print(f"{name:<22} {c['examples']:>9,} {c['accepted']:>9,} {c['rejected']:>9,} "
                      f"{c['tracebacks']:>10,} {per:>7.2f}")
            for text in tally.tracebacks:
                run.print("  " + text.strip().replace("\n", "\n  "))
            found += c["tracebacks"]
        total = len(chosen)
        run.headline(f"fuzz: {total} targets x {args.examples:,} examples, {found} tracebacks (target 0)")
    if found:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
