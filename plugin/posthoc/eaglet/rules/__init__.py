"""One module per error type of paper 003 (Sect. 3.4), each a configurable, independent rule.

A rule registers itself by being a class in a module of this package with ``order``, ``flag_rules`` and
``pipeline_options`` (:class:`~posthoc.eaglet.rules.base.Rule`): :data:`RULE_TYPES` finds every one, in
``order``, and the pipeline's :data:`DEFAULT_ORDER` and the flags table's rule names (:data:`FLAG_RULES`,
``posthoc.eaglet.flags.RULES``) come from it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Final, cast

from posthoc.eaglet.rules.base import Annotation, CheckContext, Flag, Rule


def _registered() -> tuple[type[Rule], ...]:
    """Every rule class of the package's modules, in ``order`` (two with one order: an error at import)."""
    found: list[type[Rule]] = []
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        found += [cast("type[Rule]", item) for _, item in inspect.getmembers(module, inspect.isclass)
                  if item.__module__ == module.__name__ and isinstance(getattr(item, "order", None), int)
                  and callable(getattr(item, "run", None))]
    orders = [item.order for item in found]
    if len(set(orders)) != len(orders):
        raise RuntimeError(f"two Eaglet rules share an order: {sorted(orders)}")
    return tuple(sorted(found, key=lambda item: item.order))


RULE_TYPES: Final = _registered()
DEFAULT_ORDER: Final = tuple(str(item.name) for item in RULE_TYPES)
FLAG_RULES: Final = tuple(flag for item in RULE_TYPES for flag in item.flag_rules)

__all__ = ["DEFAULT_ORDER", "FLAG_RULES", "RULE_TYPES", "Annotation", "CheckContext", "Flag", "Rule"]
