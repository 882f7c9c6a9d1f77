"""What separates GO-UCB from GP-PI on paper 004's misspecified functions (Styblinski-Tang-20, Rastrigin-20)?

Both run as in ``experiment=go_ucb_synthetic`` (n = 8, T = 64, defaults otherwise), driven round by round here
(ask, evaluate, tell; no tracking) so that their models can be read at checkpoints. Measured per run:

- prediction error of each model on held-out points, at t = 8 (end of Phase I), 16, 32, 48, 63 observations:
  GO-UCB's network at its current centre ``w_t`` (the model Step 5 maximises, in reward units) and GP-PI's GP
  posterior mean, each on its own run's data; and, to separate the model from the data it was given, a fresh GP
  fitted on GO-UCB's data and a fresh network (GO-UCB's oracle and output scaling) fitted on GP-PI's data.
  Held-out sets: 512 uniform points of the cube (global) and 512 uniform points of a box of side 0.2 around the
  run's best point so far (local: where the next query is chosen). Errors: Spearman rank correlation with the
  truth, and the RMSE divided by the truth's standard deviation on that set (NRMSE; 1 = no better than the mean);
- Phase I: its size n, the network's d_w, its training MSE (scaled units) at the end of Phase I;
- the ball: sqrt(beta_t) (the radius in whitened weights), its Euclidean radius sqrt(beta_t / lambda), how far the
  optimistic weights moved from ``w_t`` (``w_shift``), and the optimism (acquisition - f(w_t, x_t), scaled units)
  against the spread of f(w_t, .) over the local box;
- Step 5's ascent: its gain in the acquisition over the best start, and in the truth: f(best start) - f(x_t)
  (> 0: the ascent moved to a truly better point), with the share of rounds where it did;
- behaviour: mean distance of Phase II queries to the best point so far (unit cube), the share of Phase II
  queries that improved the best value, cumulative and final simple regret.
``--phase1 8,16,32`` adds GO-UCB runs with larger Phase I sizes (cumulative regret over all T rounds).

``--variants`` adds GO-UCB runs that test a cause (``VARIANTS``: a smaller Step-5 box, Step 5 without its ascent).

Usage: python scripts/go_ucb_gap.py [--seeds 3] [--phase1 8,16,32] [--variants box0.1,box0.05,ascent1]
       [--cache outputs/go_ucb_gap]
Each run is cached as JSON under ``--cache`` (an interrupted invocation resumes); the table is printed at the end.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from scipy import stats  # noqa: E402

TASKS = ("styblinski_tang", "rastrigin")
DIM, N_INIT, T = 20, 8, 64
CHECKPOINTS = (8, 16, 32, 48, 63)
HELD_OUT, LOCAL_SIDE = 512, 0.2


# GO-UCB variants that test a cause: a smaller Step-5 box (queries nearer the best point), Step 5 without its ascent
VARIANTS: dict[str, dict[str, Any]] = {
    "box0.1": {"trust_region": 0.1},
    "box0.05": {"trust_region": 0.05},
    "ascent1": {"advanced": {"ascent_steps": 1}},
}


def settings(algo: str, task: str, seed: int, n_init: int = N_INIT, variant: str = "") -> Any:
    from hpoflow.config import settings as app

    surrogate = {"name": "nn"} if algo == "go_ucb" else {"name": "gp"}
    extra = VARIANTS[variant] if variant else {}
    return app.validate({"algo": {"name": algo, "n_init": n_init, **extra}, "surrogate": surrogate,
                         "task": {"name": task, "dim": DIM}, "hardware": {"name": "cpu", "device": "cpu"},
                         "tracking": {"enabled": False}, "budget": {"rounds": T}, "seed": seed})


def build(algo: str, task: str, seed: int, n_init: int = N_INIT, variant: str = "") -> tuple[Any, Any]:
    from hpoflow.runner.build import build_components

    t, a, _ = build_components(settings(algo, task, seed, n_init, variant))
    return t, a


def truth(task: Any, U: torch.Tensor) -> np.ndarray:
    """Noise-free values of unit-cube points (``m x d`` -> ``m``), minimisation scale."""
    return np.array([task.evaluate(task.space.decode(u), round=0).value for u in U])


def held_out(task: Any, best: torch.Tensor, gen: torch.Generator) -> dict[str, tuple[torch.Tensor, np.ndarray]]:
    glob = torch.rand(HELD_OUT, DIM, generator=gen, dtype=torch.float64)
    lo = (best - LOCAL_SIDE / 2).clamp(0.0, 1.0 - LOCAL_SIDE)
    local = lo + LOCAL_SIDE * torch.rand(HELD_OUT, DIM, generator=gen, dtype=torch.float64)
    return {"global": (glob, truth(task, glob)), "local": (local, truth(task, local))}


def errors(pred: np.ndarray, f: np.ndarray) -> dict[str, float]:
    """Spearman rank correlation and NRMSE of predictions ``pred`` of the values ``f`` (both minimisation scale)."""
    rho = float(stats.spearmanr(pred, f).statistic)
    return {"rho": rho, "nrmse": float(np.sqrt(np.mean((pred - f) ** 2)) / max(np.std(f), 1e-12))}


def network_prediction(go: Any, w: torch.Tensor, U: torch.Tensor) -> np.ndarray:
    """GO-UCB's network at weights ``w`` in the task's units, minimisation scale (rewards are -f)."""
    with torch.no_grad():
        return -(go.model.value(w, U) * go.scale + go.mu).numpy()


def gp_prediction(gp_model: Any, U: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        mean, _ = gp_model.posterior(U)
    return -mean.numpy()


def fresh_gp(task_name: str, seed: int, X: torch.Tensor, rewards: torch.Tensor) -> Any:
    _, gp = build("gp_pi", task_name, seed)
    gp.model.fit(X, rewards)
    return gp.model


def fresh_network(task_name: str, seed: int, X: torch.Tensor, rewards: torch.Tensor) -> tuple[Any, torch.Tensor]:
    """GO-UCB's oracle fitted on (X, rewards) with its output scaling of the first N_INIT rewards."""
    from hpoflow.algorithms.go_ucb import output_scaling

    _, go = build("go_ucb", task_name, seed)
    go.mu, go.scale = output_scaling(rewards[:N_INIT], go.config.outputs)
    w, _ = go.model.fit(X, go._z(rewards), go.generator)
    return go, w


