"""Check the MLflow UI in a real browser: a study's parent run with its nested runs, metrics charted.

Fills a fresh store with a small sweep (a study: one parent run, four nested runs; or uses ``--store``),
starts ``mlflow server`` on 127.0.0.1, opens the experiment's runs table, its metric charts, the study's
parent run and one nested run's page in headless Chromium, saves a screenshot of each, and exits 1 if a run,
the nesting or a metric is missing from the rendered page (the DOM after the page's JavaScript ran)::

    python scripts/check_ui.py --out outputs/ui_check   # screenshots: runs.png, charts.png, study.png, run.png

The runs table shows the study collapsed (its parent run with an expander; the count of matching runs includes
the nested ones); each nested run's page names the study as its "Parent run".

Needs Debian's ``chromium`` (``apt-get install -y chromium``); exits 3 when no Chromium is found.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--no-first-run", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]
EXPERIMENT = "ui_check"


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fill_store(uri: str, workdir: Path) -> None:
    """A small sweep: 2 algorithms x 2 seeds on Branin, 4 rounds each, into ``uri``."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "hpoflow", "-m", "algo=random,gp_ei", "task=branin", "seed=0,1",
                    "budget.rounds=4", f"tracking.uri={uri}", f"tracking.experiment={EXPERIMENT}", "progress=false"],
                   cwd=workdir, env=env, check=True, capture_output=True, text=True, timeout=900)


def start_server(uri: str, port: int, log: Path) -> subprocess.Popen:
    """``mlflow server`` in its own process group (so that it and its workers can be stopped together)."""
    with open(log, "w") as fh:  # the child keeps its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri,
                                 "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def wait_healthy(base: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"mlflow server exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(2)
    raise TimeoutError(f"mlflow server at {base} not healthy after {timeout:.0f}s")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # the group we created with start_new_session
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def browse(chromium: str, url: str, screenshot: Path, budget_ms: int = 20000, size: str = "1600,1000") -> str:
    """Render ``url`` headless after a virtual-time budget; save a screenshot; return the page's visible text."""
    texts = []
    for mode in ([f"--screenshot={screenshot}"], ["--dump-dom"]):
        with tempfile.TemporaryDirectory() as profile:
            proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--window-size={size}", f"--user-data-dir={profile}",
                                   f"--virtual-time-budget={budget_ms}", *mode, url],
                                  capture_output=True, text=True, timeout=180, check=False)
        texts.append(proc.stdout)
    dom = re.sub(r"<script.*?</script>|<style.*?</style>", " ", texts[1], flags=re.DOTALL)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))


def browse_until(chromium: str, url: str, screenshot: Path, needles: list[str], size: str = "1600,1000",
                 budgets_ms: tuple[int, ...] = (20000, 45000, 90000)) -> str:
    """``browse`` with a growing virtual-time budget until every needle is on the page (charts render lazily,
    and slower on a loaded machine); returns the last page text either way."""
    text = ""
    for budget in budgets_ms:
        text = browse(chromium, url, screenshot, budget, size)
        if all(n in text for n in needles):
            break
    return text


def check(uri: str, out: Path, chromium: str, experiment: str, server_timeout: float) -> list[str]:
    """Return the problems found (empty: the UI lists every run and shows the metrics)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return [f"experiment '{experiment}' not in {uri}"]
    runs = client.search_runs([exp.experiment_id])
    if not runs:
        return [f"experiment '{experiment}' has no runs"]
    studies = [r for r in runs if r.data.tags.get("hpoflow.kind") == "study"]
    jobs = [r for r in runs if r.data.tags.get("hpoflow.kind") != "study"]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_server(uri, port, out / "server.log")
    problems: list[str] = []
    try:
        wait_healthy(base, proc, server_timeout)
        page = f"{base}/#/experiments/{exp.experiment_id}"
        # a study's jobs are nested under its parent run: the table lists the parents, counting every run
        listed = [r.info.run_name for r in (studies or jobs)]
        table = browse_until(chromium, f"{page}/runs", out / "runs.png", [*listed, f"{len(runs)} matching runs"])
        (out / "runs.txt").write_text(table)
        missing = [name for name in listed if name not in table]
        if missing:
            problems.append(f"runs table does not list: {', '.join(missing)}")
        if f"{len(runs)} matching runs" not in table:
            problems.append(f"runs table does not count {len(runs)} matching runs")
        # the experiment's chart view charts the visible runs; a study's jobs are collapsed under its parent
        # (which logs no metrics), so a study is charted on a nested run's own metric page
        chart_url = (f"{page}/runs/{jobs[0].info.run_id}/model-metrics" if studies
                     else f"{page}/runs?compareRunsMode=CHART")
        charts = browse_until(chromium, chart_url, out / "charts.png", ["cumulative_regret", "best_value"])
        (out / "charts.txt").write_text(charts)
        for key in ("cumulative_regret", "best_value"):
            if key not in charts:
                problems.append(f"metric charts do not show '{key}'")
        for study in studies:
            text = browse_until(chromium, f"{page}/runs/{study.info.run_id}", out / "study.png",
                                ["hpoflow.runs.finished", "Child runs"], size="1600,1700")
            (out / "study.txt").write_text(text)
            if "hpoflow.runs.finished" not in text:
                problems.append(f"the study run {study.info.run_name} does not show its counts")
            if "Child runs" not in text:
                problems.append(f"the study run {study.info.run_name} does not list its child runs")
        run = jobs[0]
        parent = next((s.info.run_name for s in studies if s.info.run_id == run.data.tags.get("mlflow.parentRunId")),
                      None)
        needles = ["cumulative_regret"] + ([parent] if parent else [])
        detail = browse_until(chromium, f"{page}/runs/{run.info.run_id}", out / "run.png", needles, size="1600,1700")
        (out / "run.txt").write_text(detail)
        final = run.data.metrics.get("cumulative_regret")
        if "cumulative_regret" not in detail or (final is not None and repr(final)[:8] not in detail):
            problems.append(f"run page of {run.info.run_name} does not show cumulative_regret={final}")
        if parent and ("Parent run" not in detail or parent not in detail):
            problems.append(f"run page of {run.info.run_name} does not name its parent run '{parent}'")
    finally:
        stop_server(proc)
    for name in ("runs.png", "charts.png", "run.png", *(["study.png"] if studies else [])):
        if not (out / name).exists() or (out / name).stat().st_size < 1000:
            problems.append(f"no screenshot {name}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", help="existing MLflow store URI (default: a fresh one filled by a small sweep)")
    parser.add_argument("--experiment", default=EXPERIMENT)
    parser.add_argument("--out", type=Path, default=Path("outputs/ui_check"), help="screenshots and page texts")
    parser.add_argument("--server-timeout", type=float, default=300.0, help="seconds to wait for mlflow server")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("Error: no Chromium found (Debian: apt-get install -y chromium)", file=sys.stderr)
        return 3
    args.out.mkdir(parents=True, exist_ok=True)
    uri = args.store
    if uri is None:
        uri = f"sqlite:///{(args.out / 'mlflow.db').resolve()}"
        fill_store(uri, args.out.resolve())
    problems = check(uri, args.out, chromium, args.experiment, args.server_timeout)
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if not problems:
        print(f"OK: the MLflow UI lists the runs of '{args.experiment}' (a study's runs nested under its parent run) "
              "and shows their metrics; "
              f"screenshots in {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
