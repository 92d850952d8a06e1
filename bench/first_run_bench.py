"""A newcomer's first hour on a busy machine (issue 29): the demo and the README's study block, each run from a
fresh folder while every core is kept busy, and the process-hygiene test under the same load.

Load: ``stress-ng --cpu K`` (K = 2 x cores by default, a load average of about 4-6 on 2 cores; busy Python loops
when stress-ng is missing), started before the first run and stopped after the last. Each round runs, in turn:

* ``posthoc demo --simulate --no-serve --out FRESH`` with the user's defaults (only ``--no-progress``): a new
  Label Studio data dir, so the first start migrates its database under load;
* the README's "A study from start to finish" block, read from README.md and run by ``bash -euo pipefail`` in a
  fresh folder laid out as the project root (``examples/`` copied, ``plugin/`` linked), its port 9090 replaced by
  a free one, Label Studio's data dir new.

A run passes when it exits 0 (and the demo wrote its report, the block its ``report.html``). After the rounds,
``pytest tests/faults/test_process_hygiene.py`` runs once under the same load. There is no baseline: the figure
is how many runs pass, with their wall times; a failure prints the run's last lines of output.

Usage: ``python bench/first_run_bench.py [--runs 10] [--load-workers K] [--skip-hygiene]``
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchlib import BenchRun, load_average

ROOT = Path(__file__).resolve().parents[1]
POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]


@contextmanager
def busy_cores(workers: int) -> Iterator[str]:
    """Every core kept busy until the block ends: stress-ng, or busy Python loops without it."""
    if shutil.which("stress-ng"):
        command = ["stress-ng", "--cpu", str(workers), "--timeout", "0"]
        what = f"stress-ng --cpu {workers}"
    else:
        command = [sys.executable, "-c", f"import multiprocessing as m\nfor _ in range({workers}): "
                   "m.Process(target=lambda: [0 for _ in iter(int, 1)]).start()"]
        what = f"{workers} busy Python loops"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        time.sleep(5)
        yield what
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tail(text: str, lines: int = 6) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def run_demo(folder: Path) -> tuple[bool, float, str]:
    started = time.monotonic()
    done = subprocess.run([*POSTHOC, "demo", "--simulate", "--no-serve", "--out", str(folder), "--no-progress"],
                          capture_output=True, text=True, timeout=3600, check=False)
    wall = time.monotonic() - started
    ok = done.returncode == 0 and (folder / "report" / "report.html").is_file()
    return ok, wall, "" if ok else f"exit {done.returncode}: {tail(done.stdout + done.stderr)}"


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"A study from start to finish.*?```bash\n(.*?)```", text, re.S)
    if not found:
        raise SystemExit("README.md has no ```bash block after 'A study from start to finish'")
    return found.group(1)


def run_readme_block(folder: Path) -> tuple[bool, float, str]:
    shutil.copytree(ROOT / "examples", folder / "examples")
    (folder / "plugin").symlink_to(ROOT / "plugin")
    script = readme_block().replace("9090", str(free_port()))
    env = {k: v for k, v in os.environ.items() if k not in {"POSTHOC_LS_URL", "LABEL_STUDIO_TOKEN", "POSTHOC_LS_TOKEN"}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    started = time.monotonic()
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=3600)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        subprocess.run([*POSTHOC, "ls", "stop", "--data-dir", str(folder / "study" / "labelstudio")],
                       capture_output=True, timeout=120, check=False)
    wall = time.monotonic() - started
    ok = process.returncode == 0 and (folder / "study" / "scores" / "report.html").is_file()
    return ok, wall, "" if ok else f"exit {process.returncode}: {tail(output)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds (one demo and one README block each)")
    parser.add_argument("--load-workers", type=int, default=2 * (os.cpu_count() or 1), help="busy workers")
    parser.add_argument("--skip-hygiene", action="store_true", help="do not run the process-hygiene test")
    args = parser.parse_args()
    with BenchRun("first_run_bench", argv=sys.argv[1:]) as run, busy_cores(args.load_workers) as load:
        run.print(f"load: {load}; {args.runs} rounds, each a fresh demo and a fresh README study block")
        results: dict[str, list[tuple[bool, float]]] = {"demo": [], "README block": []}
        for round_number in range(1, args.runs + 1):
            for name, job in (("demo", run_demo), ("README block", run_readme_block)):
                with tempfile.TemporaryDirectory(prefix="first-run-") as folder:
                    ok, wall, why = job(Path(folder) / "run")
                results[name].append((ok, wall))
                run.print(f"  round {round_number}: {name} {'passed' if ok else 'FAILED'} in {wall:.0f} s at load "
                          f"{load_average()}" + (f" ({why})" if why else ""))
        hygiene = "not run"
        if not args.skip_hygiene:
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "tests/faults/test_process_hygiene.py"], cwd=ROOT, capture_output=True, text=True,
                                  timeout=3600, check=False)
            hygiene = "passed" if done.returncode == 0 else f"FAILED ({tail(done.stdout, 3)})"
            run.print(f"  process-hygiene test under the same load: {hygiene} at load {load_average()}")
        summary = []
        for name, outcomes in results.items():
            passed = sum(ok for ok, _ in outcomes)
            walls = [wall for _, wall in outcomes]
            summary.append(f"{name} {passed} of {len(outcomes)} (median {statistics.median(walls):.0f} s, "
                           f"max {max(walls):.0f} s)")
        run.headline(f"under {load}: " + "; ".join(summary) + f"; process-hygiene test {hygiene}")


if __name__ == "__main__":
    main()
