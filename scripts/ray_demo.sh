#!/usr/bin/env bash
# Ray demo: a small sweep run by Ray (a local instance with 2 workers) against the PostgreSQL-backed MLflow
# server of scripts/tracking_server.sh, then read back through the server. Skips cleanly without Ray.
#   PYTHON=.venv/bin/python scripts/ray_demo.sh      (needs: pip install 'hpoflow[cluster]', PostgreSQL)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
if ! "$PYTHON" -c "import ray, hydra_plugins.hydra_ray_launcher" 2>/dev/null; then
  echo "skipped: ray / hydra-ray-launcher are not installed (pip install 'hpoflow[cluster]')"; exit 0
fi
export PORT=${PORT:-5000} PG_PORT=${PG_PORT:-5433} PYTHON
scripts/tracking_server.sh start
trap 'scripts/tracking_server.sh stop' EXIT
URI=http://127.0.0.1:$PORT
"$PYTHON" -m hpoflow -m hydra/launcher=ray_local algo=random,gp_ei task=branin seed=0,1 budget.rounds=5 \
  tracking.uri="$URI" tracking.experiment=ray_demo 2>&1 | grep -E "Ray Launcher|#[0-9]+ :|^best value|^MLflow run"
"$PYTHON" - "$URI" <<'PY'
import sys
from mlflow.tracking import MlflowClient
client = MlflowClient(tracking_uri=sys.argv[1])
exp = client.get_experiment_by_name("ray_demo")
runs = client.search_runs([exp.experiment_id], order_by=["tags.algo", "tags.seed"])
print(f"read back from {sys.argv[1]} (PostgreSQL backend): {len(runs)} runs in experiment 'ray_demo'")
print("| algo | seed | status | steps | best_value | simple_regret |")
print("|---|---|---|---|---|---|")
for r in runs:
    steps = sorted(m.step for m in client.get_metric_history(r.info.run_id, "query_cost"))
    m = r.data.metrics
    print(f"| {r.data.tags['algo']} | {r.data.tags['seed']} | {r.info.status} | {steps} | {m['best_value']:.4f} | "
          f"{m['simple_regret']:.4f} |")
PY
