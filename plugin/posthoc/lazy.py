"""Values made at their first use: once (:class:`Lazy`, also when several threads ask at once) or once a thread
(:class:`PerThread`: a connection that may not be shared between threads)."""

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


class PerThread(Generic[T]):
    """``PerThread(make)()`` is ``make()`` called at a thread's first call; that thread's later calls return the same
    value (:meth:`peek`: the thread's value, None before its first call or after :meth:`forget`)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._local = threading.local()

    def __call__(self) -> T:
        value: T | None = getattr(self._local, "value", None)
        if value is None:
            value = self._make()
            self._local.value = value
        return value

    def peek(self) -> T | None:
        value: T | None = getattr(self._local, "value", None)
        return value

    def forget(self) -> None:
        self._local.value = None
