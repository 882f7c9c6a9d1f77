"""Re-run the eight defects of issue 15 with their commands and print what happens now (before: the issue).

Usage: ``python scripts/reliability_defects.py [--out results/reliability_defects.txt]``

Every command runs in a scratch folder against ``sqlite:///<scratch>/m.db``. Runs that must be acted on
mid-run (killed, signalled, their store removed) use the test fixture task ``faulty`` with a 0.3 s sleep per
round (``--config-dir tests/fixtures/faulty/conf``), so the moment is reproducible on a loaded machine.
Times are wall-clock on a shared machine (they include Python start-up, ~5-10 s here).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAULTY = REPO / "tests" / "fixtures" / "faulty"
SLOW = ["--config-dir", str(FAULTY / "conf"), "task=faulty", "task.delay=0.3", "task.noise_std=0.5", "algo=random",
        "tracking.flush_every=1"]
PASSWORD = "hunter2"


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO), str(FAULTY), e.get("PYTHONPATH", "")])
    e.setdefault("OMP_NUM_THREADS", "1")
    return e


def start(cwd: Path, *args: str) -> subprocess.Popen:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "hpoflow", *args], cwd=cwd, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def cli(cwd: Path, *args: str, module: str = "hpoflow") -> tuple[int, str, str, float]:
    cwd.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env(), capture_output=True, text=True,
                       timeout=900, check=False)
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t


def checkpoint(cwd: Path) -> Path | None:
    return next(iter(sorted(cwd.glob("outputs/runs/*/*/checkpoint.json"))), None)


def round_of(cwd: Path) -> int:
    path = checkpoint(cwd)
    try:
        return int(json.loads(path.read_text())["round"]) if path else 0
    except (OSError, ValueError, KeyError):
        return 0


def wait_round(proc: subprocess.Popen, cwd: Path, target: int) -> None:
    deadline = time.time() + 600
    while proc.poll() is None and round_of(cwd) < target and time.time() < deadline:
        time.sleep(0.05)


def error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and " INFO " not in ln]


def one(stderr: str) -> str:
    lines = error_lines(stderr)
    first = re.sub(r"resume='[^']*': ", "", lines[0]) if lines else "(nothing on stderr)"
    first = re.sub(r"(/tmp/hpoflow-defects-\w+/)", "<scratch>/", first)
    return (
        (first[:150] + "...")
        if len(first) > 150
        else first + ("" if len(lines) <= 1 else f" (+{len(lines) - 1} lines)")
    )


def store_rows(db: Path) -> tuple[list[tuple[str, str]], int, int]:
    """(run id, status) per run, metric rows, distinct (run, key, step) rows: read with sqlite3 directly."""
    with sqlite3.connect(db) as con:
        runs = con.execute("select run_uuid, status from runs").fetchall()
        rows = con.execute("select count(*) from metrics").fetchone()[0]
        distinct = con.execute("select count(*) from (select distinct run_uuid, key, step from metrics)").fetchone()[0]
    return runs, rows, distinct


def steps(db: Path, run_id: str) -> list[int]:
    with sqlite3.connect(db) as con:
        return [s for (s,) in con.execute("select step from metrics where run_uuid=? and key='query_cost' "
                                          "order by step", (run_id,))]


def defect_1(tmp: Path, out: list[str]) -> None:
    db = tmp / "m.db"
    uri = f"sqlite:///{db}"
    victim = start(tmp, *SLOW, "budget.rounds=60", "seed=1", f"tracking.uri={uri}")  # 17 s left after the kill
    wait_round(victim, tmp, 5)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    folder = checkpoint(tmp).parent
    older = tmp / "older_copy"
    shutil.copytree(folder, older)
    a = start(tmp, f"resume={folder}", f"tracking.uri={uri}")
    time.sleep(3)
    b = start(tmp, f"resume={folder}", f"tracking.uri={uri}")
    (ra, ea), (rb, eb) = [(p.wait(), p.communicate()[1]) for p in (a, b)]
    runs, rows, distinct = store_rows(db)
    out.append(f"1a two resumes 3 s apart: exit codes {ra}, {rb}; the second: {one(eb if rb else ea)}")
    out.append(f"   store: runs {runs}; metric rows {rows}, distinct (run, key, step) {distinct}: "
               f"{rows - distinct} duplicated")
    before = (
        store_rows(db),
        (db.parent / "mlartifacts").stat().st_mtime if (db.parent / "mlartifacts").exists() else 0,
    )
    code, _, err, _ = cli(tmp, f"resume={older}", f"tracking.uri={uri}")
    after = (store_rows(db), (db.parent / "mlartifacts").stat().st_mtime if (db.parent / "mlartifacts").exists() else 0)
    out.append(f"1b resume from an older copy of the FINISHED run's folder: exit {code}: {one(err)}; "
               f"store unchanged: {before == after}")


def defect_2(tmp: Path, out: list[str]) -> None:
    uri = f"sqlite:///{tmp / 'm.db'}"
    procs = [start(tmp, "task=branin", "algo=random", f"seed={s}", "budget.rounds=30", f"tracking.uri={uri}")
             for s in (0, 1)]
    codes = [p.wait() for p in procs]
    cps = sorted(tmp.glob("outputs/runs/*/*/checkpoint.json"))
    ids = {json.loads(p.read_text())["meta"]["run_id"] for p in cps}
    out.append(f"2a two runs started together: exit {codes}; {len(cps)} run folders, {len(cps)} checkpoints for "
               f"{len(ids)} runs: {[p.parent.name for p in cps]}")
    sweeps = [start(tmp / "sweeps", "-m", "task=branin", "algo=random", "seed=0", "budget.rounds=2",
                    f"tracking.uri={uri}", "tracking.experiment=sweeps") for _ in range(2)]
    codes = [p.wait() for p in sweeps]
    folders = sorted(p.name for p in (tmp / "sweeps").glob("outputs/multirun/*/*"))
    with sqlite3.connect(tmp / "m.db") as con:
        sweep_ids = sorted({v for (v,) in con.execute("select value from tags where key='sweep_id'")})
    out.append(f"2b two sweeps started together: exit {codes}; folders {folders}; sweep ids {sweep_ids}")


def defect_3(tmp: Path, out: list[str]) -> None:
    uri = f"sqlite:///{tmp / 'm.db'}"
    proc = start(tmp, *SLOW, "budget.rounds=12", f"tracking.uri={uri}")
    wait_round(proc, tmp, 4)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    path = checkpoint(tmp)
    text = path.read_text()
    data = json.loads(text)
    for name, forged in (('"round": 999', text.replace(f'"round":{data["round"]},', '"round":999,')),
                         ("rounds cut to 2, round 4", json.dumps({**data, "rounds": data["rounds"][:2]},
                                                                  separators=(",", ":")))):
        target = tmp / "forged" / "checkpoint.json"
        target.parent.mkdir(exist_ok=True)
        target.write_text(forged)
        code, _, err, _ = cli(tmp, f"resume={target}", f"tracking.uri={uri}")
        out.append(f"3  checkpoint with {name}: exit {code}: {one(err)}")
    code, _, err, _ = cli(tmp, f"resume={path.parent}", f"tracking.uri={uri}")
    runs, _, _ = store_rows(tmp / "m.db")
    out.append(
        f"3  the untouched checkpoint: exit {code}; run {runs[0][1]}, steps {len(steps(tmp / 'm.db', runs[0][0]))}"
    )


def defect_4(tmp: Path, out: list[str]) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        db = tmp / f"{sig.name}.db"
        cwd = tmp / sig.name
        slow = [a for a in SLOW if not a.startswith("tracking.flush_every=")]  # a key given twice is refused
        proc = start(cwd, *slow, "budget.rounds=20", "tracking.flush_every=100", f"tracking.uri=sqlite:///{db}")
        wait_round(proc, cwd, 5)
        proc.send_signal(sig)
        code, (_, err) = proc.wait(), proc.communicate()
        runs, _, _ = store_rows(db)
        out.append(f"4  {sig.name} at round {round_of(cwd)}: exit {code}, {len(error_lines(err))} stderr line(s), "
                   f"'Traceback' {err.count('Traceback')}x; run {runs[0][1]}, steps logged {steps(db, runs[0][0])}; "
                   f"{one(err)}")
    db = tmp / "stale.db"
    proc = start(tmp / "stale", *SLOW, "budget.rounds=20", f"tracking.uri=sqlite:///{db}")
    wait_round(proc, tmp / "stale", 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    code, stdout, _, _ = cli(tmp, "stale", "--mark-failed", f"tracking.uri=sqlite:///{db}", module="hpoflow.store.runs")
    runs, _, _ = store_rows(db)
    out.append(f"4  SIGKILL, then python -m hpoflow.store.runs stale --mark-failed: exit {code}: "
               f"{stdout.strip().splitlines()[-1]}; run now {runs[0][1]}")


def defect_5(tmp: Path, out: list[str]) -> None:
    store = tmp / "store"
    proc = start(tmp / "rm", *SLOW, "budget.rounds=20", f"tracking.uri=sqlite:///{store}/m.db")
    wait_round(proc, tmp / "rm", 3)
    shutil.rmtree(store)
    code, (_, err) = proc.wait(), proc.communicate()
    out.append(
        f"5a rm -rf of the store at round 3 of 20: exit {code}; checkpoint kept at round {round_of(tmp / 'rm')}; "
        f"{one(err)}"
    )
    store = tmp / "ro"
    proc = start(tmp / "ro_run", *SLOW, "budget.rounds=20", f"tracking.uri=sqlite:///{store}/m.db")
    wait_round(proc, tmp / "ro_run", 3)
    files = [str(p) for p in [store, *store.iterdir()]]
    immutable = subprocess.run(["chattr", "+i", *files], capture_output=True, check=False).returncode == 0
    code, (_, err) = proc.wait(), proc.communicate()
    subprocess.run(["chattr", "-i", *files], capture_output=True, check=False)
    if not immutable:
        out.append("5b chattr +i not permitted here: skipped")
        return
    runs, _, _ = store_rows(store / "m.db")
    out.append(f"5b chattr +i on the store at round 3: exit {code}, 'Traceback' {err.count('Traceback')}x, run "
               f"{runs[0][1]} (resumable: lease holder gone); {one(err)}")
    code, _, err, _ = cli(tmp / "ro_run", f"resume={checkpoint(tmp / 'ro_run').parent}", f"tracking.uri=sqlite:///{store}/m.db")
    runs, _, _ = store_rows(store / "m.db")
    out.append(
        f"   after chattr -i, resume: exit {code}; run {runs[0][1]} with steps {len(steps(store / 'm.db', runs[0][0]))}"
    )


def defect_6(tmp: Path, out: list[str]) -> None:
    code, stdout, err, secs = cli(tmp, "task=branin", "algo=random", "budget.rounds=3",
                                  f"tracking.uri=http://bob:{PASSWORD}@127.0.0.1:1")
    leaks = [
        str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file() and PASSWORD in p.read_text(errors="replace")
    ]
    out.append(f"6  dead http store: exit {code} after {secs:.1f} s wall (incl. start-up); '{PASSWORD}' in output "
               f"{(stdout + err).count(PASSWORD)}x, in files {leaks}; {one(err)}")


NONSENSE = [["budget.cost=nan"], ["task.noise_std=nan"], ["algo=gp_ucb", "algo.beta=nan"], ["task.low=nan"],
            ["+foo=1"], ["task=hartmann6", "task.dim=3"], [f"budget.rounds={2**70}"], ["tracking.uri="],
            ["tracking.run_name=" + "x" * 5000], ["seed=1180591620717411303424"],
            ["task=styblinski_tang", "task.dim=100000000000"]]


def defect_7(tmp: Path, out: list[str]) -> None:
    for i, args in enumerate(NONSENSE):
        uri = [] if any(a.startswith("tracking.uri") for a in args) else [f"tracking.uri=sqlite:///{tmp / 'm.db'}"]
        code, _, err, _ = cli(tmp / str(i), "task=branin", "algo=random", "budget.rounds=3", *args, *uri)
        shown = " ".join(a if len(a) < 40 else a[:25] + "...(5000 chars)" for a in args)
        out.append(f"7  {shown:42s} exit {code}, tracebacks {err.count('Traceback')}: {one(err)}")


def defect_8(tmp: Path, out: list[str]) -> None:
    uri = f"sqlite:///{tmp / 'm.db'}"
    original = [*SLOW, "budget.rounds=12", "seed=5", f"tracking.uri={uri}"]
    proc = start(tmp, *original)
    wait_round(proc, tmp, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    folder = checkpoint(tmp).parent
    code, _, err, _ = cli(tmp, *original, "seed=6", f"resume={folder}")
    out.append(f"8  original command + resume, seed changed: exit {code}: {one(err)}")
    code, _, err, _ = cli(tmp, *original, f"resume={folder}")
    runs, rows, distinct = store_rows(tmp / "m.db")
    out.append(f"8  original command + resume=<folder>: exit {code}; run {runs[0][1]}, "
               f"{len(steps(tmp / 'm.db', runs[0][0]))} steps, {rows - distinct} duplicated rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", default=None, help="comma-separated defect numbers, e.g. 1,4")
    args = parser.parse_args()
    only = {int(x) for x in args.only.split(",")} if args.only else set(range(1, 9))
    out: list[str] = ["# Issue 15 defects re-run (after); 'before' numbers are quoted in the issue"]
    with tempfile.TemporaryDirectory(prefix="hpoflow-defects-") as root:
        for i, fn in enumerate((defect_1, defect_2, defect_3, defect_4, defect_5, defect_6, defect_7, defect_8), 1):
            if i not in only:
                continue
            start_len = len(out)
            fn(Path(root) / str(i), out)
            print("\n".join(out[start_len:]), flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