def run_one(algo: str, task_name: str, seed: int, n_init: int = N_INIT, probe: bool = True,
            variant: str = "") -> dict[str, Any]:
    """One run of ``algo`` with its measurements (see the module docstring)."""
    task, a = build(algo, task_name, seed, n_init, variant)
    gen = torch.Generator().manual_seed(10_000 + seed)
    ascent: list[dict[str, float]] = []
    if algo == "go_ucb" and probe:
        original = a._ascend

        def recording(objective, starts, keep="best"):  # the ascent, with its starts' values kept
            with torch.enable_grad():
                before, _ = objective([s.detach().clone() for s in starts])
            params, values = original(objective, starts, keep)
            j = int(torch.argmax(before))
            ascent.append({"acq_before": float(before.max()), "acq_after": float(values.max()),
                           "start_x": starts[0][j].tolist()})
            return params, values

        a._ascend = recording
    values, rows, checkpoints, dist, improved = [], [], {}, [], []
    for t in range(1, T + 1):
        s = a.ask(t)
        if probe and (t - 1) in CHECKPOINTS:
            checkpoints[str(t - 1)] = measure(a, algo, task, task_name, seed, gen)
        if t > n_init and values:
            best = int(np.argmin(values))
            xs = [r["x"] for r in rows]
            dist.append(float(torch.linalg.norm(s.x - torch.tensor(xs[best]))))
        ev = task.evaluate(s.config, round=t)
        improved.append(bool(values) and ev.value < min(values))
        if algo == "go_ucb" and t > n_init and probe:
            info = dict(s.info)
            info["predicted_z"] = (info["predicted"] - a.mu) / a.scale
            if ascent:
                start = torch.tensor(ascent[-1].pop("start_x"))
                f_start = float(truth(task, start.unsqueeze(0))[0])
                info.update(ascent[-1], true_gain=f_start - ev.value)
            rows.append({"x": s.x.tolist(), **{k: float(v) for k, v in info.items()}})
        else:
            rows.append({"x": s.x.tolist()})
        values.append(float(ev.value))
        a.tell(s, ev)
    regret = np.array(values) - task.optimum
    out = {"algo": algo, "variant": variant, "task": task_name, "seed": seed, "n_init": n_init, "values": values,
           "cumulative": float(regret.sum()), "simple": float(regret.min()), "checkpoints": checkpoints,
           "dist_to_best": float(np.mean(dist)) if dist else math.nan,
           "improving_share": float(np.mean(improved[n_init:])), "rounds": [
               {k: v for k, v in r.items() if k != "x"} for r in rows[n_init:]]}
    if algo == "go_ucb":
        out.update(d_w=a.d_w, oracle_mse=float(a.oracle_mse), lam=float(getattr(a, "lam", math.nan)))
    return out


