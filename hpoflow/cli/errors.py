"""One-line errors for bad input: compress Hydra's multi-line composition errors.

Hydra prints config-composition errors over several lines plus a hint; a user who mistyped one
override wants one line naming the key and what is allowed. ``HYDRA_FULL_ERROR=1`` keeps Hydra's own
behaviour (full traceback). Hydra has no hook for this, so its reporter is wrapped (a private function:
the wrapper falls back to the original for anything it does not recognise).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from hpoflow.config.compose import one_line

MAX_DIGITS = 4300  # Python reads longer integers only after sys.set_int_max_str_digits
_OPTIONS_WITH_VALUE = ("--config-dir", "-cd", "--config-path", "-cp", "--config-name", "-cn", "--cfg", "-c",
                       "--package", "-p", "--info", "-i", "--experimental-rerun")


def argv_error(argv: list[str]) -> str | None:
    """One line for a command line Hydra's parser would answer with its usage text or a traceback, else None.

    * an override after an option that follows other overrides (``algo=random --config-dir X task=branin``):
      argparse reads the options first, so the later overrides would be "unrecognized arguments";
    * a number longer than Python reads (``seed=<5,000 digits>``).
    """
    first_override: str | None = None
    option: str | None = None
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            if first_override is not None:
                option = option or arg
            skip = arg in _OPTIONS_WITH_VALUE
            continue
        key, _, value = arg.partition("=")
        digits = value.lstrip("+-").replace("_", "")
        if digits.isdigit() and len(digits) > MAX_DIGITS:
            return (f"{key}=<{len(digits)} digits> is not a usable number (at most {MAX_DIGITS} digits; "
                    f"e.g. seeds are 0 to {2**63 - 1})")
        if option is not None:
            return (f"the option '{option}' comes after the override '{first_override}': Hydra reads options "
                    f"first; put every option before the overrides (python -m hpoflow {option} ... "
                    f"{first_override} {arg})")
        first_override = first_override or arg
    return None


class JobFailed(RuntimeError):
    """A multirun job failed; it already printed its one-line error (the sweep goes on without it).

    ``status`` is the exit status the sweep ends with: 2 for bad input (a config error), 1 for a failed run.
    """

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def install() -> None:
    """Wrap Hydra's error reporter so that composition errors print one line and exit with status 2."""
    from hydra._internal import utils

    from hpoflow.store.params import mask_secrets

    original: Callable[[Any], Any] = utils.run_and_report
    if getattr(original, "_hpoflow", False):
        return

    def run_and_report(func: Any) -> Any:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            return original(func)
        try:
            return func()
        except JobFailed as ex:  # raised by the sweeper after every job of the batch has run
            from hpoflow.store.callbacks import close_open_studies

            close_open_studies()  # the study's account and its parent run's status
            print(f"Error: the sweep had failed jobs (the others ran); first: {mask_secrets(str(ex))}", file=sys.stderr)
            sys.exit(ex.status)
        except Exception as ex:  # noqa: BLE001 - recognised errors become one line, the rest go to Hydra
            status = getattr(ex, "exit_status", None)
            if isinstance(status, int) and not isinstance(status, bool):  # a launcher's one-line error (Ray's)
                from hpoflow.store.callbacks import close_open_studies

                line = mask_secrets(" ".join(str(ex).split()))
                close_open_studies(error=line)
                print(f"Error: {line}", file=sys.stderr)
                sys.exit(status)
            message = one_line(ex)
            if message is None:  # not a composition error: Hydra's own reporting (stripped traceback)
                def reraise(err: BaseException = ex) -> Any:
                    raise err

                return original(reraise)
            print(f"Error: {mask_secrets(message)}", file=sys.stderr)
            sys.exit(2)

    run_and_report._hpoflow = True  # type: ignore[attr-defined]
    utils.run_and_report = run_and_report
