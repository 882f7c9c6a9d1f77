"""The command line: the Hydra job (:mod:`~hpoflow.cli.main`), one-line errors, ``--help``, outputs (summary,
resume hints, masked Hydra files) and the README table generator (``python -m hpoflow.cli.docs``).

May import: everything below it (core, components, config, store, runner). Never the report or the public API."""
