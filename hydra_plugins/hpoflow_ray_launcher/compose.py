"""Compose a sweep's job configs fast: a job that differs from an earlier one only in plain values is a copy of
that one's config with those values set, instead of a new composition.

Hydra composes every job of a sweep from scratch (search path, defaults tree, merging every config file: about
0.15 CPU s per job for hpoflow's config, and the sweeper does it once more on the driver to validate the
batch). For the usual study sweep (``seed=range(0,1000)``, ``budget.rounds=10,20``) only values change between
jobs, never the defaults list, so the result of a full composition can be reused: deep-copy the reference
job's config, apply the differing overrides exactly as Hydra applies command-line value overrides
(``ConfigLoaderImpl._apply_overrides_to_config``), and set the two fields Hydra derives from the overrides
(``hydra.overrides.task``, ``hydra.job.override_dirname``). Anything else (a config group, a ``hydra``
key, an added or deleted key, a dict or list value, a different set of keys) is composed by Hydra in full, and
so is any job whose shortcut raises, so that errors are Hydra's own. Written by hand because Hydra has no
incremental composition.
"""
# no "from __future__ import annotations": Hydra execs plugin modules outside sys.modules

import copy
from collections.abc import Callable, Sequence
from typing import Any

from omegaconf import DictConfig, open_dict

ComposeFn = Callable[[DictConfig, list[str]], DictConfig]


class SweepComposer:
    """``load_sweep_config`` with the value-only shortcut (see the module docstring).

    ``compose``: Hydra's own ``load_sweep_config`` of ``loader``; the first job is always composed by it and
    kept (a private copy) as the reference of the later ones.
    """

    def __init__(self, loader: Any, compose: ComposeFn) -> None:
        self.loader, self.full = loader, compose
        self.reference: tuple[int, list[Any], DictConfig] | None = None  # (master id, parsed overrides, config)
        self.shortcuts = 0
        self.full_compositions = 0

    def compose(self, master: DictConfig, overrides: Sequence[str]) -> DictConfig:
        parsed = self._parse(overrides)
        if self.reference is not None and parsed is not None and self.reference[0] == id(master):
            try:
                cfg = self._shortcut(self.reference[1], self.reference[2], parsed)
            except Exception:  # noqa: BLE001 - Hydra's full composition decides (and words the error)
                cfg = None
            if cfg is not None:
                self.shortcuts += 1
                return cfg
        cfg = self.full(master, list(overrides))
        self.full_compositions += 1
        if parsed is not None and (self.reference is None or self.reference[0] != id(master)):
            self.reference = (id(master), parsed, copy.deepcopy(cfg))
        return cfg

    @staticmethod
    def _parse(overrides: Sequence[str]) -> list[Any] | None:
        from hydra.core.override_parser.overrides_parser import OverridesParser

        try:
            return list(OverridesParser.create().parse_overrides(overrides=list(overrides)))
        except Exception:  # noqa: BLE001 - not ours to word: the full composition raises Hydra's error
            return None

    def _plain_value(self, override: Any) -> bool:
        """A ``key=value`` change of an existing config value (not a group, not Hydra's, not a dict or list)."""
        from hydra.core.override_parser.types import OverrideType

        key = str(override.key_or_group)
        if (override.type is not OverrideType.CHANGE or override.package is not None or key.startswith("hydra")
                or override.is_sweep_override() or isinstance(override.value(), (dict, list))):
            return False
        return not self.loader.repository.group_exists(key)

    def _shortcut(self, ref_parsed: list[Any], ref_cfg: DictConfig, parsed: list[Any]) -> DictConfig | None:
        """The job's config from the reference's, or None when only a full composition can make it."""
        from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname

        if len(parsed) != len(ref_parsed):
            return None
        changed = []
        for mine, theirs in zip(parsed, ref_parsed):
            if mine.input_line == theirs.input_line:
                continue
            if mine.key_or_group != theirs.key_or_group or not (self._plain_value(mine) and self._plain_value(theirs)):
                return None
            changed.append(mine)
        cfg = copy.deepcopy(ref_cfg)
        ConfigLoaderImpl._apply_overrides_to_config(changed, cfg)
        app = [o for o in parsed if not o.is_hydra_override()]
        with open_dict(cfg.hydra):
            cfg.hydra.overrides.task = [o.input_line for o in app]
            cfg.hydra.job.override_dirname = get_overrides_dirname(
                overrides=app, kv_sep=cfg.hydra.job.config.override_dirname.kv_sep,
                item_sep=cfg.hydra.job.config.override_dirname.item_sep,
                exclude_keys=cfg.hydra.job.config.override_dirname.exclude_keys)
        return cfg
