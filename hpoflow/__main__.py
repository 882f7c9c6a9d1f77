"""Hydra entry point: compose -> validate -> build -> run -> print summary."""
from __future__ import annotations

import os
import sys

if __name__ == "__main__" and any(a in ("--help", "-h") for a in sys.argv[1:]):
    from hpoflow.cli_help import help_text

    print(help_text())
    sys.exit(0)

import hydra  # noqa: E402 - after the fast --help path, which needs no Hydra
from omegaconf import DictConfig, OmegaConf  # noqa: E402

from hpoflow.cli_errors import install as install_error_reporter  # noqa: E402
from hpoflow.schema import register_configs  # noqa: E402

register_configs()
install_error_reporter()


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from hpoflow.app import ConfigError, run_from_settings, sweep_id_from, validate
    from hpoflow.loop import ObjectiveError

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    try:
        raw = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
        settings = validate(raw)  # type: ignore[arg-type]
        run_from_settings(settings, OmegaConf.to_yaml(cfg), sweep_id_from(hc.sweep.dir) if multirun else None)
    except ConfigError as exc:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(2)
    except ObjectiveError as exc:
        # the run is already marked FAILED with everything logged; in a sweep the other jobs go on
        print(f"Error: run failed: {exc}", file=sys.stderr)
        if not multirun:
            sys.exit(1)


if __name__ == "__main__":
    main()
