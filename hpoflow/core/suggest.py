""""Did you mean ...?" for a misspelt name: the closest allowed names (``difflib``), as a message fragment."""
from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, allowed: Iterable[str], n: int = 2) -> str:
    """``" (did you mean 'hyperband'?)"`` for ``word="hyprband"``, or ``""`` when no allowed name is close.

    Args:
        word: what the user typed (a group option, a key).
        allowed: the names that exist.
        n: how many suggestions at most.
    """
    close = difflib.get_close_matches(word, list(allowed), n=n, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
