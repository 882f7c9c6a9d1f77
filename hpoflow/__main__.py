"""``python -m hpoflow``: Hydra's entry point and nothing else (the fast ``--help``, then the job in
:mod:`hpoflow.cli.main`, whose docstring lists the exit statuses)."""
from __future__ import annotations

import sys

if __name__ == "__main__" and any(a in ("--help", "-h") for a in sys.argv[1:]):
    from hpoflow.cli.help import help_text

    print(help_text())
    sys.exit(0)

import hydra  # after the fast --help path, which needs no Hydra
from omegaconf import DictConfig

from hpoflow.cli.errors import install as install_error_reporter
from hpoflow.config.identity import register_resolvers
from hpoflow.config.schema import register_configs

register_configs()
register_resolvers()
install_error_reporter()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    """Hydra's entry: the job itself is :func:`hpoflow.cli.main.run_job` (config_path stays beside this file)."""
    from hpoflow.cli.main import run_job

    run_job(cfg)


if __name__ == "__main__":
    main()
