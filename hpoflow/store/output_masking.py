"""Every line the CLI and its libraries print or log goes through :func:`hpoflow.store.params.mask_secrets`
(at most :data:`MAX_LINE` characters of a line are masked and shown).

``install()`` (called first thing by ``python -m hpoflow`` and ``python -m hpoflow.report``) wraps
``sys.stdout`` and ``sys.stderr`` so that Hydra's launcher lines, warnings, MLflow's messages and tracebacks are
masked on their way out, replaces the log-record factory so that every logging handler (the console and Hydra's
per-job log file alike) writes masked messages, and turns off MLflow's own ``View run ... at: <uri>`` line (the
run summary prints ours, masked). Written by hand: neither Hydra nor MLflow has a hook for redacting output.
"""
from __future__ import annotations

import io
import logging
import os
import sys
from typing import Any, TextIO

from hpoflow.store.params import REDACTED, mask_secrets

MAX_LINE = 16_384  # characters of one line that are masked and echoed; the rest is counted, not shown


def mask_line(line: str) -> str:
    """:func:`mask_secrets` of one line, at most :data:`MAX_LINE` characters of it, so the cost is bounded whatever
    the line's length. The line is cut after a space (else after a ``/`` or ``@``, which no secret's value spans
    without its key or scheme before them) and the cut token, which a secret may run on past, becomes ``***``; a
    head with no space, ``/``, ``@``, ``=`` or ``:`` (one long word: a hash, a number) holds no secret's start and is
    shown whole."""
    if len(line) <= MAX_LINE:
        return mask_secrets(line)
    body = line.rstrip("\r\n")
    head = body[:MAX_LINE]
    cut = max(head.rfind(" "), head.rfind("\t"))
    if cut < 0:
        cut = max(head.rfind("/"), head.rfind("@"))
    plain = cut < 0 and "=" not in head and ":" not in head
    shown = head if plain else f"{mask_secrets(head[:cut + 1])}{REDACTED}"
    hidden = len(body) - (len(head) if plain else cut + 1)
    return f"{shown} [... {hidden:,} more characters not shown]{line[len(body):]}"


def mask_lines(text: str) -> str:
    """:func:`mask_line` of each line of ``text`` (linear in its length)."""
    if len(text) <= MAX_LINE:
        return mask_secrets(text)
    return "".join(mask_line(line) for line in text.splitlines(keepends=True))


class MaskedStream(io.TextIOBase):
    """A text stream that masks each complete line before writing it to ``raw`` (partial lines wait for the rest,
    so a secret split over two ``write`` calls is still masked; ``\\r`` progress updates go out at once)."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw
        self._pending = ""

    def write(self, text: str) -> int:
        data = self._pending + text
        cut = max(data.rfind("\n"), data.rfind("\r"))
        self._pending = data[cut + 1:]
        if cut >= 0:
            self.raw.write(mask_lines(data[:cut + 1]))
        if len(self._pending) > 8192:  # no newline for long: write it rather than hold it
            self.raw.write(mask_lines(self._pending))
            self._pending = ""
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.raw.write(mask_lines(self._pending))
            self._pending = ""
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8")

    def writable(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:  # buffer, errors, reconfigure, ...
        return getattr(self.raw, name)


def _masked_record_factory(original: Any) -> Any:
    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = original(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's own error to report
            return record
        masked = mask_lines(message)
        if masked != message or record.args:
            record.msg, record.args = masked, ()
        return record

    factory._hpoflow = True  # type: ignore[attr-defined]
    return factory


def install() -> None:
    """Mask stdout, stderr and every log record of this process; idempotent."""
    if not isinstance(sys.stdout, MaskedStream):
        sys.stdout = MaskedStream(sys.stdout)
    if not isinstance(sys.stderr, MaskedStream):
        sys.stderr = MaskedStream(sys.stderr)
    original = logging.getLogRecordFactory()
    if not getattr(original, "_hpoflow", False):
        logging.setLogRecordFactory(_masked_record_factory(original))
    os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")  # ours is masked: print_run_summary
