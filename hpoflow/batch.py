"""``python -m hpoflow.batch``: run a study's jobs in this one process (:mod:`hpoflow.cli.batch`)."""
from __future__ import annotations

import sys

if __name__ == "__main__":
    from hpoflow.cli.batch import main

    sys.exit(main())
