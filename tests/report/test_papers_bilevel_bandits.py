"""Report layouts of the studies my_hpo_table2 (paper 001) and ce_gp_ucb_table_a1 (paper 002), on a tiny store
written with MLflow's own client: λ* flags, the returned model of black-box runs, the claim verdict, the paper's
rows and the CE-vs-Bernoulli comparison at equal cost."""
from __future__ import annotations

import pytest
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from hpoflow.report.papers import ce_gp_ucb_table_a1, load_runs, my_hpo_table2, paper_table


def _run(client: MlflowClient, exp: str, params: dict, history: dict[str, list[float]], tags: dict | None = None,
         status: str = "FINISHED"):
    run = client.create_run(exp)
    metrics = [Metric(k, v, 0, step) for k, values in history.items() for step, v in enumerate(values, 1)]
    client.log_batch(run.info.run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in params.items()],
                     tags=[RunTag(k, str(v)) for k, v in (tags or {}).items()])
    client.set_terminated(run.info.run_id, status)


def test_my_hpo_table2_flags_positive_lambda_star_and_reads_the_best_black_box_evaluation(store):
    client = MlflowClient(tracking_uri=store)
    exp = client.create_experiment("my_hpo_table2")
    star = {"task.lambda_star": 4.2, "task.val_loss_at_lambda_star": 0.24, "task.test_loss_at_lambda_star": 0.48}
    base = {"task.name": "ridge", "seed": 0, "budget.cost": 5000, "task.lambda_low": -10}
    last = {"train_loss": [0.1], "lambda": [0.0]}
    _run(client, exp, {**base, "sweep.cell": "nir/my_hpo_BT", "algo.name": "my_hpo"},
         {**last, "val_loss": [0.35], "test_loss": [0.60]}, star)
    _run(client, exp, {**base, "sweep.cell": "nir/sho", "algo.name": "sho"},
         {**last, "val_loss": [0.40], "test_loss": [0.70]}, star)
    for algo in ("random", "grid", "gp_ei"):  # the second evaluation has the lower validation loss
        _run(client, exp, {**base, "sweep.cell": f"nir/{algo}", "algo.name": algo},
             {"train_loss": [0.2, 0.1], "val_loss": [0.5, 0.3], "test_loss": [0.9, 0.55], "lambda": [-5.0, 3.0]}, star)
    _run(client, exp, {**base, "sweep.cell": "nir/sho@0.01", "algo.name": "sho"},  # a paper step (Appendix D)
         {**last, "val_loss": [0.30], "test_loss": [0.50]}, star)
    _run(client, exp, {**base, "sweep.cell": "nir/sho@0.5", "algo.name": "sho"},  # diverged: FAILED, not averaged
         {**last, "val_loss": [0.20], "test_loss": [0.20]}, star, status="FAILED")
    text = my_hpo_table2(load_runs(store, "my_hpo_table2"))
    assert "FLAG: λ* > 0 on 1/1 splits" in text and "lower bound" not in text
    lines = text.splitlines()
    test_row = next(line for line in lines if line.startswith("TEST"))
    assert test_row.split()[1::3] == ["70.00", "60.00", "55.00", "55.00", "55.00", "48.00"]
    step_row = next(line for line in lines if "sho@0.01" in line)
    assert step_row.split()[:2] == ["sho@0.01", "(5000)"] and "30.00 ± 0.00     50.00 ± 0.00" in step_row
    assert next(line for line in lines if "sho@0.5" in line).split()[2:] == ["n/a"] * 4 + ["n=1,", "1", "failed"]
    assert "nir: MY-HPO (BT) 60.00 vs SHO 70.00 vs black-box 55.00 -> holds vs SHO only (λ* > 0 on some split" in text
    assert "paper: SHO 75.3, MY-HPO 6.9, black-box 16.1" in text


