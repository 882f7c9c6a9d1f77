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

GROUPS = ("algo", "task", "surrogate", "hardware", "tracking")  # conf/config.yaml's groups a run needs
REQUIRED = (*GROUPS, "seed", "budget", "on_error", "progress", "checkpoint_every", "sweep", "resume")
MAX_DIGITS = 4300  # Python reads longer integers only after sys.set_int_max_str_digits
_OPTIONS_WITH_VALUE = ("--config-dir", "-cd", "--config-path", "-cp", "--config-name", "-cn", "--cfg", "-c",
                       "--package", "-p", "--info", "-i", "--experimental-rerun")


def argv_error(argv: list[str]) -> str | None:
    """One line for a command line Hydra's parser would answer with its usage text or a traceback, else None.

    * an override after an option that follows other overrides (``algo=random --config-dir X task=branin``):
      argparse reads the options first, so the later overrides would be "unrecognized arguments";
    * a number longer than Python reads (``seed=<5,000 digits>``);
    * a key given twice with different values (Hydra would silently take the last);
    * ``~task``, ``~budget``, ...: a setting every run needs cannot be removed.
    """
    first_override: str | None = None
    option: str | None = None
    skip = False
    seen: dict[str, str] = {}
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
        problem = _removed(key) or _twice(seen, key, arg) or _long_choice(key, value)
        if problem:
            return problem
    return None


MAX_CHOICE = 200  # characters of one option name (file names stop at 255 bytes)


def _long_choice(key: str, value: str) -> str | None:
    """A config-group choice (``algo=<5,000 characters>``) longer than any option file's name: Hydra would look
    for that file and answer with an OSError traceback."""
    from hpoflow.config.schema import CONF_DIR

    group = key.lstrip("+~").split("@", 1)[0]
    if "." in group or not group or not (CONF_DIR / group).is_dir():
        return None
    longest = max((len(v) for v in value.split(",")), default=0)
    if longest <= MAX_CHOICE:
        return None
    return (f"{group}=<{longest} characters> is not an option of {group} (names are at most {MAX_CHOICE} "
            f"characters); allowed: the options python -m hpoflow --help lists")


def _removed(key: str) -> str | None:
    """``~task`` (or ``~budget.rounds``): a message, as every run needs it."""
    name = key.removeprefix("~")
    if key.startswith("~") and name.split(".")[0].split("/")[0] in REQUIRED:
        how = (f"choose an option ({name}=<name>)" if name in GROUPS else
               f"set its values ({name}.<key>=<value>)" if name in ("budget", "sweep") else f"set it ({name}=<value>)")
        return f"{key}: {name} cannot be removed (every run needs it); allowed: {how}"
    return None


def _twice(seen: dict[str, str], key: str, arg: str) -> str | None:
    """The same key given twice with different values: a message (Hydra would take the last silently)."""
    name = key.lstrip("+~")
    if name in seen and seen[name] != arg:
        return f"{name} is given twice ({seen[name]} and {arg}); allowed: each key once per command"
    seen.setdefault(name, arg)
    return None


def setup_error(ex: BaseException) -> str | None:
    """One line for what fails before a job runs: a broken YAML file in the config folders, a run or sweep folder
    Hydra cannot create (``hydra.run.dir`` under ``/proc``, on a file), a launcher's ConfigError; else None."""
    import traceback

    import yaml

    from hpoflow.config.settings import ConfigError

    if isinstance(ex, ConfigError):  # raised outside a job: a launcher (Ray that cannot start)
        return str(ex)
    if isinstance(ex, yaml.YAMLError):
        mark = getattr(ex, "problem_mark", None)
        where = f"{mark.name}, line {mark.line + 1}, column {mark.column + 1}" if mark else "a config file"
        problem = getattr(ex, "problem", None) or type(ex).__name__
        context = getattr(ex, "context", None)
        return (f"{where}: not valid YAML ({f'{context}: ' if context else ''}{problem}); allowed: a YAML mapping "
                "(fix the file or leave it out of --config-dir)")
    frames = traceback.extract_tb(ex.__traceback__)
    in_hydra = any("/hydra/" in f.filename.replace("\\", "/") and f.name in ("run_job", "launch", "multirun")
                   for f in frames)
    if isinstance(ex, OSError) and in_hydra and ex.filename:
        return (f"cannot create the output folder {ex.filename} ({ex.strerror}); allowed: hydra.run.dir / "
                "hydra.sweep.dir naming a folder that can be created and written")
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

    from hpoflow.core.signals import Interrupted
    from hpoflow.store.params import mask_secrets

    original: Callable[[Any], Any] = utils.run_and_report
    if getattr(original, "_hpoflow", False):
        return

    def run_and_report(func: Any) -> Any:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            return original(func)
        try:
            return func()
        except Interrupted as ex:  # a sweep's launching process (its workers already stopped, their runs KILLED)
            from hpoflow.store.callbacks import close_open_studies

            close_open_studies(interrupted=True)
            print(f"Error: {ex}: the sweep's workers were stopped and its unfinished runs are KILLED with every "
                  "completed round logged; run the same command again to resume them", file=sys.stderr, flush=True)
            sys.exit(ex.exit_code)
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
            message = one_line(ex) or setup_error(ex)
            if message is None:  # not a composition error: Hydra's own reporting (stripped traceback)
                def reraise(err: BaseException = ex) -> Any:
                    raise err

                return original(reraise)
            from hpoflow.store.callbacks import discard_open_studies

            discard_open_studies()  # refused before any job ran: no study parent run is left behind
            print(f"Error: {mask_secrets(message)}", file=sys.stderr)
            sys.exit(2)

    run_and_report._hpoflow = True  # type: ignore[attr-defined]
    utils.run_and_report = run_and_report
