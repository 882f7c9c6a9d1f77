"""A warm ``python -m hpoflow``: one process per test worker imports hpoflow, Hydra, MLflow and torch once, then
forks a child per CLI call. The child is a real process (its own pid, stdout, stderr, working folder, environment
and exit status) that runs the module with ``runpy`` exactly as ``python -m`` does, so the CLI tests keep testing
the real entry point while each call skips the ~3 s start-up (the suite's largest single cost, issue 28).

Only calls with the default test environment use it; a call with its own ``env`` (a different PYTHONPATH, say)
gets a fresh interpreter, since modules already imported would not see that environment, and so does a sweep
through a process launcher (joblib's loky workers under a forked child took 329 s instead of 24 s).
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
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
from hpoflow.config.identity import register_resolvers
from hpoflow.config.schema import register_configs
register_configs()  # ~0.4 CPU s: the typed nodes of every option, once (a child's own call then stores nothing)
register_resolvers()


def _warm_up():
    """One refused call, as a child would run it: Hydra's and hpoflow's first-call costs (~0.25 CPU s: plugin
    discovery, parser and grammar caches) are paid here once instead of in every child."""
    import contextlib, io, tempfile
    argv, cwd = sys.argv, os.getcwd()
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        os.chdir(folder)
        sys.argv = ["hpoflow", "task=branin", "algo=random", "algo.nope=1", "tracking=off"]
        try:
            runpy.run_module("hpoflow", run_name="__main__", alter_sys=True)
        except SystemExit:
            pass
        finally:
            sys.argv = argv
            os.chdir(cwd)


_warm_up()
def _wait(pid, timeout, kill):
    """The child's exit status, waiting up to ``timeout`` s; at the deadline it is killed (``kill``) or None."""
    deadline = time.monotonic() + timeout
    while True:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(raw), False
        if time.monotonic() > deadline:
            if not kill:
                return None, True
            os.killpg(pid, signal.SIGKILL)
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), True
        time.sleep(0.02)


reply = sys.stdout
reply.write(json.dumps({"ready": True}) + "\n")  # WarmCli.start waits for this line
reply.flush()
for line in sys.stdin:
    req = json.loads(line)
    op = req.get("op", "run")  # run: fork and wait; start: fork and answer the pid; wait: one started child
    if op == "wait":
        code, timed_out = _wait(req["pid"], req["timeout"], kill=False)
        reply.write(json.dumps({"code": code, "timed_out": timed_out}) + "\n")
        reply.flush()
        continue
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
    if op == "start":
        reply.write(json.dumps({"pid": pid}) + "\n")
    else:
        code, timed_out = _wait(pid, req["timeout"], kill=True)
        reply.write(json.dumps({"code": code, "timed_out": timed_out}) + "\n")
    reply.flush()
'''


class WarmCli:
    """The fork server of one test worker; :meth:`run` is ``subprocess.run([python, -m, module, *args])``."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.spool = Path(tempfile.mkdtemp(prefix="hpoflow-cli-"))  # the children's stdout and stderr files
        self.calls = 0

    def start(self) -> WarmCli:
        """Start the server (if it is not running) and wait until it has imported everything (~3-10 s)."""
        self._server()
        return self

    def _server(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         env=self.env, text=True, bufsize=1)
            assert self.proc.stdout is not None
            if not self.proc.stdout.readline():
                raise RuntimeError(f"the CLI fork server did not start (exit {self.proc.wait()})")
        return self.proc

    def _ask(self, request: dict) -> dict:
        server = self._server()
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"the CLI fork server died (exit {server.poll()})")
        return json.loads(line)

    def _spool(self) -> tuple[Path, Path]:
        self.calls += 1
        return self.spool / f"{self.calls}.out", self.spool / f"{self.calls}.err"

    def _request(self, op: str, module: str, args: list[str], cwd: Path, out: Path, err: Path,
                 timeout: float) -> dict:
        return self._ask({"op": op, "module": module, "args": list(args), "cwd": str(cwd), "env": self.env,
                          "out": str(out), "err": str(err), "timeout": timeout})

    def run(self, module: str, args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
        out, err = self._spool()
        reply = self._request("run", module, args, cwd, out, err, timeout)
        stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        cmd = [sys.executable, "-m", module, *args]
        if reply["timed_out"]:
            raise subprocess.TimeoutExpired(cmd, timeout, stdout, stderr)
        return subprocess.CompletedProcess(cmd, reply["code"], stdout, stderr)

    def popen(self, module: str, args: list[str], cwd: Path) -> WarmProcess:
        """``subprocess.Popen([python, -m, module, *args], stdout=PIPE, stderr=PIPE, text=True)``, forked."""
        out, err = self._spool()
        pid = self._request("start", module, args, cwd, out, err, 0)["pid"]
        return WarmProcess(self, pid, [sys.executable, "-m", module, *args], out, err)

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


class WarmProcess:
    """A child started by :meth:`WarmCli.popen`: the part of ``subprocess.Popen`` the CLI tests use (``pid``,
    ``poll``, ``wait``, ``send_signal``, ``kill``, ``communicate``, ``returncode``)."""

    def __init__(self, cli: WarmCli, pid: int, args: list[str], out: Path, err: Path) -> None:
        self.cli, self.pid, self.args, self.out, self.err = cli, pid, args, out, err
        self.returncode: int | None = None
        self._output: tuple[str, str] | None = None

    def _wait(self, timeout: float) -> int | None:
        if self.returncode is None:
            self.returncode = self.cli._ask({"op": "wait", "pid": self.pid, "timeout": timeout})["code"]
        return self.returncode

    def poll(self) -> int | None:
        return self._wait(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._wait(10**6 if timeout is None else timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        if self._output is None:
            self._output = (self.out.read_text(errors="replace"), self.err.read_text(errors="replace"))
            self.out.unlink()
            self.err.unlink()
        return self._output


_SERVERS: dict[tuple[tuple[str, str], ...], WarmCli] = {}


def warm_server(env: dict[str, str]) -> WarmCli:
    """The warm server of this test worker for ``env`` (one per distinct environment, closed at exit).

    pytest's own ``PYTEST_CURRENT_TEST`` (it names the test and its phase) is left out of the environment."""
    env = {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}
    key = tuple(sorted(env.items()))
    if key not in _SERVERS:
        if not _SERVERS:
            atexit.register(lambda: [cli.close() for cli in _SERVERS.values()])
        _SERVERS[key] = WarmCli(env)
    return _SERVERS[key]