def measure(a: Any, algo: str, task: Any, task_name: str, seed: int, gen: torch.Generator) -> dict[str, Any]:
    """The models' held-out errors with ``t`` observations (called after ask of round t + 1, before its tell)."""
    if algo == "go_ucb":
        X, rewards = torch.stack(a.X), torch.tensor(a.rewards, dtype=torch.float64)
    else:
        X, rewards = torch.stack(a.X), torch.tensor(a.y, dtype=torch.float64)
    best = X[int(torch.argmax(rewards))]
    sets = held_out(task, best, gen)
    out: dict[str, Any] = {}
    if algo == "go_ucb":
        own = lambda U: network_prediction(a, a.w_t, U)  # noqa: E731
        gp = fresh_gp(task_name, seed, X, rewards)
        other = lambda U: gp_prediction(gp, U)  # noqa: E731
        spread = float(np.std(network_prediction(a, a.w_t, sets["local"][0])) / a.scale)
        out["local_spread_z"] = spread
    else:
        own = lambda U: gp_prediction(a.model, U)  # noqa: E731
        go, w = fresh_network(task_name, seed, X, rewards)
        other = lambda U: network_prediction(go, w, U)  # noqa: E731
    for where, (U, f) in sets.items():
        out[f"own_{where}"] = errors(own(U), f)
        out[f"other_{where}"] = errors(other(U), f)
    return out


def mean_ci(xs: list[float]) -> str:
    a = np.asarray([x for x in xs if math.isfinite(x)], dtype=float)
    if a.size == 0:
        return "n/a"
    half = 1.96 * a.std(ddof=1) / math.sqrt(a.size) if a.size > 1 else 0.0
    return f"{a.mean():.3g} ± {half:.2g}"


def cached(cache: Path, algo: str, task: str, seed: int, n_init: int, probe: bool, variant: str = ""
           ) -> dict[str, Any]:
    name = f"{algo}{'_' + variant if variant else ''}__{task}__s{seed}__n{n_init}{'' if probe else '__plain'}"
    path = cache / f"{name}.json"
    if path.exists():
        return json.loads(path.read_text())
    start = time.process_time()
    result = run_one(algo, task, seed, n_init, probe, variant)
    result["cpu_s"] = time.process_time() - start
    path.write_text(json.dumps(result))
    print(f"  {algo} {variant} {task} seed {seed} n={n_init}: cumulative regret {result['cumulative']:.4g} "
          f"({result['cpu_s']:.0f} CPU s)", flush=True)
    return result


