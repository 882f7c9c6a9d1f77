"""The runner: the common loop (:mod:`~hpoflow.runner.loop`: ask -> evaluate -> tell -> record), its save and
restore, and :mod:`~hpoflow.runner.build` (settings -> task, algorithm, tracker, checkpointer -> an open run).

May import: everything below it (core, components, config, store). Never the CLI, the report or the public API."""
