"""The predictor options of ``posthoc predict`` and ``posthoc backend serve``, made from the one registry.

Both commands take ``--predictor`` and every setting of :data:`posthoc.predictors.registry.SETTINGS` that
applies to them, spelled the same (plus the older spellings ``posthoc predict`` keeps); a new predictor or setting
is an entry there, never an edit here. The values reach the command as one keyword ``predictor``, a
:class:`~posthoc.predictors.registry.PredictorSpec` (named ``manifest`` when ``--predictor`` is not given).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from posthoc.predictors.registry import PREDICTORS, SETTINGS, PredictorSpec, Setting

_PREFIX = "predictor_"


def _click_type(setting: Setting) -> Any:
    if setting.kind == "choice":
        return click.Choice(list(setting.choices))
    if setting.kind == "path":
        return click.Path(path_type=Path)
    if setting.kind == "float":
        return click.FloatRange(min=setting.low, max=setting.high)
    if setting.kind == "int":
        return click.IntRange(min=None if setting.low is None else int(setting.low),
                              max=None if setting.high is None else int(setting.high))
    return None


def setting_option(setting: Setting, command: str) -> Callable[[Any], Any]:
    """The click option of ``setting`` in ``command`` (``predict`` or ``serve``)."""
    default = setting.default_in(command)
    return click.option(*setting.spellings_in(command), f"{_PREFIX}{setting.field}", type=_click_type(setting),
                        default=default, multiple=setting.multiple, is_flag=setting.kind == "flag",
                        show_default=default is not None and setting.kind != "flag", help=setting.help_in(command))


def predictor_choices(command: str) -> str:
    """The ``--predictor`` help's list of the built-ins and of a class by import path."""
    built_in = ", ".join(f"{entry.name} ({entry.what_in(command)})" for entry in PREDICTORS.values())
    return f"{built_in}, or package.module:Class (a label-studio-ml model class)."


def take_spec(values: dict[str, Any], command: str) -> PredictorSpec:
    """The spec in the parsed click ``values`` of ``command``, its entries taken out of ``values``."""
    name = values.pop(f"{_PREFIX}name")
    given: dict[str, Any] = {}
    for setting in (s for s in SETTINGS if command in s.commands):
        value = values.pop(f"{_PREFIX}{setting.field}")
        given[setting.field] = (tuple(str(p) for p in value) if isinstance(value, tuple)
                                else str(value) if isinstance(value, Path) else value)
    return PredictorSpec(name or "manifest", **given)


def predictor_options(command: str, *, predictor_help: str = "", required: bool = False
                      ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding ``--predictor`` and the settings ``command`` takes; the command receives ``predictor``
    (a :class:`PredictorSpec`, paths as given; ``manifest`` without ``--predictor``) instead of them."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def with_spec(**values: Any) -> Any:
            return func(predictor=take_spec(values, command), **values)

        wrapped: Callable[..., Any] = with_spec
        for setting in reversed([s for s in SETTINGS if command in s.commands]):
            wrapped = setting_option(setting, command)(wrapped)
        return click.option("--predictor", f"{_PREFIX}name", required=required, default=None,
                            help=f"{predictor_help or 'The predictor:'} {predictor_choices(command)}")(wrapped)

    return decorate
