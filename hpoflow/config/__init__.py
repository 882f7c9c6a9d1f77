"""Configuration: the dataclass schemas of every config group, the component registry, validation of a composed
config into :class:`~hpoflow.config.settings.Settings`, and Hydra composition for the library path.

May import: :mod:`hpoflow.core`, the components (:mod:`hpoflow.algorithms`, :mod:`hpoflow.tasks`,
:mod:`hpoflow.surrogates`, :mod:`hpoflow.acquisition`), Hydra/OmegaConf. Never the store, the runner or the CLI."""
