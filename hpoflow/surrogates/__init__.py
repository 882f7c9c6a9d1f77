"""Surrogate models: the protocol (base.py), exact GP (gp.py), time-varying GP (temporal.py), the network of GO-UCB
(parametric.py) and the per-run surrogate picture (plot.py).

May import: :mod:`hpoflow.core` only."""
