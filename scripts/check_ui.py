"""Check the MLflow UI in a real browser, clicking the way the README tells a user to.

Fills a fresh store with a small sweep (a study: one parent run, four nested runs; or uses ``--store``), starts
``mlflow server`` on 127.0.0.1 and drives headless Chromium with Selenium through the README's path: the home
page, *Experiments*, the experiment (MLflow 3.x opens it on its GenAI *Overview*, "Traces 0", with a "Detect
Issues" popover: *Got it*), the *Model training* switch (top left) to the runs table, the study's expander, the
chart view, a run's page and its *Artifacts* tab, the study's parent run. It saves a screenshot and the visible
text of each page and exits 1 if a run, the nesting, a metric or an artifact is missing::

    python scripts/check_ui.py --out outputs/ui_check   # overview, runs, charts, run, artifacts, study (.png/.txt)

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium chromium-driver``) and
Selenium (``pip install -e .[browser]``); exits 3 when one is missing. Uses the system chromedriver, never
downloads one.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--headless=new", "--window-size=1600,1000", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--no-first-run", "--disable-component-update",
                  "--disable-sync", "--hide-scrollbars"]
EXPERIMENT = "ui_check"


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def find_driver() -> str | None:
    """The system chromedriver (Debian's ``chromium-driver``), or None."""
    return shutil.which("chromedriver")


def missing_tools() -> str | None:
    """What this check needs and cannot find, as a one-line hint, or None when all is there."""
    import importlib.util

    if find_chromium() is None or find_driver() is None:
        return "no Chromium or chromedriver found (Debian: apt-get install -y chromium chromium-driver)"
    if importlib.util.find_spec("selenium") is None:
        return "no Selenium (pip install -e .[browser])"
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


class Browser:
    """Headless Chromium driven by Selenium: clicks what a user clicks, saves screenshots and page texts."""

    def __init__(self, chromium: str, driver: str, out: Path, timeout: float = 120.0) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait

        options = webdriver.ChromeOptions()
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.binary_location = chromium
        # the system chromedriver: Selenium Manager would otherwise try to download one
        self.driver = webdriver.Chrome(service=Service(driver), options=options)
        self.wait = WebDriverWait(self.driver, timeout)
        self.out = out

    def click(self, xpath: str) -> None:
        from selenium.webdriver.support import expected_conditions as ec

        self.wait.until(ec.element_to_be_clickable(("xpath", xpath))).click()

    def has(self, xpath: str, timeout: float = 10.0) -> bool:
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        try:
            WebDriverWait(self.driver, timeout).until(ec.presence_of_element_located(("xpath", xpath)))
            return True
        except TimeoutException:
            return False

    def wait_text(self, *needles: str) -> str:
        """Wait until every needle is in the page's visible text (or the timeout); return that text."""
        from selenium.common.exceptions import TimeoutException

        def text(driver) -> str:  # type: ignore[no-untyped-def]
            return driver.find_element("tag name", "body").text

        try:
            self.wait.until(lambda d: all(n in text(d) for n in needles))
        except TimeoutException:
            pass
        return text(self.driver)

    def save(self, name: str, text: str) -> None:
        self.driver.save_screenshot(str(self.out / f"{name}.png"))
        (self.out / f"{name}.txt").write_text(text)

    def quit(self) -> None:
        self.driver.quit()


def link(text: str) -> str:
    return f"//a[normalize-space()={text!r}]"


def check(uri: str, out: Path, chromium: str, driver: str, experiment: str, server_timeout: float) -> list[str]:
    """Click through the UI as the README describes; return the problems found (empty: all there)."""
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
    browser = None
    try:
        wait_healthy(base, proc, server_timeout)
        browser = Browser(chromium, driver, out)
        # 1. the home page; "Experiments" in the sidebar; the experiment by name
        browser.driver.get(f"{base}/")
        browser.click(link("Experiments"))
        browser.click(link(experiment))
        # 2. MLflow 3.x opens an experiment on its GenAI overview (traces: none for hpoflow's runs), with a
        #    "Detect Issues" popover in front; "Got it" dismisses it
        overview = browser.wait_text("Overview", "Traces")
        browser.save("overview", overview)
        if "Traces" not in overview:
            problems.append("the experiment did not open on its overview (Traces)")
        if browser.has("//button[normalize-space()='Got it']", timeout=15):
            browser.click("//button[normalize-space()='Got it']")
        # 3. the "Model training" switch (top left) shows the runs table
        browser.click("//*[normalize-space()='Model training'][self::button or self::label or self::span]")
        listed = [r.info.run_name for r in (studies or jobs)]
        table = browser.wait_text(f"{len(runs)} matching runs", *listed)
        missing = [name for name in listed if name not in table]
        if missing:
            problems.append(f"runs table does not list: {', '.join(missing)}")
        if f"{len(runs)} matching runs" not in table:
            problems.append(f"runs table does not count {len(runs)} matching runs")
        # 4. a study's runs are collapsed under its parent run: the button left of its name expands it
        for study in studies:
            browser.click(f"{link(study.info.run_name)}/ancestor::*[@role='gridcell'][1]//button")
        nested = [r.info.run_name for r in jobs]
        table = browser.wait_text(*nested)
        browser.save("runs", table)
        missing = [name for name in nested if name not in table]
        if missing:
            problems.append(f"runs table does not show the nested runs: {', '.join(missing)}")
        # 5. the chart view (second button above the table) charts every metric per round for the shown runs
        browser.click("(//label[.//input[@type='radio']])[2]")
        charts = browser.wait_text("cumulative_regret", "best_value")
        browser.save("charts", charts)
        for key in ("cumulative_regret", "best_value"):
            if key not in charts:
                problems.append(f"metric charts do not show '{key}'")
        # 6. a run's page (back to the table, click its name): metrics, params, tags and its parent run
        browser.click("(//label[.//input[@type='radio']])[1]")
        run = jobs[0]
        browser.click(link(run.info.run_name))
        parent = next((s.info.run_name for s in studies if s.info.run_id == run.data.tags.get("mlflow.parentRunId")),
                      None)
        final = run.data.metrics.get("cumulative_regret")
        needles = ["cumulative_regret"] + (["Parent run", parent] if parent else [])
        detail = browser.wait_text(*needles)
        browser.save("run", detail)
        if "cumulative_regret" not in detail or (final is not None and repr(final)[:8] not in detail):
            problems.append(f"run page of {run.info.run_name} does not show cumulative_regret={final}")
        if parent and ("Parent run" not in detail or parent not in detail):
            problems.append(f"run page of {run.info.run_name} does not name its parent run '{parent}'")
        # 7. its Artifacts tab: config.yaml, summary.json, trajectory.csv
        browser.click("//*[@role='tab'][normalize-space()='Artifacts'] | //a[normalize-space()='Artifacts']")
        artifacts = browser.wait_text("config.yaml", "summary.json", "trajectory.csv")
        browser.save("artifacts", artifacts)
        for name in ("config.yaml", "summary.json", "trajectory.csv"):
            if name not in artifacts:
                problems.append(f"the Artifacts tab of {run.info.run_name} does not list {name}")
        # 8. the study's parent run: its counts and its child runs
        for study in studies:
            browser.driver.get(f"{base}/#/experiments/{exp.experiment_id}/runs/{study.info.run_id}")
            text = browser.wait_text("hpoflow.runs.finished", "Child runs")
            browser.save("study", text)
            if "hpoflow.runs.finished" not in text:
                problems.append(f"the study run {study.info.run_name} does not show its counts")
            if "Child runs" not in text:
                problems.append(f"the study run {study.info.run_name} does not list its child runs")
    except Exception as exc:  # a click that found nothing: report it as a problem with the page it was on
        problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    finally:
        if browser is not None:
            browser.quit()
        stop_server(proc)
    for name in ("overview.png", "runs.png", "charts.png", "run.png", "artifacts.png",
                 *(["study.png"] if studies else [])):
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
    missing = missing_tools()
    if missing:
        print(f"Error: {missing}", file=sys.stderr)
        return 3
    chromium, driver = find_chromium(), find_driver()
    assert chromium is not None and driver is not None
    args.out.mkdir(parents=True, exist_ok=True)
    uri = args.store
    if uri is None:
        uri = f"sqlite:///{(args.out / 'mlflow.db').resolve()}"
        fill_store(uri, args.out.resolve())
    problems = check(uri, args.out, chromium, driver, args.experiment, args.server_timeout)
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if not problems:
        print(f"OK: the MLflow UI, clicked through as the README says, lists the runs of '{args.experiment}' "
              "(a study's runs nested under its parent run), charts their metrics and lists their artifacts; "
              f"screenshots in {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
