"""``python -m hpoflow.report key=value ...``: see :mod:`hpoflow.report.cli`."""
from hpoflow.report.cli import main

raise SystemExit(main())
