"""Surrogate models: exact GP (gp.py); more in temporal.py and parametric.py."""
