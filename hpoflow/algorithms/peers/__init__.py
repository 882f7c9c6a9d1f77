"""The field's standard optimizers as hpoflow algorithms (optional extra: ``pip install 'hpoflow[peers]'``).

Each module wraps one library through its own ask/tell interface and maps the task's search space to that
library's own parameter types; the loop, records, tracking and reports are hpoflow's. ``configs`` holds their
dataclasses and imports no peer library, so the options are listed (``--help``) even without the extra.
"""
