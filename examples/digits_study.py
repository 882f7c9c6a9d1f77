"""Tune a small torch network on sklearn's digits with hpoflow's ask/tell ``Study``; every trial goes to MLflow.

The training loop is ours (plain torch); hpoflow only proposes the next configuration and records the result.
Stop it at any moment (Ctrl-C, a crash, a killed job) and run the same command again: it continues from its
checkpoint, in the same MLflow run.

    python examples/digits_study.py --rounds 10 --epochs 10
    mlflow ui --backend-store-uri sqlite:///outputs/mlflow.db     # experiment "digits-mlp"
"""
from __future__ import annotations

import argparse

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

from hpoflow import Evaluation, Study

SPACE = {"lr": ("log", 1e-4, 3e-1), "width": ("logint", 8, 256), "weight_decay": ("log", 1e-6, 1e-2),
         "activation": ["relu", "tanh"]}


def load(seed: int) -> tuple[torch.Tensor, ...]:
    """Digits (1,797 8x8 images) split 75/25, pixels scaled to [0, 1]: x of shape n x 64, labels n."""
    x, y = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(x / 16.0, y, test_size=0.25, random_state=seed, stratify=y)
    return (torch.tensor(x_train, dtype=torch.float32), torch.tensor(y_train), torch.tensor(x_val, dtype=torch.float32),
            torch.tensor(y_val))


def train(config: dict, data: tuple[torch.Tensor, ...], epochs: int, batch: int = 64) -> Evaluation:
    """Train a one-hidden-layer MLP with Adam; the value is the validation cross-entropy."""
    x_train, y_train, x_val, y_val = data
    act = nn.ReLU() if config["activation"] == "relu" else nn.Tanh()
    model = nn.Sequential(nn.Linear(64, config["width"]), act, nn.Linear(config["width"], 10))
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"], weight_decay=config["weight_decay"])
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for idx in torch.randperm(len(x_train)).split(batch):  # the global torch RNG: seeded by the Study
            opt.zero_grad()
            loss_fn(model(x_train[idx]), y_train[idx]).backward()
            opt.step()
    with torch.no_grad():
        logits = model(x_val)
        val_loss = loss_fn(logits, y_val).item()
        accuracy = (logits.argmax(1) == y_val).float().mean().item()
    return Evaluation(value=val_loss, cost=float(epochs), metrics={"val_accuracy": accuracy})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=20, help="trials (default 20)")
    p.add_argument("--epochs", type=int, default=20, help="epochs per trial (default 20)")
    p.add_argument("--algo", default="gp_ei", help="any ask/tell algorithm of python -m hpoflow --help")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tracking", default="sqlite:///outputs/mlflow.db", help="MLflow store URI")
    p.add_argument("--checkpoint", default="outputs/digits-mlp.json", help="resumable state of the study")
    args = p.parse_args()
    data = load(args.seed)
    with Study(SPACE, algo=args.algo, rounds=args.rounds, seed=args.seed, name="digits-mlp",
               tracking=args.tracking, checkpoint=args.checkpoint) as study:
        while not study.done:
            trial = study.ask()
            result = train(trial.config, data, args.epochs)
            study.tell(trial, result)  # a NaN loss (a diverged lr) is recorded as a failed trial
            print(f"trial {trial.number:>3}  val loss {result.value:.4f}  accuracy "
                  f"{result.metrics['val_accuracy']:.3f}  {trial.config}", flush=True)
    print(
        f"best val loss {study.best_value:.4f} with {study.best_config}; MLflow run {study.run_id} in {args.tracking}"
    )


if __name__ == "__main__":
    main()
