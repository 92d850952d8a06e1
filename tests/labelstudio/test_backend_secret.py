"""Study setup with a backend that requires its shared secret (basic auth from Label Studio)."""

from __future__ import annotations

import pytest

from lsfixtures import run_backend, small_sample_manifest
from posthoc.errors import PosthocServiceError
from posthoc.jobs.setup import SetupOptions, SetupTarget, create_study
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.study.live.events import EventStore
from posthoc.study.plan.study import Study
from posthoc_backend.auth import webhook_token

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


def test_setup_with_the_backend_secret_prefills_and_without_it_fails(ls_server, tmp_path) -> None:
    """With ``--webhook`` (what is tested here is the webhook's token) the webhook carries the derived token."""
    manifest = small_sample_manifest(tmp_path / "manifest.sqlite", name="secret", n_documents=1, n_workers=3,
                                     control_tasks=False)
    events = tmp_path / "events.sqlite"
    with run_backend(manifest.path, secret="backend-s3cret", events_db=events) as backend_url:
        with pytest.raises(PosthocServiceError):
            create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                      backend_url=backend_url),
                         SetupOptions(accounts_file=tmp_path / "accounts.json", email_domain="secret.posthoc.local"))
        result = create_study(Study(manifest), SetupTarget(url=ls_server.url, token=ls_server.token,
                                                           backend_url=backend_url, backend_secret="backend-s3cret"),
                              SetupOptions(accounts_file=tmp_path / "accounts.json",
                                           email_domain="secret.posthoc.local", webhook=True))
        client = LabelStudioClient(ls_server.url, ls_server.token)
        # Label Studio's webhook to the backend carries the derived token (never the secret), so the
        # backend's /webhook accepts and records an annotation
        project_id = result.projects[0].project_id
        hooks = [h for h in client.get("/api/webhooks/", project=project_id)
                 if str(h["url"]).rstrip("/") == f"{backend_url}/webhook"]
        assert len(hooks) == 1 and hooks[0]["headers"] == {"Authorization": f"Bearer {webhook_token('backend-s3cret')}"}
        assert "backend-s3cret" not in str(hooks[0])
        task = next(iter(client.tasks(project_id)))
        client.post(f"/api/tasks/{task['id']}/annotations/", {"result": task["predictions"][0]["result"]})
        recorded = EventStore(events).events()
        assert (recorded["action"] == "ANNOTATION_CREATED").sum() == 1
        created = recorded.loc[recorded["action"] == "ANNOTATION_CREATED", "task_key"].tolist()
        assert created == [task["data"]["task_key"]]
    for project in result.projects:
        (backend,) = client.ml_backends(project.project_id)
        assert backend["auth_method"] == "BASIC_AUTH"
        tasks = list(client.tasks(project.project_id))
        assert tasks and all(len(t["predictions"]) == 1 for t in tasks)
