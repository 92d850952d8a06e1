"""Label Studio's Django settings for a study's deployment: its own, plus persistent database connections.

Set ``DJANGO_SETTINGS_MODULE=posthoc.labelstudio.deployment_settings`` where Label Studio's WSGI app is served
(:class:`~posthoc.labelstudio.app_server.AppServer` does; docs/deployment.md says how for a deployed one). It is
Label Studio 1.23's own ``core/settings/label_studio.py`` run in this module's namespace, then changed in what a
profile of a study's requests showed to be pure overhead (issue 41):

* **Persistent database connections.** Label Studio leaves Django's ``CONN_MAX_AGE`` at 0: every request opens
  a new PostgreSQL connection (a backend fork and SCRAM authentication, 6.2% of a worker's CPU under Submits and
  next-task calls) and closes it. Here a connection is kept ``POSTHOC_LS_CONN_MAX_AGE`` seconds (600 unless
  set; 0 restores Label Studio's behaviour) with Django's health check (``CONN_HEALTH_CHECKS``: a connection the
  server dropped is replaced at the next request's start instead of failing it).

Why the source is run here and not imported: ``from core.settings.label_studio import *`` fails to boot, since
that file's Sentry set-up reads ``django.conf.settings`` while it is being imported, and Django then imports the
module ``DJANGO_SETTINGS_MODULE`` names, this one, which is not yet complete. Run in this module's namespace,
the file sees exactly what it sees as Label Studio's own settings module (its ``from core.settings.base import
*`` included: gunicorn's ``--pythonpath`` puts Label Studio's folder on the path).

The file imports nothing of this project, so a deployment that does not install it (Label Studio's Docker image)
copies this one file onto the server's Python path and names it in ``DJANGO_SETTINGS_MODULE``
(docs/deployment.md).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the settings file of the ``label-studio`` command in its package, run in this namespace (module docstring)
LABEL_STUDIO_SETTINGS = Path("core") / "settings" / "label_studio.py"
#: seconds a database connection is kept open between requests unless ``POSTHOC_LS_CONN_MAX_AGE`` says otherwise
DEFAULT_CONN_MAX_AGE = 600


def conn_max_age(environ: dict[str, str] | os._Environ[str]) -> int:
    """``POSTHOC_LS_CONN_MAX_AGE`` as whole seconds (0: a connection a request, Label Studio's own behaviour).

    Examples
    --------
    >>> conn_max_age({}), conn_max_age({"POSTHOC_LS_CONN_MAX_AGE": "0"})
    (600, 0)
    """
    raw = environ.get("POSTHOC_LS_CONN_MAX_AGE", str(DEFAULT_CONN_MAX_AGE)).strip()
    if not raw.isdigit():
        raise ValueError(f"POSTHOC_LS_CONN_MAX_AGE={raw!r}: give whole seconds (0 closes a connection "
                                "after each request)")
    return int(raw)


def _apply() -> None:
    import label_studio  # the server extra; imported only where Label Studio runs

    path = Path(label_studio.__file__).parent / LABEL_STUDIO_SETTINGS
    namespace = globals()
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102 (Label Studio's own file)
    database = namespace["DATABASES"]["default"]
    database["CONN_MAX_AGE"] = conn_max_age(os.environ)
    database["CONN_HEALTH_CHECKS"] = True


if os.environ.get("DJANGO_SETTINGS_MODULE") == __name__:  # as Django's settings, not when imported to be read
    _apply()