A1_ROWS = {"UCB1": (300.0, 200.0), "CE_0.95@0.01": (40.0, 150.0), "Ber_0.05@0.01": (100.0, 100.0),
           "Ber_0.1@0.01": (60.0, 200.0)}  # (cumulative regret, queries) at T = 2000


def _a1_store(store: str) -> None:
    client = MlflowClient(tracking_uri=store)
    exp = client.create_experiment("ce_gp_ucb_table_a1")
    for cell, (regret, cost) in A1_ROWS.items():
        for seed in (0, 1):
            _run(client, exp, {"sweep.cell": cell, "task.shape": "sine", "budget.rounds": 2000, "seed": seed},
                 {"cumulative_regret": [regret], "query_cost": [cost]})


def test_ce_gp_ucb_table_a1_prints_the_paper_rows_and_compares_ce_with_bernoulli_at_equal_cost(store):
    _a1_store(store)
    rows = A1_ROWS
    text = ce_gp_ucb_table_a1(load_runs(store, "ce_gp_ucb_table_a1"))
    assert "reward functions are OURS" in text and "uniformly random policy" in text
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("CE_0.95@0.01"))
    assert "0.020 ± 0.000" in lines[i] and "150 ± 0" in lines[i] and lines[i + 1].split()[:3] == ["paper", "|", "0.017"]
    # Bernoulli interpolated at C = 150: regret (100 + 60) / 2 = 80 -> ratio 40 / 80
    ratio = [line for line in lines if line.startswith("CE_0.95@0.01") and "±" not in line]
    assert ratio and float(ratio[0].split("|")[1].strip()) == pytest.approx(0.5)
    assert [line.split()[0] for line in lines if line.split()[:1] and line.split()[0] in rows and "[" in line] == [
        "UCB1", "Ber_0.05@0.01", "Ber_0.1@0.01", "CE_0.95@0.01"]


def test_ce_gp_ucb_table_a1_report_plots_our_reward_functions_and_the_cost_regret_plane(store, tmp_path,
                                                                                      monkeypatch):
    import numpy as np

    import hpoflow.report.figures as figures
    from hpoflow.tasks.time_varying import bandit_means

    _a1_store(store)
    text = paper_table(store, "ce_gp_ucb_table_a1", tmp_path)
    assert "plotted in ce_gp_ucb_table_a1_rewards.png" in text
    assert text.splitlines()[-1] == (f"paper figures: {tmp_path / 'ce_gp_ucb_table_a1_rewards.png'}, "
                                     f"{tmp_path / 'ce_gp_ucb_table_a1_cost_regret.png'}")
    assert all((tmp_path / f"ce_gp_ucb_table_a1_{n}.png").read_bytes()[:4] == b"\x89PNG"
               for n in ("rewards", "cost_regret"))
    seen = {}
    monkeypatch.setattr(figures, "plot_arm_means", lambda means, *a: seen.update(means=means) or [])
    monkeypatch.setattr(figures, "plot_cost_regret", lambda c, p, *a: seen.update(curves=c, points=p) or [])
    assert paper_table(store, "ce_gp_ucb_table_a1", tmp_path).endswith("paper figures: ")
    assert np.array_equal(seen["means"]["sine"], bandit_means("sine", np.arange(1, 2001), 2000))
    costs, regrets = seen["curves"]["sine"]["Bernoulli(p), eps=0.01"]
    assert costs.tolist() == [100.0, 200.0] and regrets.tolist() == pytest.approx([0.05, 0.03])
    assert seen["points"]["sine"] == {"CE_0.95@0.01": pytest.approx((150.0, 0.02))}


def test_table2_losses_switch_to_e_notation_once_a_training_run_blew_up():
    from hpoflow.report.papers import _loss_x100

    assert _loss_x100([0.5, 0.7]) == "60.00 ± 14.14"
    assert _loss_x100([1e93, 3e93]) == "2.0e+95 ± 1e+95"
    assert _loss_x100([float("nan")]) == "n/a"
