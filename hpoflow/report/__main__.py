"""``python -m hpoflow.report key=value ...``: see :mod:`hpoflow.report.cli`."""
import sys

from hpoflow.core.shadowing import shadowing_hint
from hpoflow.store.output_masking import install

if _hint := shadowing_hint():  # a folder named hpoflow here shadows the package
    print(_hint, file=sys.stderr)

install()  # every line printed or logged is masked (a store URI's password, tokens)

from hpoflow.report.cli import main  # noqa: E402

raise SystemExit(main())
