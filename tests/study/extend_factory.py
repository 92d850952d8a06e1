"""A study to extend and reassign: a pool of documents written as JSONL, and two configs of one study name.

``pilot.toml`` holds the first ``n_pilot`` documents of each dataset in the study's seeded ranking
(:func:`posthoc.study.plan.extend.document_ranking`): what ``posthoc study plan`` plans first; ``study.toml``
holds every document (the pool ``posthoc study extend`` draws from).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from study_factory import make_corpus

from posthoc.study.plan.extend import document_ranking

SYSTEMS = ("GT", "E2E")


def _write_jsonl(path: Path, documents: pd.DataFrame, mentions: pd.DataFrame, system: str) -> None:
    lines = []
    for dataset, doc_id, text in zip(documents["dataset"], documents["doc_id"], documents["text"], strict=True):
        mine = mentions.loc[(mentions["dataset"] == dataset) & (mentions["doc_id"] == doc_id)
                            & (mentions["system"] == system)]
        lines.append(json.dumps({"id": doc_id, "dataset": dataset, "system": system, "text": text, "mentions": [
            {"start": int(s), "end": int(e), "surface": str(f), "link": str(link)}
            for s, e, f, link in zip(mine["start"], mine["end"], mine["surface"], mine["link"], strict=True)]},
            ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _config(path: Path, name: str, seed: int, k: int, n_workers: int, files: dict[str, str]) -> Path:
    inputs = "".join(f'\n[[inputs]]\npath = "{file}"\nformat = "jsonl"\nsystem = "{system}"\n'
                     for system, file in files.items())
    path.write_text(f'[study]\nname = "{name}"\nseed = {seed}\nk = {k}\nn_workers = {n_workers}\n{inputs}',
                    encoding="utf-8")
    return path


def write_study(folder: Path, *, n_docs: int = 60, n_pilot: int = 10, k: int = 2, n_workers: int = 8,
                seed: int = 7, name: str = "extend-test", datasets: int = 2) -> tuple[Path, Path]:
    """Write the pool's and the pilot's JSONL files and configs into ``folder``: ``(pilot.toml, study.toml)``."""
    documents, mentions = make_corpus(n_docs, datasets=datasets, systems=SYSTEMS)
    ranking = document_ranking(documents, seed)
    first = ranking.loc[ranking["rank"] < n_pilot]
    keep = set(zip(first["dataset"], first["doc_id"], strict=True))
    in_pilot = [(d, i) in keep for d, i in zip(documents["dataset"], documents["doc_id"], strict=True)]
    pilot_docs = documents.loc[in_pilot]
    files: dict[str, dict[str, str]] = {"pool": {}, "pilot": {}}
    for system in SYSTEMS:
        _write_jsonl(folder / f"pool-{system}.jsonl", documents, mentions, system)
        _write_jsonl(folder / f"pilot-{system}.jsonl", pilot_docs, mentions, system)
        files["pool"][system] = f"pool-{system}.jsonl"
        files["pilot"][system] = f"pilot-{system}.jsonl"
    return (_config(folder / "pilot.toml", name, seed, k, n_workers, files["pilot"]),
            _config(folder / "study.toml", name, seed, k, n_workers, files["pool"]))


def posthoc_cli(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``posthoc ARGS`` run in ``cwd`` (a child process, as a user runs it; ``env``: its whole environment)."""
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout, check=False)


def planned_study(folder: Path, **study: Any) -> Path:
    """:func:`write_study` into ``folder`` (``study``: its options) and ``posthoc study plan`` of its pilot into
    ``folder / "m.sqlite"``."""
    write_study(folder, **study)
    done = posthoc_cli("study", "plan", "--config", "pilot.toml", "--out", "m.sqlite", "--no-progress", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder
