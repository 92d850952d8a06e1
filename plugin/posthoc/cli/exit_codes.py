"""What every ``posthoc`` command's ``--help`` says about its exit codes (README: 0 done, 2 bad input, 3 a service).

:func:`exit_codes_epilog` is the text; ``posthoc.cli.main`` adds it to every command whose own epilog does not
already list its codes (``posthoc score`` does: it has 10 and 4 too), so that no command goes without.
"""

from __future__ import annotations

from collections.abc import Mapping

EXIT_OK = 0
EXIT_INPUT = 2
EXIT_SERVICE = 3
HEADING = "Exit codes:"

STANDARD: dict[int, str] = {
    EXIT_OK: "done",
    EXIT_INPUT: "bad input (a file, an option, a manifest): one line on stderr",
    EXIT_SERVICE: "a service (Label Studio, the ML backend, a linker) unreachable or refusing: one line on stderr",
}


def exit_codes_epilog(extra: Mapping[int, str] | None = None, *, done: str | None = None) -> str:
    """The help's "Exit codes:" block: the standard codes, ``done`` saying what 0 means here, and ``extra``
    codes of this command, in the order 0, the extra ones, 2, 3. Click keeps its lines as they are."""
    codes = {EXIT_OK: done or STANDARD[EXIT_OK], **dict(extra or {}),
             **{code: text for code, text in STANDARD.items() if code != EXIT_OK}}
    lines = [f"  {code:<4}{text}" for code, text in codes.items()]
    return "\n".join(["\b", HEADING, *lines])


def with_exit_codes(epilog: str | None) -> str:
    """``epilog`` with the standard exit codes after it, unless it already lists the command's codes."""
    if epilog and HEADING in epilog:
        return epilog
    return f"{epilog}\n\n{exit_codes_epilog()}" if epilog else exit_codes_epilog()
