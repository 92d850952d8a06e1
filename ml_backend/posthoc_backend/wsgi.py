"""The WSGI entry point for gunicorn: ``gunicorn posthoc_backend.wsgi:app``.

Configuration comes from the environment only (see
:func:`posthoc_backend.app.app_from_environment`): ``POSTHOC_MANIFEST``, ``POSTHOC_ALIAS_FILES``,
``POSTHOC_BACKEND_SECRET``, ``POSTHOC_EVENTS_DB``.
"""

from __future__ import annotations

from posthoc.atomic import owner_only_umask
from posthoc_backend.app import app_from_environment

owner_only_umask()  # its logs and stores are its owner's alone (issue 47)
app = app_from_environment()
