"""One-line errors for bad input: compress Hydra's multi-line composition errors.

Hydra prints config-composition errors over several lines plus a hint; a user who mistyped one
override wants one line naming the key and what is allowed. ``HYDRA_FULL_ERROR=1`` keeps Hydra's own
behaviour (full traceback). Hydra has no hook for this, so its reporter is wrapped (a private function:
the wrapper falls back to the original for anything it does not recognise).
"""
from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable
from typing import Any


class JobFailed(RuntimeError):
    """A multirun job failed; it already printed its one-line error (the sweep goes on without it).

    ``status`` is the exit status the sweep ends with: 2 for bad input (a config error), 1 for a failed run.
    """

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


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


def one_line(ex: BaseException) -> str | None:
    """A one-line message for a Hydra/OmegaConf composition error, or None if it is not one."""
    from hydra.errors import CompactHydraException, MissingConfigException
    from omegaconf.errors import OmegaConfBaseException

    if isinstance(ex, MissingConfigException) or (isinstance(ex, CompactHydraException) and
                                                   "Could not find" in str(ex)):
        text = str(ex).split("Config search path")[0]
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        head = lines[0].removeprefix("In 'config': ")
        options = [ln for ln in lines[1:] if not ln.endswith(":")]
        if any(f"hydra/launcher/{p}" in head for p in ("ray", "submitit")):
            head += " (the launcher plugin is not installed: pip install 'hpoflow[cluster]')"
        return f"{head}; allowed: {', '.join(options)}" if options else head
    ambiguous = re.match(r"Ambiguous value for argument '([^']*)'", str(ex))
    if ambiguous:  # a comma list without -m
        arg = ambiguous.group(1)
        return (f"'{arg}' gives several values: to run one job per value add -m (python -m hpoflow -m {arg} ...); "
                f"for a list value write {arg.split('=')[0]}=[{arg.split('=', 1)[-1]}], for one string quote it")
    if isinstance(ex, CompactHydraException):
        cause = ex.__cause__
        head = _tidy(str(ex).splitlines()[0])
        if isinstance(cause, OmegaConfBaseException):
            first = str(cause).splitlines()[0]
            allowed = ""
            obj = getattr(cause, "object_type", None)
            if "not in" in first and obj is not None and dataclasses.is_dataclass(obj):
                allowed = "; allowed keys: " + ", ".join(f.name for f in dataclasses.fields(obj))
            key = getattr(cause, "full_key", None)
            return f"{head}: {first}" + (f" (key: {key})" if key else "") + allowed
        return " ".join(str(ex).split())
    return None


def _tidy(head: str) -> str:
    """Hydra's heads without a doubled "Error" or stray punctuation: "Error merging override x" -> "cannot apply
    the override x", "Could not override 'a.b'." -> "cannot override 'a.b'"."""
    head = head.strip().rstrip(".").rstrip(":")
    if head.startswith("Error merging override "):
        head = "cannot apply the override " + head.removeprefix("Error merging override ")
    elif head.startswith("Could not override "):
        head = "cannot override " + head.removeprefix("Could not override ")
    elif head.startswith("Error "):
        head = head.removeprefix("Error ")
    return head


def install() -> None:
    """Wrap Hydra's error reporter so that composition errors print one line and exit with status 2."""
    from hydra._internal import utils

    from hpoflow.tracking.params import mask_secrets

    original: Callable[[Any], Any] = utils.run_and_report
    if getattr(original, "_hpoflow", False):
        return

    def run_and_report(func: Any) -> Any:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            return original(func)
        try:
            return func()
        except JobFailed as ex:  # raised by the sweeper after every job of the batch has run
            from hpoflow.tracking.callbacks import close_open_studies

            close_open_studies()  # the study's account and its parent run's status
            print(f"Error: the sweep had failed jobs (the others ran); first: {mask_secrets(str(ex))}", file=sys.stderr)
            sys.exit(ex.status)
        except Exception as ex:  # noqa: BLE001 - recognised errors become one line, the rest go to Hydra
            message = one_line(ex)
            if message is None:  # not a composition error: Hydra's own reporting (stripped traceback)
                def reraise(err: BaseException = ex) -> Any:
                    raise err

                return original(reraise)
            print(f"Error: {mask_secrets(message)}", file=sys.stderr)
            sys.exit(2)

    run_and_report._hpoflow = True  # type: ignore[attr-defined]
    utils.run_and_report = run_and_report
