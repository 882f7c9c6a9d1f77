"""``python -m hpoflow``: Hydra's entry point and nothing else (the fast ``--help``, then the job in
:mod:`hpoflow.cli.main`, whose docstring lists the exit statuses)."""
from __future__ import annotations

import sys

from hpoflow.core.shadowing import shadowing_hint

if __name__ == "__main__" and (_hint := shadowing_hint()):  # a folder named hpoflow here shadows the package
    print(_hint, file=sys.stderr)
if __name__ == "__main__" and any(a in ("--help", "-h") for a in sys.argv[1:]):
    from hpoflow.cli.help import help_text

    print(help_text())
    sys.exit(0)

from hpoflow.store.output_masking import install as install_output_masking  # noqa: E402

install_output_masking()  # before Hydra: its launcher lines, logs and run files never show a secret
if __name__ == "__main__":
    from hpoflow.cli.errors import argv_error

    _problem = argv_error(sys.argv[1:])
    if _problem:  # what Hydra's parser would answer with its 8-line usage or a traceback
        print(f"Error: {_problem}", file=sys.stderr)
        sys.exit(2)

import hydra  # noqa: E402 - after the fast --help path, which needs no Hydra
from omegaconf import DictConfig  # noqa: E402

from hpoflow.cli.errors import install as install_error_reporter  # noqa: E402
from hpoflow.config.identity import register_resolvers  # noqa: E402
from hpoflow.config.schema import register_configs  # noqa: E402

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
