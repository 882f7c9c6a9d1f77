"""Algorithms: one module per family (GP-BO, TuRBO, bandits, CE-GP-UCB, GO-UCB, BBO, MY-HPO/SHO, random/grid),
each with its ``*_config.py`` dataclass; ``peers/`` wraps Optuna, BoTorch and Nevergrad (optional extra).

May import: :mod:`hpoflow.core`, :mod:`hpoflow.tasks`, :mod:`hpoflow.surrogates`, :mod:`hpoflow.acquisition`."""
