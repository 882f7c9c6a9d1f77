"""``python -m hpoflow.report key=value ...``: see :mod:`hpoflow.report.cli`."""
from hpoflow.store.output_masking import install

install()  # every line printed or logged is masked (a store URI's password, tokens)

from hpoflow.report.cli import main  # noqa: E402

raise SystemExit(main())
