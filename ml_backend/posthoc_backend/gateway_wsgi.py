"""The WSGI entry point of the gateway's authoriser for gunicorn: ``gunicorn posthoc_backend.gateway_wsgi:app``.

Configuration from the environment only (:func:`posthoc_backend.gateway.app_from_environment`):
``POSTHOC_MANIFEST``, ``LABEL_STUDIO_URL``, ``LABEL_STUDIO_TOKEN``, ``POSTHOC_ACCOUNTS_FILE``,
``POSTHOC_GATEWAY_OWNERS``.
"""

from __future__ import annotations

from posthoc.atomic import owner_only_umask
from posthoc_backend.gateway import app_from_environment

owner_only_umask()  # its logs and stores are its owner's alone (issue 47)
app = app_from_environment()
