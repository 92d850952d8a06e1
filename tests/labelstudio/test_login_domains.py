"""The login a study's worker gets, decided before Label Studio is asked (issue 30): per study by default, kept
once Label Studio accepted it, a flag after a failed attempt applied, a conflicting flag refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.jobs.accounts import planned_logins
from posthoc.labelstudio.users import study_email_domain, worker_email

WORKERS = ["w001", "w002"]


def test_a_plain_study_name_is_its_own_domain() -> None:
    assert study_email_domain("sample") == "sample.posthoc.local"
    assert study_email_domain("wned-2026") == "wned-2026.posthoc.local"


def test_names_that_slug_alike_get_different_domains() -> None:
    first, second = study_email_domain("WNED 2026"), study_email_domain("wned_2026")
    assert first != second
    assert first == f"wned-2026-{hashlib.sha256(b'WNED 2026').hexdigest()[:6]}.posthoc.local"
    assert first.startswith("wned-2026-") and second.startswith("wned-2026-")


@pytest.mark.parametrize("name", ["Étude № 1", "研究", "x" * 90, "--", "a.b"],
                         ids=["accents and a symbol", "CJK", "90 characters", "only hyphens", "a dot"])
def test_every_name_gives_a_login_label_studio_accepts(name: str) -> None:
    domain = study_email_domain(name)
    label = domain.split(".")[0]
    assert 0 < len(label) <= 63
    assert worker_email("w001", domain=domain).endswith(f"@{domain}")  # raises on an invalid address


def test_new_workers_get_the_study_domain() -> None:
    planned = planned_logins({}, WORKERS, Path("a.json"), study="s1", email_domain=None)
    assert {w: e["email"] for w, e in planned.items()} == {"w001": "w001@s1.posthoc.local",
                                                           "w002": "w002@s1.posthoc.local"}
    assert planned["w001"]["password"] != planned["w002"]["password"]


def test_accepted_logins_are_kept_and_unaccepted_ones_follow_the_flag() -> None:
    old = {"w001": {"email": "w001@posthoc.local", "password": "p1", "verified": "yes"},
           "w002": {"email": "w002@posthoc.local", "password": "p2"}}
    planned = planned_logins(old, WORKERS, Path("a.json"), study="s1", email_domain=None)
    assert planned["w001"] == old["w001"]  # a study made before per-study logins keeps its accounts
    assert planned["w002"]["email"] == "w002@s1.posthoc.local"  # a failed attempt's login is not a promise


def test_a_flag_after_a_failed_attempt_takes_effect() -> None:
    failed = {w: {"email": f"{w}@s1.posthoc.local", "password": "p"} for w in WORKERS}
    planned = planned_logins(failed, WORKERS, Path("a.json"), study="s1", email_domain="Other.Local")
    assert [planned[w]["email"] for w in WORKERS] == ["w001@other.local", "w002@other.local"]


def test_a_flag_against_accepted_logins_is_refused_naming_the_file_and_domains() -> None:
    done = {w: {"email": f"{w}@s1.posthoc.local", "password": "p", "verified": "yes"} for w in WORKERS}
    with pytest.raises(PosthocInputError) as refused:
        planned_logins(done, WORKERS, Path("study/a.json"), study="s1", email_domain="other.local")
    message = str(refused.value)
    assert message.startswith("study/a.json:") and "s1.posthoc.local" in message and "other.local" in message
    same = planned_logins(done, WORKERS, Path("a.json"), study="s1", email_domain="s1.posthoc.local")
    assert same == done
