"""The core: what every layer shares and nothing else -- the search space, the records a round produces, the
checkpoint file format, the tracker protocol, signals, hardware settings, config-value checks, thread helpers
and the aliases that keep import paths from before the layer folders working.

May import: the standard library, numpy, torch. No Hydra, no MLflow, nothing else of hpoflow."""
