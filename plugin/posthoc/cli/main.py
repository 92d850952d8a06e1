"""Entry point of the ``posthoc`` command.

Sub-commands are registered in :data:`COMMANDS` as ``"group sub": "module:attribute"`` and imported
only when used, so ``posthoc --help`` is fast and one area's heavy imports never slow another.
Every command turns :class:`~posthoc.errors.PosthocInputError` and
:class:`~posthoc.errors.PosthocServiceError` into one line on stderr and exit code 2 (3 for a
service), never a traceback; its ``--help`` lists its exit codes (:mod:`posthoc.cli.exit_codes`).
"""

from __future__ import annotations

import errno
import importlib
import sqlite3
import sys
from typing import Any

import click

from posthoc.atomic import owner_only_umask
from posthoc.cli.exit_codes import EXIT_INPUT, EXIT_SERVICE, with_exit_codes
from posthoc.errors import PosthocInputError, PosthocServiceError

#: command path -> "module:attribute" of a click.Command; groups are made from the paths.
COMMANDS: dict[str, str] = {
    "study plan": "posthoc.cli.plan:plan_command",
    "study create": "posthoc.cli.setup:create_command",
    "study status": "posthoc.cli.status:status_command",
    "study estimate": "posthoc.cli.estimate:estimate_command",
    "study extend": "posthoc.cli.extend:extend_command",
    "study reassign": "posthoc.cli.extend:reassign_command",
    "study login": "posthoc.cli.study_accounts:login_command",
    "study retire": "posthoc.cli.study_accounts:retire_command",
    "ls start": "posthoc.cli.ls:start_command",
    "ls stop": "posthoc.cli.ls:stop_command",
    "ls status": "posthoc.cli.ls:status_command",
    "ls env": "posthoc.cli.ls:env_command",
    "backend serve": "posthoc.cli.backend:serve_command",
    "demo": "posthoc.cli.demo:demo_command",
    "score": "posthoc.cli.score:score_command",
    "crowdtruth": "posthoc.cli.crowdtruth:crowdtruth_command",
    "flags check": "posthoc.cli.flags:check_command",
    "flags review": "posthoc.cli.flags:review_command",
    "flags apply": "posthoc.cli.flags:apply_command",
    "kb build": "posthoc.cli.kb:build_command",
    "sequence": "posthoc.cli.sequence:sequence_command",
    "predict": "posthoc.cli.predict:predict_command",
    "gateway config": "posthoc.cli.gateway:config_command",
    "gateway serve": "posthoc.cli.gateway:serve_command",
    "gateway run": "posthoc.cli.gateway:run_command",
}

GROUP_HELP: dict[str, str] = {
    "study": "Plan a posthoc verification study and set it up in Label Studio.",
    "ls": "Run a local Label Studio on loopback, on SQLite (the demo, a small study) or PostgreSQL (many "
          "annotators at once, a study kept for months), with the study gateway beside it if asked.",
    "backend": "The ML backend that pre-fills every task with a system's annotations.",
    "flags": "Eaglet's rule-based error flags for gold standards, and their review in Label Studio.",
    "kb": "Wikipedia's own dumps (page, redirect, page_props) as an offline knowledge-base index.",
    "gateway": "The study gateway: nginx in front of Label Studio, each annotator confined to their own batch.",
}

#: click >= 8.2 raises this (a UsageError) for a group called without a command; it shows the help
_NO_ARGS_HELP: type[click.UsageError] | None = getattr(click.exceptions, "NoArgsIsHelpError", None)


class _LazyGroup(click.Group):
    """A click group whose leaf commands are imported on first use."""

    def __init__(self, *args: Any, prefix: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prefix = prefix

    def _children(self) -> dict[str, str | None]:
        children: dict[str, str | None] = {}
        depth = len(self.prefix.split()) if self.prefix else 0
        for path, target in COMMANDS.items():
            words = path.split()
            if words[:depth] != (self.prefix.split() if self.prefix else []):
                continue
            name = words[depth]
            children[name] = target if len(words) == depth + 1 else None
        return children

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._children())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        children = self._children()
        if cmd_name not in children:
            return None
        target = children[cmd_name]
        if target is None:
            prefix = f"{self.prefix} {cmd_name}".strip()
            return _LazyGroup(name=cmd_name, prefix=prefix, help=GROUP_HELP.get(cmd_name))
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return click.Command(cmd_name, help="(not available in this build)", hidden=True)
        command = getattr(module, attribute)
        assert isinstance(command, click.Command)
        command.epilog = with_exit_codes(command.epilog)  # every command's help says its exit codes
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="posthoc-review")
def cli() -> None:
    """posthoc: posthoc verification of annotations in Label Studio.

    Plan a study from a corpus, its ground truth and systems' outputs; set it up in Label Studio
    with an ML backend that pre-fills every task; let annotators verify, edit or remove each
    annotation; then export and score it into tables and an HTML report.
    Run "posthoc COMMAND --help" for the options of each command.
    """


_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; bad input and unreachable services end in one line and a non-zero exit. Everything it (and what
    it starts: Label Studio, the backend, the gateway) writes is its owner's alone (:func:`owner_only_umask`)."""
    owner_only_umask()
    try:
        cli.main(args=argv, prog_name="posthoc", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        if _NO_ARGS_HELP is not None and isinstance(exc, _NO_ARGS_HELP):
            exc.show()  # `posthoc study` alone: the group's help, as click shows it
            sys.exit(exc.exit_code)
        where = exc.ctx.command_path if exc.ctx is not None else "posthoc"
        message = " ".join(exc.format_message().split())
        click.echo(f"posthoc: error: {message} (see '{where} --help')", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"posthoc: error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(exc.exit_code)
    except PosthocInputError as exc:
        click.echo(f"posthoc: error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except PosthocServiceError as exc:
        click.echo(f"posthoc: service error: {exc}", err=True)
        sys.exit(EXIT_SERVICE)
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            raise
        # a full disk or a read-only / forbidden folder: the outputs are staged, so nothing partial is left
        where = exc.filename or "the output folder"
        click.echo(f"posthoc: error: cannot write {where}: {exc.strerror}; free space or choose another folder",
                   err=True)
        sys.exit(EXIT_INPUT)
    except SystemExit:
        raise
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # a service failure no command wrapped: still one line and exit 3
        reason = _service_failure(exc)
        if reason is None:
            raise
        click.echo(f"posthoc: service error: {reason}", err=True)
        sys.exit(EXIT_SERVICE)


def _service_failure(exc: Exception) -> str | None:
    """One line for an HTTP failure (requests, httpx, the Label Studio SDK) or a SQLite file locked by another
    process (``sqlite3.OperationalError: database is locked``), ``None`` for anything else."""
    from posthoc.errors import connection_failure

    if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
        return (f"SQLite says '{exc}': another process holds a lock on a SQLite file this command uses (the study "
                "manifest, the backend's event store, or a local Label Studio's database) for longer than this "
                "command waits; retry when it has finished (a Label Studio on SQLite with many annotators at once: "
                "move it to PostgreSQL, docs/labelstudio.md 'How many at once')")
    module = type(exc).__module__.split(".")[0]
    if module not in {"requests", "urllib3", "httpx", "httpcore", "label_studio_sdk"}:
        return None
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    url = getattr(getattr(exc, "request", None), "url", None)
    where = f" at {url}" if url else ""
    if status:
        return f"the service{where} answered HTTP {status}"
    return f"the service{where} is unreachable ({connection_failure(exc)})"


if __name__ == "__main__":
    main()
