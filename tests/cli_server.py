"""A warm ``python -m hpoflow``: one process per test worker imports hpoflow, Hydra, MLflow and torch once, then
forks a child per CLI call. The child is a real process (its own pid, stdout, stderr, working folder, environment
and exit status) that runs the module with ``runpy`` exactly as ``python -m`` does, so the CLI tests keep testing
the real entry point while each call skips the ~3 s start-up (the suite's largest single cost, issue 28).

Only calls with the default test environment use it; a call with its own ``env`` (a different PYTHONPATH, say)
gets a fresh interpreter, since modules already imported would not see that environment, and so does a sweep
through a process launcher (joblib's loky workers under a forked child took 329 s instead of 24 s).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SERVER = r'''
import json, os, runpy, signal, sys, time
import hydra, mlflow, omegaconf, torch  # the costly imports, once
from mlflow.tracking import MlflowClient  # noqa: F401
import hpoflow.config.settings, hpoflow.runner.build, hpoflow.cli.errors, hpoflow.cli.main  # noqa: F401
from hpoflow.config import registry
for _kind in ("algorithm", "task", "surrogate"):  # every built-in's module (sklearn, gpytorch, ...), once
    for _entry in registry.entries(_kind):
        if not _entry.missing():  # an optional extra that is not installed stays unimported
            try:
                _entry.load()
            except Exception:
                pass
reply = sys.stdout
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setsid()  # its own process group, as a subprocess would not share the test's
            os.chdir(req["cwd"])
            os.environ.clear()
            os.environ.update(req["env"])
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            fo, fe, fi = os.open(req["out"], flags), os.open(req["err"], flags), os.open(os.devnull, os.O_RDONLY)
            os.dup2(fi, 0)
            os.dup2(fo, 1)
            os.dup2(fe, 2)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            sys.path[0] = req["cwd"]  # python -m puts the working folder first
            sys.argv = [req["module"], *req["args"]]
            try:
                code = 0
                runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                import traceback
                traceback.print_exc()
                code = 1
            import atexit
            atexit._run_exitfuncs()  # as an interpreter's exit does: joblib's workers, logging, MLflow's flushes
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    deadline, status, timed_out = time.monotonic() + req["timeout"], None, False
    while status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
        elif time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            status, timed_out = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), True
        else:
            time.sleep(0.02)
    reply.write(json.dumps({"code": status, "timed_out": timed_out}) + "\n")
    reply.flush()
'''


class WarmCli:
    """The fork server of one test worker; :meth:`run` is ``subprocess.run([python, -m, module, *args])``."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.spool = Path(tempfile.mkdtemp(prefix="hpoflow-cli-"))  # the children's stdout and stderr files

    def _server(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=self.env, text=True, bufsize=1)
        return self.proc

    def run(self, module: str, args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
        out, err = self.spool / "stdout", self.spool / "stderr"
        server = self._server()
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps({"module": module, "args": list(args), "cwd": str(cwd), "env": self.env,
                                       "out": str(out), "err": str(err), "timeout": timeout}) + "\n")
        server.stdin.flush()
        line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"the CLI fork server died (exit {server.poll()})")
        reply = json.loads(line)
        stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        cmd = [sys.executable, "-m", module, *args]
        if reply["timed_out"]:
            raise subprocess.TimeoutExpired(cmd, timeout, stdout, stderr)
        return subprocess.CompletedProcess(cmd, reply["code"], stdout, stderr)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.spool, ignore_errors=True)


def fresh_interpreter_wanted() -> bool:
    """``HPOFLOW_TEST_FRESH_CLI=1`` runs every CLI call in a fresh interpreter (to check the warm server)."""
    return os.environ.get("HPOFLOW_TEST_FRESH_CLI", "") not in ("", "0")
