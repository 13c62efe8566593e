"""``langgraph dev`` on loopback for tests and benchmarks: start (bounded wait), stop (its whole process group).

The server is started from the repository root (``langgraph.json`` names the graphs relative to it,
and ``langgraph dev`` puts the working directory on ``sys.path``, so the checkout's code is served).
Its local state goes to ``<root>/.langgraph_api`` (git-ignored); :class:`LangGraphDev` removes that
folder on :meth:`LangGraphDev.close` when it did not exist before.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def langgraph_executable() -> str:
    """The ``langgraph`` CLI next to this Python, else on the PATH.

    Raises:
        FileNotFoundError: not installed (``langgraph-cli[inmem]``, in the test extra).
    """
    beside = Path(sys.executable).with_name("langgraph")
    if beside.exists():
        return str(beside)
    found = shutil.which("langgraph")
    if not found:
        raise FileNotFoundError("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    return found


class LangGraphDev:
    """One ``langgraph dev`` process at a time, restartable; use as a context manager.

    Args:
        log_dir: folder for the server logs (``server-<n>.log``).
        jobs: ``--n-jobs-per-worker`` (runs executed at once).
        env: variables added to the server's environment (e.g. ``WTB_REPLAY_DELAY``); tracing and the
            CLI's network calls are off unless ``env`` turns tracing on.
        config: the ``langgraph.json`` to serve (default: the repository's).
    """

    def __init__(
        self, log_dir: Path, *, jobs: int = 8, env: Mapping[str, str] | None = None, config: Path | None = None
    ):
        self.config = Path(config) if config is not None else ROOT / "langgraph.json"
        self.log_dir = Path(log_dir)
        self.jobs = jobs
        self.env = dict(env or {})
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.starts = 0
        self.log_path: Path | None = None
        self._state_dir = ROOT / ".langgraph_api"
        self._state_existed = self._state_dir.exists()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` of the current (or last) process."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180.0) -> str:
        """Start the server on a new free port and wait until ``/ok`` answers; returns its URL.

        Raises:
            RuntimeError: it exited or did not answer within ``timeout`` seconds (log tail included).
        """
        import httpx

        self.stop()
        self.port = free_port()
        self.starts += 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / f"server-{self.starts}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "WTB_"))}
        env.update(
            LANGSMITH_TRACING="false",
            LANGGRAPH_CLI_NO_ANALYTICS="1",
            LANGGRAPH_NO_VERSION_CHECK="true",
            PYTHONUNBUFFERED="1",
            PYTHONPATH=str(ROOT),
        )
        env.update(self.env)
        command = [
            langgraph_executable(),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n-jobs-per-worker",
            str(self.jobs),
            "--config",
            str(self.config),
        ]
        with open(self.log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"langgraph dev exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=2).status_code == 200:
                    return self.url
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"langgraph dev did not answer within {timeout:.0f}s:\n{self.log_tail()}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server's process group with ``sig`` (SIGKILL after 15 s), waiting at most 30 s in all."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)

    def cpu_seconds(self) -> float | None:
        """User + system CPU seconds of the running server's process group so far (Linux ``/proc``), else ``None``."""
        if self.process is None:
            return None
        total, ticks = 0.0, os.sysconf("SC_CLK_TCK")
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.process.pid:  # process group id
                total += (int(fields[11]) + int(fields[12])) / ticks
        return total

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the current server log."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]

    def close(self) -> None:
        """Stop the server and remove ``.langgraph_api`` if this object's servers created it."""
        self.stop()
        if not self._state_existed:
            shutil.rmtree(self._state_dir, ignore_errors=True)

    def __enter__(self) -> LangGraphDev:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
