"""A value made at its first use, once, also when several threads ask for it at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """``Lazy(make)()`` is ``make()``, called at the first call only (under a lock); later calls return the same
    value. For what a run may not need at all (a manifest's index when nothing changed)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._made = False
        self._value: T | None = None

    def __call__(self) -> T:
        with self._lock:
            if not self._made:
                self._value = self._make()
                self._made = True
            return self._value  # type: ignore[return-value]
