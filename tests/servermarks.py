"""Every test that starts a server carries its marker, so that ``-m "not labelstudio and not browser and not nginx
and not slow"`` (CONTRIBUTING.md, "Before a commit") starts none: Label Studio (and PostgreSQL under it) through
the ``ls_template`` fixture every Label Studio fixture builds on, chromium through ``browser``, nginx through
``nginx_binary``. ``tests/conftest.py`` refuses a run whose collection holds a test that uses one unmarked.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

#: fixture that starts a server (directly or through the fixtures built on it) -> the marker its tests carry
SERVER_FIXTURES: Final = {"ls_template": "labelstudio", "browser": "browser", "nginx_binary": "nginx"}


def unmarked_server_tests(items: Iterable[Any]) -> list[str]:
    """``nodeid: needs @pytest.mark.<marker> (uses <fixture>)`` for every item using a server fixture unmarked.

    ``fixturenames`` of a pytest item is the closure of what it requests, so a test that asks for ``ls_server``
    (or ``ls_project``, ``tiny_study``, ...) lists ``ls_template`` too.
    """
    found = []
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, marker in SERVER_FIXTURES.items():
            if fixture in used and item.get_closest_marker(marker) is None:
                found.append(f"{item.nodeid}: needs @pytest.mark.{marker} (uses {fixture})")
    return found
