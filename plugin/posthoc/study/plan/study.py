"""A study opened once: its manifest, the manifest's index, its workers and logins, its verification tags.

What a job step takes (CONTRIBUTING.md, "A job step"): :meth:`Study.open` reads and checks the manifest once;
everything else is read when first asked for, once (a periodic score run with nothing new never builds the
index nor parses a label config).
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from posthoc.lazy import Lazy
from posthoc.paths import label_config as bundled_config
from posthoc.study.plan.estimate_file import estimate_digest, estimate_path
from posthoc.study.plan.logins import default_accounts_file, user_workers
from posthoc.study.plan.manifest import Manifest

if TYPE_CHECKING:  # imported at their first use: a run with nothing new needs neither, nor pandas (issue 24)
    from posthoc.labelstudio.label_config import VerificationTags
    from posthoc.study.plan.index import ManifestIndex


class Study:
    """A study manifest opened once, with what is read from it when first needed.

    ``label_config``: the label config (XML) its judgements were made with, when not the bundled
    ``label_configs/entity_verification.xml`` (it decides :attr:`tags`).
    """

    def __init__(self, manifest: Manifest, *, label_config: str | None = None) -> None:
        self.manifest = manifest
        self.label_config = label_config
        self._index = Lazy(lambda: _index_of(manifest))

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, label_config: str | None = None) -> Study:
        """Open the manifest at ``path``; PosthocInputError if it is missing or not a manifest."""
        return cls(Manifest.open(Path(path)), label_config=label_config)

    @property
    def name(self) -> str:
        """The study's name (the manifest's ``study``)."""
        return str(self.manifest.study)

    @property
    def path(self) -> Path:
        """The manifest file."""
        return Path(self.manifest.path)

    @property
    def digest(self) -> str:
        """SHA-256 of the manifest file (:attr:`posthoc.study.plan.manifest.Manifest.digest`)."""
        return str(self.manifest.digest)

    @property
    def index(self) -> ManifestIndex:
        """The manifest's index (:mod:`posthoc.study.plan.index`), built at the first use, once."""
        return self._index()

    @cached_property
    def workers(self) -> list[str]:
        """The study's workers, sorted."""
        return self.manifest.workers()

    @property
    def accounts_file(self) -> Path:
        """Where the workers' generated logins are kept beside the manifest
        (:func:`posthoc.study.plan.logins.default_accounts_file`; it may not be there yet)."""
        return default_accounts_file(self.path)

    @cached_property
    def user_workers(self) -> dict[str, str]:
        """Login e-mail -> worker (:func:`posthoc.study.plan.logins.user_workers`, with the accounts file)."""
        return user_workers(self.workers, study=self.name, accounts_file=self.accounts_file)

    @cached_property
    def tags(self) -> VerificationTags:
        """The verification tags of the study's label config (:attr:`label_config`, else the bundled one)."""
        from posthoc.labelstudio.label_config import verification_tags

        text = self.label_config if self.label_config is not None else bundled_config("entity_verification")
        return verification_tags(text)

    @property
    def estimate_path(self) -> Path:
        """Where ``posthoc study estimate`` saves its estimate beside the manifest (it may not be there)."""
        return estimate_path(self.path)

    @cached_property
    def plan_digest(self) -> str:
        """The manifest's digest, and the saved estimate's when there is one (``<manifest>:<estimate>``): what
        besides the judgements and the options decides a score's outputs."""
        estimate = estimate_digest(self.path)
        return self.digest + (f":{estimate}" if estimate else "")


def _index_of(manifest: Manifest) -> ManifestIndex:
    """The manifest's index (:meth:`ManifestIndex.from_manifest`), its module (and pandas) imported here."""
    from posthoc.study.plan.index import ManifestIndex

    return ManifestIndex.from_manifest(manifest)
