"""Tasks: what is optimised -- synthetic functions, BBOB, scikit-learn model x dataset, bilevel and training
tasks, time-varying bandits. Each subclasses :class:`hpoflow.tasks.base.Task`.

May import: :mod:`hpoflow.core` only."""
