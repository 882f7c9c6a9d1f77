"""A Hydra sweeper for studies whose grid is a union of named cells, each a cartesian product.

Paper tables are rarely one product: paper 000 pairs each outer horizon T with its own five inner horizons N,
and paper 002's Table A2 has rows that are different algorithms with different settings. Hydra's basic
sweeper only takes products (``hydra.sweeper.params``). This one also takes ``hydra.sweeper.cells``: a
mapping ``name -> {key: value}``; every job of the product of ``params`` runs once per cell, with the cell's
overrides added and ``sweep.cell=<name>`` (logged with the run, so reports group by it). On the command line,
``sweep.cell=a,b`` restricts a study to some cells. Written by hand because Hydra has no such sweeper;
it reuses the basic sweeper for everything else (batching, launching, validation).
"""
# no "from __future__ import annotations": Hydra execs plugin modules outside sys.modules, and dataclasses
# would then fail to resolve string annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException

CELL_KEY = "sweep.cell"


@dataclass
class CellsSweeperConf:
    _target_: str = "hydra_plugins.hpoflow_cells_sweeper.cells_sweeper.CellsSweeper"
    max_batch_size: int | None = None
    params: dict[str, str] | None = None
    cells: dict[str, dict[str, Any]] | None = None  # name -> overrides of that cell


ConfigStore.instance().store(group="hydra/sweeper", name="cells", node=CellsSweeperConf, provider="hpoflow")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


class CellsSweeper(BasicSweeper):
    """The basic sweeper's product of ``params`` and arguments, once per cell of ``cells``."""

    def __init__(self, max_batch_size: int | None, params: dict[str, str] | None = None,
                 cells: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(max_batch_size=max_batch_size, params=params)
        self.cells = {str(k): dict(v or {}) for k, v in (cells or {}).items()}

    def split_arguments(self, overrides: list[Override], max_batch_size: int | None) -> list[list[list[str]]]:  # type: ignore[override]
        chosen = list(self.cells)
        kept = []
        for override in overrides:
            if override.get_key_element() == CELL_KEY:
                values = ([str(v) for v in override.sweep_string_iterator()] if override.is_sweep_override()
                          else [override.get_value_element_as_str()])
                unknown = sorted(set(values) - set(self.cells))
                if unknown:
                    raise HydraException(f"{CELL_KEY}={unknown[0]} is not a cell of this study; allowed: "
                                         f"{', '.join(self.cells)}")
                chosen = [c for c in self.cells if c in values]
            else:
                kept.append(override)
        (jobs,) = BasicSweeper.split_arguments(kept, None)
        if self.cells:
            jobs = [job + [f"{key}={_value(value)}" for key, value in self.cells[cell].items()] + [f"{CELL_KEY}={cell}"]
                    for cell, job in itertools.product(chosen, jobs)]
        if max_batch_size is None:
            return [jobs]
        return [list(chunk) for chunk in self.split_overrides_to_chunks(jobs, max_batch_size)]
