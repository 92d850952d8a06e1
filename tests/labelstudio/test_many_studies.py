"""Many studies on one Label Studio (issue 30): logins unique per study by default, and a flag given after a
failed attempt that takes effect, or is refused with a message that says why. Against the real server.

Two studies planned with the same worker ids (w001..w003) are created with default flags, annotated as their
own workers and scored: both usable, their logins, projects and judgements separate. A third study meets a
login somebody else holds: the run makes no account, and the rerun the message proposes works.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lsfixtures import run_backend, small_sample_manifest
from posthoc.errors import PosthocInputError, PosthocServiceError
from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
from posthoc.jobs.simulate import SimulationConfig, annotate_stream, plan_decisions
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.users import login, organisation_users, study_email_domain
from posthoc.paths import label_config
from posthoc.study.plan.logins import default_accounts_file, read_accounts
from posthoc.study.plan.study import Study

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]

TWINS = ("twins-a", "twins-b")  # two studies, one server, the same worker ids


@pytest.fixture(scope="module")
def twins(ls_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    made = {}
    for name in TWINS:
        folder = tmp_path_factory.mktemp(name)
        manifest = small_sample_manifest(folder / "manifest.sqlite", name=name, n_workers=3, control_tasks=False)
        with run_backend(manifest.path) as backend_url:
            setup = create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                              backend_url=backend_url))
        made[name] = {"manifest": manifest, "setup": setup, "folder": folder}
    return made


def test_two_studies_with_the_same_worker_ids_get_their_own_logins(twins: Any, ls_server: Any) -> None:
    emails = {}
    for name, study in twins.items():
        manifest, setup = study["manifest"], study["setup"]
        assert manifest.workers() == ["w001", "w002", "w003"]
        assert setup.created_users == 3 and setup.created_projects == 3
        stored = read_accounts(default_accounts_file(Path(manifest.path)))
        for worker in manifest.workers():
            email = stored[worker]["email"]
            assert email == f"{worker}@{study_email_domain(name)}" == f"{worker}@{name}.posthoc.local"
            session = login(ls_server.url, email, stored[worker]["password"])
            assert session is not None, f"{email} cannot log in"
            session.close()
        emails[name] = {stored[w]["email"] for w in manifest.workers()}
    assert not emails[TWINS[0]] & emails[TWINS[1]]
    members = organisation_users(LabelStudioClient(ls_server.url, ls_server.token))
    assert emails[TWINS[0]] | emails[TWINS[1]] <= set(members)


def test_each_study_has_its_projects_and_tasks_as_planned(twins: Any, ls_server: Any) -> None:
    client = LabelStudioClient(ls_server.url, ls_server.token)
    ids = [set(study["setup"].project_ids().values()) for study in twins.values()]
    assert not ids[0] & ids[1]
    for study in twins.values():
        manifest = study["manifest"]
        for project in study["setup"].projects:
            keys = [t["data"]["task_key"] for t in client.tasks(project.project_id)]
            assert keys == manifest.tasks(project.worker)["task_key"].tolist()


def test_each_studys_workers_annotate_and_score_separately(twins: Any, ls_server: Any, tmp_path: Path) -> None:
    """w001 of each study works their own stream with their own login; each study's score counts exactly its
    own annotations, under its own worker ids, and the other study's never."""
    from posthoc.jobs.score import JudgementSource, ScoreOptions, run_score_job
    from posthoc.labelstudio.label_config import verification_tags
    from posthoc.labelstudio.users import ensure_user

    tags = verification_tags(label_config("entity_verification"))
    posted: dict[str, int] = {}
    for name, study in twins.items():
        manifest, setup = study["manifest"], study["setup"]
        stored = read_accounts(default_accounts_file(Path(manifest.path)))
        decisions = plan_decisions(manifest.mentions(), SimulationConfig(seed=7))
        mine = decisions[decisions["worker"] == "w001"]
        account = ensure_user(ls_server.url, ls_server.token, email=stored["w001"]["email"],
                              password=stored["w001"]["password"])
        project_id = setup.project_ids()["w001"]
        posted[name] = annotate_stream(LabelStudioClient(ls_server.url, account.token), project_id, mine, tags)
        assert posted[name] == mine["task_key"].nunique() > 0
    for name, study in twins.items():
        out = tmp_path / name
        result = run_score_job(manifest_path=study["manifest"].path, out_dir=out,
                               source=JudgementSource(ls_url=ls_server.url, token=ls_server.token),
                               options=ScoreOptions(n_resamples=20))
        judgements = pd.read_csv(out / "judgements.csv")
        assert set(judgements["worker"]) == {"w001"}
        assert judgements["task_key"].nunique() == posted[name]
        own = set(study["manifest"].tasks("w001")["task_key"])
        assert set(judgements["task_key"]) <= own
        assert result.n_judgements == len(judgements)


