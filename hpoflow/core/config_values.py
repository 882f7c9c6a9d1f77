"""One spelling of "choose for me" and "never" in every component's config (no torch import).

* ``null`` (``None``): the component's documented automatic choice (``n_init: null`` = a design size derived
  from d and the budget; ``refit_every: null`` = the GP's growth + surprise schedule).
* ``never``: a schedule that does not fire (``refit_every: never``, ``reset_every: never``).
* a number: exactly that number. The old sentinels (``0`` = auto, ``-1`` = auto, ``0`` = never) are errors,
  so a config written for them fails with a one-line message instead of silently changing meaning.
"""
from __future__ import annotations

NEVER = "never"
Period = int | str | None  # null (auto) | "never" | k >= 1: the type of every *_every setting


def check_auto_int(key: str, value: int | None, auto: str, low: int = 1) -> None:
    """Allow ``None`` (the automatic choice, described by ``auto``) or an integer ``>= low``; else a one-line error."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
        raise ValueError(f"{key}={value} is not allowed; allowed: null ({auto}) or an integer >= {low}")


def check_auto_positive(key: str, value: float | None, auto: str, high: float | None = None) -> None:
    """Allow ``None`` (the automatic choice) or a number in ``(0, high)`` (``> 0`` without ``high``)."""
    if value is None:
        return
    if not value > 0 or (high is not None and not value < high):
        allowed = f"a number in (0, {high})" if high is not None else "a number > 0"
        raise ValueError(f"{key}={value} is not allowed; allowed: null ({auto}) or {allowed}")


def check_period(key: str, value: object, auto: str | None) -> None:
    """Allow ``never``, an integer ``k >= 1`` and, where the component has one (``auto`` describes it),
    ``None``; else a one-line error naming the value and what is allowed."""
    if value == NEVER or (auto is not None and value is None):
        return
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return
    allowed = f"null ({auto}), never or an integer k >= 1" if auto else "never or an integer k >= 1"
    raise ValueError(f"{key}={value} is not allowed; allowed: {allowed}")


def period(value: object) -> int | None:
    """The period of a checked ``*_every`` setting: ``k``, or ``None`` for ``never`` and ``null``."""
    return value if isinstance(value, int) else None
