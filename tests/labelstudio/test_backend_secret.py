"""Study setup with a backend that requires its shared secret (basic auth from Label Studio)."""

from __future__ import annotations

import pytest
from lsfixtures import run_backend, small_sample_manifest
from posthoc.errors import PosthocServiceError
from posthoc.labelstudio.client import LabelStudioClient
from posthoc.labelstudio.setup import create_study

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow]


def test_setup_with_the_backend_secret_prefills_and_without_it_fails(ls_server, tmp_path) -> None:
    manifest = small_sample_manifest(tmp_path / "manifest.sqlite", name="secret", n_documents=1, n_workers=3,
                                     control_tasks=False)
    with run_backend(manifest.path, secret="backend-s3cret") as backend_url:
        with pytest.raises(PosthocServiceError):
            create_study(manifest, url=ls_server.url, token=ls_server.token, backend_url=backend_url,
                         accounts_file=tmp_path / "accounts.json", email_domain="secret.posthoc.local")
        result = create_study(manifest, url=ls_server.url, token=ls_server.token, backend_url=backend_url,
                              accounts_file=tmp_path / "accounts.json", backend_secret="backend-s3cret",
                              email_domain="secret.posthoc.local")
    client = LabelStudioClient(ls_server.url, ls_server.token)
    for project in result.projects:
        (backend,) = client.ml_backends(project.project_id)
        assert backend["auth_method"] == "BASIC_AUTH"
        tasks = list(client.tasks(project.project_id))
        assert tasks and all(len(t["predictions"]) == 1 for t in tasks)
