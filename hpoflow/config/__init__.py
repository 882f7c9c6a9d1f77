"""Configuration: the dataclass schemas of every config group, the component registry (built-ins found in the
components' config modules), validation of a composed config into :class:`~hpoflow.config.settings.Settings`,
Hydra composition for the library path, and the generated option files (:mod:`~hpoflow.config.conf_files`).

May import: :mod:`hpoflow.core`, the components (:mod:`hpoflow.algorithms`, :mod:`hpoflow.tasks`,
:mod:`hpoflow.surrogates`, :mod:`hpoflow.acquisition`), Hydra/OmegaConf. Never the store, the runner or the CLI."""
