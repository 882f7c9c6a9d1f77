"""Run many short CLI invocations cheaply: one subprocess imports hpoflow, Hydra, MLflow and torch once, then
forks a child per invocation that runs ``python -m hpoflow <args>`` (``runpy``, as the interpreter does) with its
own stdout, stderr, working folder and exit status. A bad-input case costs ~0.2 s instead of a ~5 s start-up,
which is what lets the fuzz test hold 140+ cases on a small machine.

Usage: ``run_many([(cwd, [args...]), ...]) -> [(exit status, stdout, stderr), ...]``.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SERVER = r'''
import json, os, runpy, sys
import hydra, mlflow, omegaconf, torch  # the costly imports, once
from mlflow.tracking import MlflowClient  # noqa: F401
import hpoflow.config.settings, hpoflow.runner.build, hpoflow.cli.errors  # noqa: F401
from hpoflow.config import registry
for _kind in ("algorithm", "task", "surrogate"):  # every built-in's module (sklearn, gpytorch, ...), once
    for _entry in registry.entries(_kind):
        if not _entry.missing():  # an optional extra that is not installed stays unimported
            try:
                _entry.load()
            except Exception:
                pass
cases = json.load(sys.stdin)
results = []
for module, cwd, args, out, err in cases:
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        fo, fe = os.open(out, flags), os.open(err, flags)
        os.dup2(fo, 1)
        os.dup2(fe, 2)
        sys.argv = [module, *args]
        code = 0
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    results.append(os.waitstatus_to_exitcode(status))
print(json.dumps(results))
'''


def run_many(cases: list[tuple[Path, list[str]]], env: dict[str, str], module: str = "hpoflow",
             timeout: float = 1800) -> list[tuple[int, str, str]]:
    """Exit status, stdout and stderr of ``python -m <module> <args>`` run in ``cwd``, for each case."""
    specs = []
    for i, (cwd, args) in enumerate(cases):
        cwd.mkdir(parents=True, exist_ok=True)
        specs.append([module, str(cwd), list(args), str(cwd / f".out{i}"), str(cwd / f".err{i}")])
    proc = subprocess.run([sys.executable, "-c", SERVER], input=json.dumps(specs), env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the fork server failed: {proc.stderr[-3000:]}")
    codes = json.loads(proc.stdout.strip().splitlines()[-1])
    out = []
    for (_, _, _, o, e), code in zip(specs, codes):
        text_out, text_err = Path(o).read_text(errors="replace"), Path(e).read_text(errors="replace")
        Path(o).unlink()
        Path(e).unlink()
        out.append((code, text_out, text_err))
    return out
