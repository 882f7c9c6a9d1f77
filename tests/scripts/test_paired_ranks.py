"""scripts/paired_ranks.py: blocks, ranks and paired counts from a store, methods split by ``--variant``."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _store(path: Path) -> None:
    """Three BBOB blocks (function 1, d 2, instances 1-3), gp_ei under two output transforms and random."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{path}")
    exp = client.create_experiment("bbob_small")
    regrets = {("gp_ei", "power"): [0.1, 0.2, 3.0], ("gp_ei", "none"): [0.5, 0.4, 1.0], ("random", "none"): [9, 9, 9]}
    for (algo, transform), values in regrets.items():
        for instance, regret in enumerate(values, start=1):
            run = client.create_run(exp).info.run_id
            for key, value in {"algo.name": algo, "task.function": 1, "task.dim": 2, "task.instance": instance,
                               "seed": 0, "surrogate.output_transform": transform}.items():
                client.log_param(run, key, value)
            client.log_metric(run, "simple_regret", regret, step=1)
            client.set_terminated(run)


def test_variant_splits_a_method_by_a_parameter_and_pairs_per_block(tmp_path):
    _store(tmp_path / "s.db")
    power = "gp_ei[surrogate.output_transform=power]"
    proc = subprocess.run([sys.executable, "scripts/paired_ranks.py", "--uri", f"sqlite:///{tmp_path / 's.db'}",
                           "--experiment", "bbob_small", "--variant", "surrogate.output_transform",
                           "--against", power], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "3 blocks that every method finished (of 3)" in out
    assert f"{power} vs gp_ei[surrogate.output_transform=none]: 2 wins / 0 ties / 1 losses" in out
    assert f"{power} vs random[surrogate.output_transform=none]: 3 wins / 0 ties / 0 losses" in out
    # ranks per block: power 1, 1, 2; none 2, 2, 1; random 3, 3, 3
    assert f"mean rank, all (3 blocks): {power} 1.33, gp_ei[surrogate.output_transform=none] 1.67" in out