def _cli_create(manifest: Any, ls_server: Any, backend_url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "POSTHOC_LS_TOKEN": ls_server.token}
    return subprocess.run([sys.executable, "-m", "posthoc.cli.main", "study", "create", "--manifest",
                           str(manifest.path), "--url", ls_server.url, "--backend-url", backend_url, "--no-progress",
                           *flags], capture_output=True, text=True, env=env, timeout=600, check=False)


def test_a_taken_login_fails_with_no_account_made_and_the_suggested_flag_then_works(
        ls_server: Any, ls_annotator: Any, tmp_path: Path) -> None:
    name = "taken"
    manifest = small_sample_manifest(tmp_path / "manifest.sqlite", name=name, n_workers=3, control_tasks=False)
    accounts_path = default_accounts_file(Path(manifest.path))
    ls_annotator(f"w002@{study_email_domain(name)}")  # somebody else's account at this study's default login
    client = LabelStudioClient(ls_server.url, ls_server.token)
    with run_backend(manifest.path) as backend_url:
        with pytest.raises(PosthocServiceError) as failed:
            create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                      backend_url=backend_url))
        message = str(failed.value)
        assert f"w002@{name}.posthoc.local" in message and "--email-domain" in message
        assert "this run made no account" in message
        members = organisation_users(client)
        assert f"w001@{name}.posthoc.local" not in members and f"w003@{name}.posthoc.local" not in members
        stored = read_accounts(accounts_path)
        assert all(entry.get("verified") != "yes" for entry in stored.values())

        # the flag the message proposes, given on the rerun, takes effect for every worker (through the CLI)
        done = _cli_create(manifest, ls_server, backend_url, "--email-domain", "taken-2.posthoc.local")
        assert done.returncode == 0, done.stderr
        stored = read_accounts(accounts_path)
        assert {w: e["email"] for w, e in stored.items()} == {w: f"{w}@taken-2.posthoc.local"
                                                             for w in ("w001", "w002", "w003")}
        assert "login w001@taken-2.posthoc.local" in done.stdout

        # a different flag now would orphan logins annotators may use: refused, one line, exit 2, nothing changed
        before = read_accounts(accounts_path)
        refused = _cli_create(manifest, ls_server, backend_url, "--email-domain", "elsewhere.posthoc.local")
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip().count("\n") == 0
        assert "taken-2.posthoc.local" in refused.stderr and "cannot change them" in refused.stderr
        assert read_accounts(accounts_path) == before
        assert "w001@elsewhere.posthoc.local" not in organisation_users(client)

        # without the flag, the logins made are kept: a rerun with nothing to do
        again = create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                          backend_url=backend_url))
        assert again.created_users == 0 and again.created_projects == 0
        assert {p.email for p in again.projects} == {e["email"] for e in before.values()}


def test_an_explicit_domain_equal_to_the_kept_one_is_accepted(twins: Any, ls_server: Any) -> None:
    study = twins[TWINS[0]]
    with run_backend(study["manifest"].path) as backend_url:
        target = SetupTarget(url=ls_server.url, token=ls_server.token, backend_url=backend_url)
        again = create_study(Study(study["manifest"]), target, SetupOptions(email_domain=study_email_domain(TWINS[0])))
        assert again.created_users == 0
        with pytest.raises(PosthocInputError, match="cannot change them"):
            create_study(Study(study["manifest"]), target, SetupOptions(email_domain="posthoc.local"))
