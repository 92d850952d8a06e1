"""The WSGI entry point for gunicorn: ``gunicorn posthoc_backend.wsgi:app``.

Configuration comes from the environment only (see
:func:`posthoc_backend.app.app_from_environment`): ``POSTHOC_MANIFEST``, ``POSTHOC_ALIAS_FILES``,
``POSTHOC_BACKEND_SECRET``, ``POSTHOC_EVENTS_DB``.
"""

from __future__ import annotations

from posthoc_backend.app import app_from_environment

app = app_from_environment()
