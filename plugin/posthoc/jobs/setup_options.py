"""What a ``posthoc study create`` run is asked for: where the study goes (:class:`SetupTarget`) and how the run
behaves (:class:`SetupOptions`), each one value; :func:`posthoc.jobs.setup.create_study` takes both with the
opened study (:class:`posthoc.study.plan.study.Study`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from posthoc.labelstudio.backend import BACKEND_WAIT

CONCURRENCY = 4  # workers' projects set up at once


@dataclass(frozen=True)
class SetupTarget:
    """Where a study is set up: the Label Studio at ``url`` with an admin's API ``token`` (legacy or personal
    access token), and its ML backend as Label Studio reaches it (``backend_url``; ``backend_secret``, the
    backend's shared secret, sent as basic auth). ``reset_password(email, password)``: repairs an account with
    an unknown password; only for a local server, whose data dir holds the database (``posthoc study create
    --data-dir``). The token and the secret are left out of the value's ``repr``."""

    url: str
    token: str = field(repr=False)
    backend_url: str
    backend_secret: str | None = field(default=None, repr=False)
    reset_password: Callable[[str, str], None] | None = None


@dataclass(frozen=True)
class SetupOptions:
    """How a study is set up; the defaults are ``posthoc study create``'s.

    ``accounts_file``: where generated annotator passwords are kept (0600; ``None``: beside the manifest,
    :attr:`posthoc.study.plan.study.Study.accounts_file`). ``email_domain``: the workers' logins are
    ``<worker>@<domain>``; ``None``: the study's own (``<study>.posthoc.local``, see :mod:`posthoc.jobs.accounts`).
    ``concurrency``: projects (and sign-ups) at once. ``webhook``: keep (or make again) the project webhook Label
    Studio makes for the backend, the event store's source (``--webhook``); by default it is removed, since Label
    Studio sends it inside every Submit (+36.0 ms p50 / +40.0 ms p95, ``bench/results/study_scale_bench.txt``),
    and progress is read from the API. ``setup_file``: the record of checked projects (``None``: ``<manifest
    stem>.setup.json`` beside it); ``verify``: read every project back even when the record and Label Studio's
    counts agree. ``backend_wait``: seconds to wait for the backend's first ``/health`` answer
    (:func:`~posthoc.labelstudio.backend.check_backend_health`). ``progress``: a progress bar over the workers.
    ``kb_index``: a KB index of ``posthoc kb build``; a pre-filled link that redirects is shown in the task's KB
    pages with the page a reader lands on (``--kb``; issue 42). Tasks already imported keep theirs.
    """

    accounts_file: Path | None = None
    email_domain: str | None = None
    concurrency: int = CONCURRENCY
    webhook: bool = False
    setup_file: Path | None = None
    verify: bool = False
    backend_wait: float = BACKEND_WAIT
    progress: bool = False
    kb_index: Path | None = None


__all__ = ["CONCURRENCY", "SetupOptions", "SetupTarget"]