def table(runs: list[dict[str, Any]], phase1: list[dict[str, Any]], variants: list[dict[str, Any]]) -> str:
    out = []
    for task in TASKS:
        go = [r for r in runs if r["task"] == task and r["algo"] == "go_ucb"]
        gp = [r for r in runs if r["task"] == task and r["algo"] == "gp_pi"]
        out += [f"## {task}-{DIM} (n = {N_INIT}, T = {T}, seeds {sorted(r['seed'] for r in go)})", "",
                "| | GO-UCB | GP-PI |", "|---|---|---|",
                f"| cumulative regret | {mean_ci([r['cumulative'] for r in go])} | "
                f"{mean_ci([r['cumulative'] for r in gp])} |",
                f"| final simple regret | {mean_ci([r['simple'] for r in go])} | "
                f"{mean_ci([r['simple'] for r in gp])} |",
                f"| Phase II: mean distance of a query to the best point | "
                f"{mean_ci([r['dist_to_best'] for r in go])} | {mean_ci([r['dist_to_best'] for r in gp])} |",
                f"| Phase II: share of queries improving the best | {mean_ci([r['improving_share'] for r in go])} | "
                f"{mean_ci([r['improving_share'] for r in gp])} |", "",
                "Held-out prediction (Spearman rho with the truth / NRMSE); 'own': each method's model on its own "
                "data; 'swapped': GO-UCB's data -> a fresh GP, GP-PI's data -> a fresh network:", "",
                "| t | set | GO-UCB net (own) | GP on GO-UCB's data | GP-PI GP (own) | net on GP-PI's data |",
                "|---|---|---|---|---|---|"]
        for t in CHECKPOINTS:
            for where in ("global", "local"):
                cells = []
                for runs_, key in ((go, "own"), (go, "other"), (gp, "own"), (gp, "other")):
                    e = [r["checkpoints"][str(t)][f"{key}_{where}"] for r in runs_ if str(t) in r["checkpoints"]]
                    cells.append(f"{mean_ci([x['rho'] for x in e])} / {mean_ci([x['nrmse'] for x in e])}")
                out.append(f"| {t} | {where} | " + " | ".join(cells) + " |")
        rounds = [x for r in go for x in r["rounds"]]
        optimism = [x["acquisition"] - x["predicted_z"] for x in rounds if "predicted_z" in x]
        spread = [r["checkpoints"][str(t)]["local_spread_z"] for r in go for t in CHECKPOINTS[1:]
                  if str(t) in r["checkpoints"]]
        out += ["", "GO-UCB internals (Phase II rounds pooled over seeds):", "",
                f"- Phase I: n = {N_INIT} points for d_w = {go[0]['d_w'] if go else '?'} weights; training MSE at "
                f"the end of Phase I {mean_ci([r['oracle_mse'] for r in go])} (scaled units)",
                f"- ball: sqrt(beta_t) {mean_ci([x['ball_radius'] for x in rounds])}, Euclidean radius "
                f"sqrt(beta_t / lambda) {mean_ci([x['ball_radius_l2'] for x in rounds])}, optimistic weights' "
                f"shift from w_t {mean_ci([x['w_shift'] for x in rounds])}",
                f"- optimism acquisition - f(w_t, x_t) {mean_ci(optimism)} vs the spread (sd) of f(w_t, .) over "
                f"the local box {mean_ci(spread)} (scaled units)",
                f"- Step 5 ascent: acquisition gain over the best start "
                f"{mean_ci([x['acq_after'] - x['acq_before'] for x in rounds if 'acq_after' in x])}; true gain "
                f"f(best start) - f(x_t) {mean_ci([x['true_gain'] for x in rounds if 'true_gain' in x])}, positive "
                f"in {np.mean([x['true_gain'] > 0 for x in rounds if 'true_gain' in x]):.0%} of rounds", ""]
        rows = [r for r in phase1 if r["task"] == task]
        if rows:
            out += ["GO-UCB's Phase I size (cumulative regret over all T rounds / final simple regret):", "",
                    "| n | cumulative | simple |", "|---|---|---|"]
            for n in sorted({r["n_init"] for r in rows}):
                sel = [r for r in rows if r["n_init"] == n]
                out.append(f"| {n} | {mean_ci([r['cumulative'] for r in sel])} | "
                           f"{mean_ci([r['simple'] for r in sel])} |")
            out.append("")
        rows = [r for r in variants if r["task"] == task]
        if rows:
            out += ["GO-UCB variants against its default and GP-PI (same seeds):", "",
                    "| run | settings | cumulative | simple | distance to best | improving share |",
                    "|---|---|---|---|---|---|"]
            for name, sel in [("GO-UCB", go), *[(v, [r for r in rows if r["variant"] == v])
                                                for v in dict.fromkeys(r["variant"] for r in rows)], ("GP-PI", gp)]:
                how = json.dumps(VARIANTS.get(name, {})) if name in VARIANTS else "defaults"
                out.append(f"| {name} | {how} | {mean_ci([r['cumulative'] for r in sel])} | "
                           f"{mean_ci([r['simple'] for r in sel])} | {mean_ci([r['dist_to_best'] for r in sel])} | "
                           f"{mean_ci([r['improving_share'] for r in sel])} |")
            out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--phase1", default="", help="extra GO-UCB Phase I sizes, e.g. 16,32")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"GO-UCB variants: {', '.join(VARIANTS)}")
    parser.add_argument("--cache", default="outputs/go_ucb_gap")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    runs, phase1, variants = [], [], []
    for task in TASKS:
        for seed in range(args.seeds):
            for algo in ("go_ucb", "gp_pi"):
                runs.append(cached(cache, algo, task, seed, N_INIT, True))
            phase1.append(runs[-2])
            for n in [int(v) for v in args.phase1.split(",") if v and int(v) != N_INIT]:
                phase1.append(cached(cache, "go_ucb", task, seed, n, False))
            for v in [v for v in args.variants.split(",") if v]:
                variants.append(cached(cache, "go_ucb", task, seed, N_INIT, False, v))
    print(table(runs, phase1, variants))


if __name__ == "__main__":
    main()
