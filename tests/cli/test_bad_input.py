"""Bad input at the edge of every ``posthoc`` command: one line, the right exit code, nothing written.

Each case runs the real CLI in a subprocess inside one shared workspace (sample inputs, a planned
manifest, a flags folder, broken files). For every case the test asserts:

* the exit code: 2 for bad input, 3 for an unreachable service (a loopback port nobody listens on);
* stderr is exactly one line (progress-bar frames aside), starts with ``posthoc:``, names the file,
  option or field at fault, and holds no traceback;
* the workspace is byte-for-byte unchanged: no output folder or partial file was created, no input
  file was touched.

No Label Studio runs here; service cases use a dead loopback port (bound to port 0, then closed).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "plugin" / "posthoc" / "sample"

STUDY_TOML = """
[study]
name = "sample"
seed = 20260101
k = 1
tasks_per_batch = 20
max_chars = 300
n_workers = 4
control_tasks = true

[[inputs]]
path = "gt.jsonl"
format = "jsonl"
dataset = "sample-news"
system = "GT"
"""

#: a tqdm frame ("gt.jsonl: 100%|####| 21/21 [00:00<00:00, ...]"): progress, not an error line
_PROGRESS = re.compile(r"\[\d{2}:\d{2}")
_TOKEN_VARS = ("LABEL_STUDIO_TOKEN", "POSTHOC_LS_TOKEN", "POSTHOC_LS_URL", "POSTHOC_BACKEND_SECRET")


@dataclass(frozen=True)
class Case:
    """``argv`` after ``posthoc``; ``{dead}`` is a dead loopback URL, ``{busy}`` a port in use."""

    argv: str
    exit_code: int
    names: tuple[str, ...]
    token: bool = True


def _cases() -> dict[str, Case]:
    create = "study create --manifest manifest.sqlite --backend-url http://127.0.0.1:9 --no-progress"
    score = "score --manifest manifest.sqlite --out score-out --quiet"
    return {
        # study plan: the study.toml and the files it names
        "plan-config-missing": Case("study plan --config missing.toml --no-progress", 2, ("missing.toml",)),
        "plan-config-is-folder": Case("study plan --config adir --no-progress", 2, ("--config", "adir")),
        "plan-config-empty": Case("study plan --config empty.txt --no-progress", 2, ("empty.txt", "[study]")),
        "plan-config-binary": Case("study plan --config garbage.bin --no-progress", 2, ("garbage.bin", "TOML")),
        "plan-config-json-not-toml": Case("study plan --config data.json --no-progress", 2, ("data.json", "TOML")),
        "plan-config-no-seed": Case("study plan --config nokeys.toml --no-progress", 2, ("nokeys.toml", "seed")),
        "plan-config-seed-not-int": Case("study plan --config wrongtype.toml --no-progress", 2,
                                         ("wrongtype.toml", "seed", "integer")),
        "plan-input-missing": Case("study plan --config missinginput.toml --no-progress", 2, ("nothere.jsonl",)),
        "plan-input-is-folder": Case("study plan --config dirinput.toml --no-progress", 2, ("adir", "folder")),
        "plan-input-json-as-nif": Case("study plan --config jsonasnif.toml --out p.sqlite --no-progress", 2,
                                       ("data.json", "NIF")),
        "plan-input-bad-offsets": Case("study plan --config badoffsets.toml --out p.sqlite --no-progress", 2,
                                       ("badm.jsonl", "d1", "start")),
        "plan-out-is-other-file": Case("study plan --config study.toml --out afile --no-progress", 2,
                                       ("afile", "--overwrite")),
        "plan-unknown-option": Case("study plan --config study.toml --bogus", 2, ("--bogus",)),
        # study create / status: manifests, URLs, tokens
        "create-manifest-binary": Case(f"{create} --url {{dead}}".replace("manifest.sqlite", "garbage.bin"), 2,
                                       ("garbage.bin", "manifest")),
        "create-dead-url": Case(f"{create} --url {{dead}}", 3, ("{dead}", "unreachable")),
        "create-no-token": Case(f"{create} --url {{dead}}", 2, ("POSTHOC_LS_TOKEN",), token=False),
        "create-url-without-scheme": Case(f"{create} --url localhost", 2, ("--url", "localhost")),
        "create-backend-url-without-scheme": Case(f"{create} --url {{dead}}".replace("http://127.0.0.1:9", "9090"),
                                                  2, ("--backend-url", "9090")),
        "create-accounts-file-is-folder": Case(f"{create} --url {{dead}} --accounts-file adir", 2,
                                               ("--accounts-file",)),
        "create-data-dir-bad-credentials": Case(f"{create} --data-dir badls", 2, ("credentials.json",),
                                                token=False),
        "status-manifest-is-folder": Case("study status --manifest adir", 2, ("adir", "folder")),
        "status-dead-url": Case("study status --manifest manifest.sqlite --url {dead}", 3, ("{dead}",)),
        "status-no-token": Case("study status --manifest manifest.sqlite --url {dead}", 2,
                                ("LABEL_STUDIO_TOKEN",), token=False),
        "status-out-is-file": Case("study status --manifest manifest.sqlite --url {dead} --out afile", 2,
                                   ("--out", "afile")),
        "status-events-db-binary": Case("study status --manifest manifest.sqlite --events-db garbage.bin", 2,
                                        ("garbage.bin",)),
        # score: export files, label config, output folder, Label Studio
        "score-export-missing": Case(f"{score} --export-file missing.json", 2, ("missing.json",)),
        "score-export-empty": Case(f"{score} --export-file empty.txt", 2, ("empty.txt", "JSON")),
        "score-export-binary": Case(f"{score} --export-file garbage.bin", 2, ("garbage.bin", "JSON")),
        "score-export-object-not-array": Case(f"{score} --export-file data.json", 2, ("data.json", "array")),
        "score-export-array-of-numbers": Case(f"{score} --export-file numbers.json", 2, ("numbers.json", "task")),
        "score-export-task-data-not-object": Case(f"{score} --export-file datastr.json", 2, ("datastr.json", "task 7")),
        "score-export-annotations-not-list": Case(f"{score} --export-file annstr.json", 2, ("annstr.json", "task 8")),
        "score-accounts-file-malformed": Case(f"{score} --export-file tasks.json".replace("manifest.sqlite",
                                                                                            "acc/m.sqlite"),
                                              2, ("m.accounts.json", "w001")),
        "score-out-is-file": Case("score --manifest manifest.sqlite --out afile --export-file tasks.json", 2,
                                  ("--out", "afile")),
        "score-manifest-is-toml": Case(f"{score} --export-file tasks.json".replace("manifest.sqlite", "study.toml"),
                                       2, ("study.toml", "manifest")),
        "score-label-config-binary": Case(f"{score} --export-file tasks.json --label-config garbage.bin", 2,
                                          ("--label-config", "garbage.bin")),
        "score-label-config-json": Case(f"{score} --export-file tasks.json --label-config data.json", 2,
                                        ("--label-config", "data.json")),
        "score-dead-url": Case(f"{score} --url {{dead}}", 3, ("{dead}", "unreachable")),
        "score-no-token": Case(f"{score} --url {{dead}}", 2, ("LABEL_STUDIO_TOKEN",), token=False),
        "score-url-without-scheme": Case(f"{score} --url localhost:8080", 2, ("--url", "localhost:8080")),
        # crowdtruth
        "crowdtruth-missing": Case("crowdtruth missing.csv --out ct-out", 2, ("missing.csv",)),
        "crowdtruth-empty": Case("crowdtruth empty.txt --out ct-out", 2, ("empty.txt",)),
        "crowdtruth-binary": Case("crowdtruth garbage.bin --out ct-out", 2, ("garbage.bin",)),
        "crowdtruth-table-no-columns": Case("crowdtruth cols.csv --layout table --out ct-out", 2,
                                            ("cols.csv", "unit", "worker", "annotation")),
        "crowdtruth-table-empty-answer": Case("crowdtruth ctblank.csv --layout table --out ct-out", 2,
                                              ("ctblank.csv", "annotation")),
        "crowdtruth-label-studio-binary": Case("crowdtruth garbage.bin --layout label-studio --out ct-out", 2,
                                               ("garbage.bin", "Label Studio")),
        "crowdtruth-out-is-file": Case("crowdtruth cols.csv --layout table --out afile", 2, ("--out", "afile")),
        # sequence
        "sequence-missing-column": Case("sequence seqmiss.csv --out seq-out", 2, ("seqmiss.csv", "label")),
        "sequence-position-not-numeric": Case("sequence seqtype.csv --out seq-out", 2, ("seqtype.csv", "position")),
        "sequence-header-only": Case("sequence seqheader.csv --out seq-out", 2, ("seqheader.csv", "no judgements")),
        "sequence-judgements-no-columns": Case("sequence cols.csv --layout judgements --out seq-out", 2,
                                               ("cols.csv", "worker", "outcome")),
        "sequence-judgements-binary": Case("sequence garbage.bin --layout judgements --out seq-out", 2,
                                           ("garbage.bin",)),
        "sequence-ls-rating-object": Case("sequence data.json --layout ls-rating --out seq-out", 2,
                                          ("data.json", "list of tasks")),
        # flags
        "flags-check-binary": Case("flags check garbage.bin --out fl-out", 2, ("garbage.bin",)),
        "flags-check-bad-turtle": Case("flags check bad.ttl --out fl-out", 2, ("bad.ttl", "NIF")),
        "flags-check-kb-tsv-binary": Case("flags check gt.jsonl --out fl-out --kb-tsv garbage.bin", 2,
                                          ("garbage.bin", "KB")),
        "flags-check-kb-broken-gzip": Case("flags check gt.jsonl --out fl-out --kb-redirects broken.nt.gz", 2,
                                           ("broken.nt.gz",)),
        "flags-review-dead-url": Case("flags review --flags flags --url {dead}", 3, ("{dead}",)),
        "flags-review-no-token": Case("flags review --flags flags --url {dead}", 2, ("LABEL_STUDIO_TOKEN",),
                                      token=False),
        "flags-review-url-without-scheme": Case("flags review --flags flags --url 127.0.0.1:8080", 2,
                                                ("--url", "127.0.0.1:8080")),
        "flags-review-meta-binary": Case("flags review --flags flags-badmeta --url {dead}", 2, ("meta.json",)),
        "flags-apply-flags-table-binary": Case("flags apply --flags flags-badtable --url {dead} --project 1 "
                                               "--out ap-out", 2, ("flags.csv",)),
        # backend serve: everything is checked before gunicorn starts
        "backend-manifest-binary": Case("backend serve --manifest garbage.bin --port {busy}", 2, ("garbage.bin",)),
        "backend-alias-file-no-columns": Case("backend serve --manifest manifest.sqlite --alias-file cols.csv "
                                              "--port {free}", 2, ("cols.csv", "surface", "link")),
        "backend-events-db-binary": Case("backend serve --manifest manifest.sqlite --events-db garbage.bin "
                                         "--port {free}", 2, ("garbage.bin",)),
        "backend-host-not-an-address": Case("backend serve --manifest manifest.sqlite --host 256.1.1.1 "
                                            "--port {free}", 2, ("--host", "256.1.1.1")),
        # predict: the corpus, the predictor's options, a service that is not there
        "predict-corpus-missing": Case("predict --predictor rel --url {dead} missing.jsonl --out p.jsonl", 2,
                                       ("missing.jsonl",)),
        "predict-rel-without-url": Case("predict --predictor rel gt.jsonl --out p.jsonl", 2, ("--url",)),
        "predict-class-not-importable": Case("predict --predictor nosuchpkg.mod:Model gt.jsonl --out p.jsonl", 2,
                                             ("nosuchpkg.mod",)),
        "predict-rel-dead": Case("predict --predictor rel --url {dead} gt.jsonl --out p.jsonl --no-progress", 3,
                                 ("REL", "news-01", "cannot connect")),
        "backend-port-in-use": Case("backend serve --manifest manifest.sqlite --port {busy}", 2,
                                    ("--port", "{busy}")),
        # ls / demo (nothing is started)
        "ls-start-data-dir-is-file": Case("ls start --data-dir afile", 2, ("--data-dir", "afile")),
        "ls-start-port-in-use": Case("ls start --data-dir new-ls --port {busy} --timeout 5", 3, ("{busy}", "in use")),
        "ls-status-bad-credentials": Case("ls status --data-dir badls", 2, ("credentials.json",)),
        "demo-out-is-file": Case("demo --out afile --no-serve", 2, ("--out", "afile")),
    }


CASES = _cases()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def busy_port() -> Iterator[int]:
    """A loopback port with a listening socket on it for the whole module."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sample inputs, a planned manifest, a flags folder and broken files of every kind."""
    root = tmp_path_factory.mktemp("bad-input")
    shutil.copy(SAMPLE / "gt.jsonl", root / "gt.jsonl")
    (root / "study.toml").write_text(STUDY_TOML, encoding="utf-8")
    (root / "adir").mkdir()
    (root / "afile").write_text("not a folder\n", encoding="utf-8")
    (root / "empty.txt").write_bytes(b"")
    (root / "garbage.bin").write_bytes(bytes(range(256))[::-1] * 8 + b"\x00\xff\xfe garbage")
    (root / "data.json").write_text('{"a": 1}\n', encoding="utf-8")
    (root / "numbers.json").write_text("[1, 2, 3]\n", encoding="utf-8")
    (root / "tasks.json").write_text('[{"id": 1, "data": {}}]\n', encoding="utf-8")
    (root / "cols.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (root / "seqmiss.csv").write_text("worker,item,position\nw1,i1,0\n", encoding="utf-8")
    (root / "seqtype.csv").write_text("worker,item,position,label\nw1,i1,zero,1\nw1,i2,one,0\n", encoding="utf-8")
    (root / "seqheader.csv").write_text("worker,item,position,label\n", encoding="utf-8")
    (root / "ctblank.csv").write_text("unit,worker,annotation\nu1,w1,a\nu1,w2,\nu2,w1,b\nu2,w2,b\n",
                                      encoding="utf-8")
    (root / "bad.ttl").write_text("not turtle at all {{{\n", encoding="utf-8")
    packed = gzip.compress(b"".join(f"<a{i}> <b> <c{i}> .\n".encode() for i in range(200)))
    (root / "broken.nt.gz").write_bytes(packed[:len(packed) // 2])  # cut in the middle of the stream
    (root / "badm.jsonl").write_text('{"id": "d1", "text": "abc", "mentions": [{"start": "x", "end": 2}]}\n',
                                     encoding="utf-8")
    head = '[study]\nname = "x"\n'
    configs = {
        "nokeys.toml": head,
        "wrongtype.toml": head + 'seed = "abc"\n[[inputs]]\npath = "gt.jsonl"\n',
        "missinginput.toml": head + 'seed = 1\n[[inputs]]\npath = "nothere.jsonl"\n',
        "dirinput.toml": head + 'seed = 1\n[[inputs]]\npath = "adir"\n',
        "jsonasnif.toml": head + 'seed = 1\n[[inputs]]\npath = "data.json"\nformat = "nif"\n',
        "badoffsets.toml": head + 'seed = 1\n[[inputs]]\npath = "badm.jsonl"\n',
    }
    for name, text in configs.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "badls").mkdir()
    (root / "badls" / "credentials.json").write_bytes(b"\x84\x00 not json")
    env = _environment(token=False)
    for argv in (["study", "plan", "--config", "study.toml", "--no-progress"],
                 ["flags", "check", "gt.jsonl", "--out", "flags", "--rules", "positioning"]):
        done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", *argv], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    from posthoc.study.plan.manifest import Manifest

    manifest = Manifest.open(root / "manifest.sqlite")
    key = str(manifest.tasks()["task_key"].iloc[0])
    manifest.close()
    (root / "datastr.json").write_text('[{"id": 7, "data": "not an object"}]\n', encoding="utf-8")
    (root / "annstr.json").write_text(json.dumps([{"id": 8, "data": {"task_key": key}, "annotations": "none"}]),
                                      encoding="utf-8")
    (root / "acc").mkdir()
    shutil.copy(root / "manifest.sqlite", root / "acc" / "m.sqlite")
    (root / "acc" / "m.accounts.json").write_text('{"w001": "not an account"}\n', encoding="utf-8")
    for name, broken in (("flags-badmeta", "meta.json"), ("flags-badtable", "flags.csv")):
        shutil.copytree(root / "flags", root / name)
        (root / name / broken).write_bytes(b"\x84\x00\xff binary")
    return root


def _environment(*, token: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _TOKEN_VARS}
    if token:
        env["LABEL_STUDIO_TOKEN"] = env["POSTHOC_LS_TOKEN"] = "not-a-real-token"
    return env


def _snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` -> SHA-256 of its bytes (folders: ``dir``)."""
    state: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        state[key] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return state


#: cases that wait on a dead service's retries (seconds each): marked slow, outside the fast loop
SLOW_CASES = frozenset({"create-dead-url", "status-dead-url", "score-dead-url", "flags-review-dead-url",
                        "predict-rel-dead"})


@pytest.mark.parametrize("case_id", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c for c in CASES])
def test_bad_input_is_one_line_and_writes_nothing(case_id: str, workspace: Path, busy_port: int) -> None:
    case = CASES[case_id]
    dead = f"http://127.0.0.1:{_free_port()}"
    values = {"dead": dead, "busy": str(busy_port), "free": str(_free_port())}
    argv = case.argv.format(**values).split()
    names = tuple(name.format(**values) for name in case.names)
    before = _snapshot(workspace)
    done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", *argv], cwd=workspace,
                          env=_environment(token=case.token), capture_output=True, text=True, timeout=90,
                          check=False)
    lines = [line for line in done.stderr.splitlines() if line.strip() and not _PROGRESS.search(line)]
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == case.exit_code, done.stderr
    assert len(lines) == 1, done.stderr
    prefix = "posthoc: service error: " if case.exit_code == 3 else "posthoc: error: "
    assert lines[0].startswith(prefix), lines[0]
    if case.exit_code == 3:  # a short line a person reads, not urllib3's chain of reprs
        assert not re.search(r"HTTPConnectionPool|Max retries|NewConnectionError|object at 0x", lines[0]), lines[0]
        assert len(lines[0]) <= 240, lines[0]
    for name in names:
        assert name in lines[0], f"{name!r} not named in: {lines[0]}"
    assert _snapshot(workspace) == before, "the command changed the workspace"
