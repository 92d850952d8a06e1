"""`posthoc demo`: the README's main job, run as a user would (subprocesses, real servers)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from lsfixtures import copy_template

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

POSTHOC = [sys.executable, "-m", "posthoc.cli.main"]
YOURS = re.compile(r"Open this to label as worker (w\d+) \((\d+) of (\d+) tasks left to label\):\n"
                   r"  (http://127\.0\.0\.1:\d+/projects/(\d+)/data\?labeling=1)\n  login (\S+) / (\S+)")


def _closed(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


@pytest.fixture(scope="module")
def demo_run(ls_template: Path, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("demo")
    copy_template(ls_template, out / "labelstudio")  # a migrated data dir: skips the 30 s first start
    done = subprocess.run([*POSTHOC, "demo", "--simulate", "--no-serve", "--out", str(out), "--resamples", "50",
                           "--no-progress"], capture_output=True, text=True, timeout=1500, check=False)
    return {"out": out, "done": done}


def test_demo_simulate_no_serve_exits_0_with_a_report(demo_run) -> None:
    done, out = demo_run["done"], demo_run["out"]
    assert done.returncode == 0, done.stderr[-3000:]
    workers = re.findall(r"worker (w\d+): (http://127\.0\.0\.1:\d+/projects/\d+/data\?labeling=1)", done.stdout)
    manifest_workers = json.loads((out / "manifest.accounts.json").read_text())
    assert sorted(w for w, _ in workers) == sorted(manifest_workers)
    posted = int(re.search(r"posted (\d+) annotations", done.stdout).group(1))
    assert posted > 0
    report = Path(re.search(r"Report: (\S+)", done.stdout).group(1))
    assert report.is_file() and report.stat().st_size > 1000
    judgements = (out / "report" / "judgements.csv").read_text(encoding="utf-8").splitlines()
    assert len(judgements) > posted  # several mentions a task
    for secret_file in (out / "manifest.accounts.json", out / "labelstudio" / "credentials.json"):
        assert oct(os.stat(secret_file).st_mode & 0o777) == "0o600"
    token = json.loads((out / "labelstudio" / "credentials.json").read_text())["token"]
    assert token not in done.stdout + done.stderr
    ls_url = re.search(r"Label Studio: (http://127\.0\.0\.1:\d+)", done.stdout).group(1)
    assert _closed(ls_url)  # --no-serve stopped it, and says so last
    assert done.stdout.strip().splitlines()[-2].startswith("Label Studio and the ML backend are stopped now")
    yours = YOURS.search(done.stdout)
    assert yours and yours.group(1) == "w001" and int(yours.group(2)) == int(yours.group(3)) > 0


def test_demo_rerun_serves_until_interrupted_and_duplicates_nothing(demo_run) -> None:
    out = demo_run["out"]
    process = subprocess.Popen([*POSTHOC, "demo", "--simulate", "--out", str(out), "--resamples", "50",
                                "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Serving."):
                break
        text = "".join(lines)
        assert "posted 0 annotations" in text
        ls_url = re.search(r"Label Studio: (http://127\.0\.0\.1:\d+)", text).group(1)
        backend_url = re.search(r"ML backend:\s+(http://127\.0\.0\.1:\d+)", text).group(1)
        token = json.loads((out / "labelstudio" / "credentials.json").read_text())["token"]
        projects = requests.get(f"{ls_url}/api/projects/", headers={"Authorization": f"Token {token}"},
                                timeout=30).json()["results"]
        assert len(projects) == len(json.loads((out / "manifest.accounts.json").read_text()))
        yours = YOURS.search(text)
        assert yours is not None, text
        first = demo_run["done"].stdout  # --no-serve promised the printed links open on a rerun: same ports
        assert yours.group(4) == YOURS.search(first).group(4)
        assert backend_url == re.search(r"ML backend:\s+(http://127\.0\.0\.1:\d+)", first).group(1)
        for project in projects:  # the simulated workers are done; the printed link's batch is left to label
            if project["id"] == int(yours.group(5)):
                assert project["task_number"] >= 1 and project["num_tasks_with_annotations"] == 0
            else:
                assert project["task_number"] == project["num_tasks_with_annotations"]
        from posthoc.labelstudio.client import LabelStudioClient
        from posthoc.labelstudio.users import ensure_user

        account = ensure_user(ls_url, token, email=yours.group(6), password=yours.group(7))  # the printed login
        task = LabelStudioClient(ls_url, account.token).next_task(int(yours.group(5)))  # ... has work to do
        assert task is not None and task["data"]["batch_position"].startswith("Task 1 of ")
        assert requests.get(f"{backend_url}/health", timeout=10).ok
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert _closed(ls_url) and _closed(backend_url)


@pytest.mark.browser
def test_demo_report_fits_a_1400_px_window_and_gives_every_exclusion_a_reason(demo_run, browser) -> None:
    """The demo's report in Debian chromium at 1,400 px, every <details> opened: no table is wider than
    the window, the page does not scroll sideways, and no reason cell of the exclusions summary is empty."""
    report = demo_run["out"] / "report" / "report.html"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(report.as_uri())
        page.wait_for_selector("table")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        widths = page.eval_on_selector_all("table", "els => els.map(e => e.getBoundingClientRect().width)")
        page_width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(demo_run["out"] / "report-1400.png"), full_page=False)
        reasons = page.eval_on_selector_all(
            "#exclusions table", "tables => tables.flatMap(t => { const heads = [...t.querySelectorAll('th')]"
            ".map(h => h.textContent); const i = heads.indexOf('reason'); return i < 0 ? [] : "
            "[...t.querySelectorAll('tbody tr')].map(r => r.children[i].textContent.trim()); })")
    finally:
        page.close()
    assert len(widths) >= 5 and max(widths) <= 1400, widths
    assert page_width <= 1400
    assert reasons and all(reasons), reasons  # the demo excludes control rows at least
