"""Record the HTTP calls a study worker's browser makes while labelling (the evidence for the gateway's rules).

Run by hand (``python tests/gateway/record_worker_calls.py``; about a minute): it starts a real Label Studio on a
copy of the tests' template, sets up a three-worker study on the bundled sample corpus (``create_study`` with the
real ML backend), logs in as w001 in Debian chromium (Playwright), opens the project's labelling stream, decides
every mention of the first task by keyboard, submits, does the same on the next task, and writes every request
the page made (method, path with its ids replaced by ``{project}``, ``{task}``, ``{annotation}``, ``{draft}``,
and the query's parameters, see :func:`query_shape`) to ``tests/gateway/worker_calls.json``.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from lsfixtures import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    build_template,
    private_label_studio,
    run_backend,
    small_sample_manifest,
)

OUTPUT = HERE / "worker_calls.json"


def template_path(ids: dict[str, set[int]], path: str) -> str:
    """``path`` with every known id replaced by the name of what it is (project, task, annotation, draft)."""
    def replace(match: re.Match[str]) -> str:
        kind, number = match.group(1), int(match.group(2))
        names = {"projects": "project", "tasks": "task", "annotations": "annotation", "drafts": "draft"}
        name = names.get(kind)
        if name is None:
            return match.group(0)
        if name in ("project", "task") and number not in ids[name]:
            name = f"other-{name}"
        return f"/{kind}/{{{name}}}"

    return re.sub(r"/(projects|tasks|annotations|drafts)/(\d+)", replace, path)


#: query parameters whose values name what is asked (kept); the others carry ids or paging (shown as ``{...}``)
KEPT_VALUES = ("id", "include", "interaction", "expand", "labeling", "fields")


def query_shape(query: str) -> list[str]:
    """The query's parameters in order, ``name=value`` for :data:`KEPT_VALUES`, ``name={...}`` otherwise."""
    return [f"{k}={v if k in KEPT_VALUES else '{...}'}" for k, v in parse_qsl(query, keep_blank_values=True)]


def browser_login(page: Any, url: str, account: dict[str, str]) -> None:
    """Log ``account`` (``email``, ``password``) in with Label Studio's form at ``url``."""
    page.goto(f"{url}/user/login/")
    page.fill("input[name=email]", account["email"])
    page.fill("input[name=password]", account["password"])
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("networkidle")


def _decide_selected(page: Any, key: str, new_link: str | None) -> None:
    page.keyboard.press(key)
    if new_link is not None:
        page.fill("input[name=new_link]", new_link)
        page.keyboard.press("Enter")
        page.evaluate("document.activeElement && document.activeElement.blur()")


def decide_task(page: Any, key: str = "1", new_link: str | None = None) -> None:
    """Decide every mention of the open task with the hotkey ``key`` (default 1: verify; 2 edit, typing
    ``new_link``; 3 remove), then Submit: Alt+. selects the first mention; Submit with an undecided mention opens a
    warning and selects that mention (OK, then the key decides it), so Submit is pressed until the task changes."""
    page.wait_for_selector("span.htx-highlight", timeout=90_000)
    page.wait_for_timeout(1000)
    page.keyboard.press("Alt+.")
    _decide_selected(page, key, new_link)
    for _ in range(30):
        page.keyboard.press("u")
        page.get_by_test_id("bottombar-submit-button").click()
        try:
            page.wait_for_selector("text=still undecided", timeout=2000)
        except Exception:  # no warning: the task was submitted
            break
        page.get_by_role("button", name="OK").click()
        _decide_selected(page, key, new_link)
    page.wait_for_timeout(3000)


def record(folder: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study, read_accounts
    from posthoc.labelstudio.client import LabelStudioClient
    from posthoc.study.plan.study import Study

    template = build_template(Path(tempfile.gettempdir()) / "pytest-of-root" / "posthoc-ls")
    with private_label_studio(template, folder / "labelstudio") as server:
        manifest = small_sample_manifest(folder / "manifest.sqlite", name="gwrec", n_documents=4, n_workers=3,
                                         tasks_per_batch=3, control_tasks=False)
        with run_backend(manifest.path) as backend_url:
            target = SetupTarget(url=server.url, token=server.token, backend_url=backend_url)
            options = SetupOptions(accounts_file=folder / "accounts.json", email_domain="gwrec.posthoc.local")
            setup = create_study(Study(manifest), target, options)
            project_id = setup.project_ids()["w001"]
            admin = LabelStudioClient(server.url, server.token)
            ids = {"project": {project_id}, "task": {int(t["id"]) for t in admin.tasks(project_id)}}
            account = read_accounts(folder / "accounts.json")["w001"]
            calls: list[dict[str, Any]] = []
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.on("dialog", lambda dialog: dialog.dismiss())

                def on_request(request: Any) -> None:
                    parts = urlsplit(request.url)
                    if parts.netloc == urlsplit(server.url).netloc:
                        calls.append({"method": request.method, "path": parts.path,
                                      "query": query_shape(parts.query)})

                page.on("request", on_request)
                browser_login(page, server.url, account)
                page.goto(f"{server.url}/projects/{project_id}/data?labeling=1")
                decide_task(page)
                decide_task(page)
                page.wait_for_load_state("networkidle")
                page.close()
                browser.close()
            annotations = {int(a["id"]) for t in admin.tasks(project_id) for a in t.get("annotations") or []}
    ids["annotation"] = annotations
    seen: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
    for call in calls:
        path = template_path(ids, call["path"])
        if path.startswith(("/static/", "/react-app/", "/label-studio-frontend/")):
            path = re.sub(r"/[^/]+$", "/{file}", path)
        key = (call["method"], path, tuple(call["query"]))
        seen.setdefault(key, {"method": key[0], "path": key[1], "query": list(key[2]), "count": 0})
        seen[key]["count"] += 1
    return {"label_studio": "1.23", "worker": "w001", "annotations_made": len(annotations),
            "calls": sorted(seen.values(), key=lambda c: (c["path"], c["method"], c["query"]))}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="posthoc-gwrec-") as folder:
        recorded = record(Path(folder))
    OUTPUT.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")
    print(f"{len(recorded['calls'])} distinct calls, {recorded['annotations_made']} annotations -> {OUTPUT}")


if __name__ == "__main__":
    main()
