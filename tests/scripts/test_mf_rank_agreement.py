"""scripts/mf_rank_agreement.py: the mean ranks of two saved-run folders side by side, and how their orders agree."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO, cli_env


def save(folder, method: str, task: str, seed: int, finals: list[float]) -> None:
    """A minimised run of 3 full-fidelity rounds (cost 1 each, budget 3) whose values are ``finals``."""
    folder.mkdir(exist_ok=True)
    run = {"task": task, "method": method, "seed": seed, "budget": 3.0, "max_fidelity": 1.0,
           "direction": "minimize", "cpu": 0.0, "wall": 0.0, "value": finals, "fidelity": [1.0] * 3,
           "cost": [1.0, 2.0, 3.0]}
    (folder / f"{task}__{method}__{seed}.json").write_text(json.dumps(run))


def test_the_same_order_agrees_and_a_reversed_one_does_not(tmp_path):
    quality = {"good": 0.0, "mid": 1.0, "bad": 2.0}
    for task in ("t1", "t2"):
        for seed in (0, 1):
            for m, q in quality.items():
                save(tmp_path / "a", m, task, seed, [5.0, 4.0, q + 0.1 * seed])
                save(tmp_path / "b", m, task, seed, [5.0, 4.0 - q, 2.0 - q])  # reversed at every fraction
    script = [sys.executable, "scripts/mf_rank_agreement.py", "--methods", "good,mid,bad"]
    same = subprocess.run([*script, str(tmp_path / "a"), str(tmp_path / "a")], cwd=REPO, env=cli_env(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert same.returncode == 0, same.stderr[-2000:]
    row = next(line for line in same.stdout.splitlines() if line.startswith("| 1 | second"))
    assert row.split("|")[3:6] == [" 1.00 ", " 2.00 ", " 3.00 "] and "| 1.00 (" in row
    flipped = subprocess.run([*script, str(tmp_path / "a"), str(tmp_path / "b")], cwd=REPO, env=cli_env(),
                             capture_output=True, text=True, timeout=300, check=False)
    row = next(line for line in flipped.stdout.splitlines() if line.startswith("| 1 | second"))
    assert "| -1.00 (" in row
    missing = subprocess.run([*script, str(tmp_path / "a"), str(tmp_path / "nope")], cwd=REPO,
                             env=cli_env(), capture_output=True, text=True, timeout=300, check=False)
    assert missing.returncode == 2 and missing.stderr.strip().startswith("Error: no runs of good, mid, bad")
