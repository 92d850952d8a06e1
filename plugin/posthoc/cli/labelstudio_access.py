"""How every command that talks to Label Studio finds it: one definition, used by all of them.

* Label Studio's URL: ``--url`` (``--ls-url`` for the gateway's nginx), else env ``POSTHOC_LS_URL``;
* the API token: env ``POSTHOC_LS_TOKEN``, else ``LABEL_STUDIO_TOKEN`` (or the variable ``--token-env`` names, where a
  command has that option); a token is never a command-line value.

``eval "$(posthoc ls env --data-dir DIR)"`` exports ``POSTHOC_LS_URL`` and ``LABEL_STUDIO_TOKEN`` for a local server,
so that every such command then runs without ``--url``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from posthoc.errors import PosthocInputError

URL_ENV = "POSTHOC_LS_URL"
#: the variables an API token is read from, first set wins
TOKEN_ENVS = ("POSTHOC_LS_TOKEN", "LABEL_STUDIO_TOKEN")
LOCAL_SERVER_HINT = ("`eval \"$(posthoc ls env --data-dir DIR)\"` sets it for a local server; a token is never a "
              "command-line value")

F = TypeVar("F", bound=Callable[..., Any])


def url_option(purpose: str, *, name: str = "--url", dest: str = "ls_url",
               required: bool = False) -> Callable[[F], F]:
    """The option giving Label Studio's URL, read from env ``POSTHOC_LS_URL`` when not given; ``purpose`` says what
    the command does with it (the environment variable is added)."""
    return click.option(name, dest, envvar=URL_ENV, required=required, default=None,
                        help=f"{purpose} (or env {URL_ENV}, as `eval \"$(posthoc ls env)\"` sets it)")


def token_env_option(func: F) -> F:
    """``--token-env NAME``: read the API token from another environment variable than the usual ones."""
    return click.option("--token-env", default=None, metavar="NAME",
                        help="Name of the environment variable holding the Label Studio API token [default: "
                             f"{' or '.join(TOKEN_ENVS)}, the first set]; never pass a token itself.")(func)


def api_token(token_env: str | None = None) -> str | None:
    """The API token from the environment: the variable ``token_env`` when given, else the first of
    :data:`TOKEN_ENVS` that is set; ``None`` when none is."""
    for name in (token_env,) if token_env else TOKEN_ENVS:
        value = os.environ.get(name)
        if value:
            return value
    return None


def require_api_token(token_env: str | None = None) -> str:
    """:func:`api_token`, or a :class:`~posthoc.errors.PosthocInputError` naming the variables to set."""
    token = api_token(token_env)
    if not token:
        names = token_env or " or ".join(TOKEN_ENVS)
        raise PosthocInputError(f"no Label Studio API token: set env {names} ({LOCAL_SERVER_HINT})")
    return token


def require_url(url: str | None) -> str:
    """``url`` checked as an http(s) URL, or a :class:`~posthoc.errors.PosthocInputError` saying how to give it."""
    from posthoc.labelstudio.url import check_url

    if not url:
        raise PosthocInputError(f"give Label Studio's URL with --url or env {URL_ENV}")
    check_url(url)
    return url
