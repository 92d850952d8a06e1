"""An Eaglet rule is registered by its class alone: its name, order and flag names (issue 43)."""

from __future__ import annotations

import inspect
import pkgutil

import posthoc.eaglet.rules as rules_package
from posthoc.eaglet import flags, pipeline, report
from posthoc.eaglet.rules import DEFAULT_ORDER, FLAG_RULES, RULE_TYPES


def test_every_rule_class_of_the_package_is_registered_once_in_its_order() -> None:
    defined = {item for info in pkgutil.iter_modules(rules_package.__path__)
               for _, item in inspect.getmembers(__import__(f"posthoc.eaglet.rules.{info.name}", fromlist=["x"]),
                                                 inspect.isclass)
               if item.__name__.endswith("Rule") and item.__module__.startswith("posthoc.eaglet.rules.")
               and item.__module__ != "posthoc.eaglet.rules.base"}
    assert set(RULE_TYPES) == defined and len(RULE_TYPES) == len(defined)
    assert [rule.order for rule in RULE_TYPES] == sorted(rule.order for rule in RULE_TYPES)


def test_the_pipeline_and_the_flags_table_derive_their_lists_from_the_classes() -> None:
    assert pipeline.DEFAULT_ORDER == DEFAULT_ORDER == tuple(rule.name for rule in RULE_TYPES)
    assert flags.RULES == FLAG_RULES
    assert [rule.name for rule in pipeline.default_pipeline().rules] == list(DEFAULT_ORDER)
    # the paper's order (paper 003, Sect. 4.3), which the flags table's row order follows
    assert DEFAULT_ORDER[0] == "long_description" and DEFAULT_ORDER[-1] == "missing_entity"


def test_each_rule_gets_exactly_its_pipeline_options() -> None:
    built = pipeline.default_pipeline(touching=True, normalise="casefold", min_votes=3, cross_line_breaks=True)
    by_name = {rule.name: rule for rule in built.rules}
    assert by_name["overlapping"].touching is True  # type: ignore[attr-defined]
    assert by_name["combined_marking"].touching is False  # type: ignore[attr-defined]  (its own default)
    assert by_name["combined_marking"].cross_line_breaks is True  # type: ignore[attr-defined]
    assert by_name["inconsistent_marking"].normalise == "casefold"  # type: ignore[attr-defined]
    assert by_name["missing_entity"].min_votes == 3  # type: ignore[attr-defined]


def test_every_flag_name_has_a_column_in_the_report_table() -> None:
    assert set(FLAG_RULES) == set(report.SHARE_RULES) | set(report.COUNT_RULES) == set(report.ABBREVIATIONS)
