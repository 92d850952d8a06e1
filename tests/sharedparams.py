"""Parameters read from ``../shared`` when a test module is imported, with the project's reason when absent.

``pytest.mark.parametrize`` over an empty list skips with pytest's own "got empty parameter set", which says
nothing of why. :func:`shared_params` gives one skipped parameter carrying the project's reason instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

ABSENT = "../shared/data is absent (it is only beside the project in CI and dev sessions)"


def shared_params(values: Iterable[Any], *, what: str) -> list[Any]:
    """``values`` as a parameter list, or one parameter skipped with the reason ``what`` is absent."""
    found = list(values)
    if found:
        return found
    return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=f"{ABSENT}: no {what}"))]
