"""The real server binary, run as a child process for the tests."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO

# tests/ -> clients/python -> clients -> the repository.
CLIENT_DIR = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = CLIENT_DIR.parents[1] / "target" / "release" / "carcassonne"
LISTENING = re.compile(r"^listening on (\S+):(\d+)$")
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0


def server_binary() -> Path:
    """$CARCASSONNE_BIN, else the release build of the repository."""
    path = Path(os.environ.get("CARCASSONNE_BIN") or DEFAULT_BINARY)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise FileNotFoundError(
            f"no server binary at {path}: run `cargo build --release` at the "
            "repository root, or set CARCASSONNE_BIN"
        )
    return path


class ServerProcess:
    """`carcassonne serve` on a free loopback port with its own data dir.

    Its log (stderr) goes to a file, shown when something goes wrong; its
    stdout is drained by a thread so that the pipe never fills and blocks it.
    """

    def __init__(
        self,
        data_dir: Path,
        log_path: Path,
        *,
        admin_key: str | None = None,
        addr: str = "127.0.0.1:0",
    ) -> None:
        """`admin_key`: the server's admin key (CARCASSONNE_ADMIN_KEY), which
        makes organisers. `addr`: a fixed address to start again on (the
        default is a free port)."""
        self.data_dir = data_dir
        self.log_path = log_path
        self.admin_key = admin_key
        self.address = ""
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._log: IO[bytes] = open(log_path, "ab")
        env = {k: v for k, v in os.environ.items() if k != "CARCASSONNE_ADMIN_KEY"}
        if admin_key is not None:
            env["CARCASSONNE_ADMIN_KEY"] = admin_key
        self.process = subprocess.Popen(
            [str(server_binary()), "serve", "--addr", addr, "--data", str(data_dir)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=env,
        )
        threading.Thread(target=self._drain, daemon=True).start()
        self.address = self._wait_for_address()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)  # end of output: the process is gone

    def _wait_for_address(self) -> str:
        """Reads the first stdout line, "listening on 127.0.0.1:PORT"."""
        try:
            first = self._lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            self.kill()
            raise RuntimeError(
                f"the server printed nothing in {START_TIMEOUT_S} s{self.log_tail()}"
            ) from None
        match = LISTENING.match(first or "")
        if match is None:
            self.kill()
            raise RuntimeError(f"unexpected first line {first!r}{self.log_tail()}")
        return f"{match.group(1)}:{match.group(2)}"

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        """Sends `sig` and returns the exit code (negative: killed by a
        signal). Kills the server if it does not exit in time."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(
                f"the server ignored {sig.name} for {STOP_TIMEOUT_S} s{self.log_tail()}"
            ) from None
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> ServerProcess:
        """The same data, address and admin key again, once this one has
        stopped."""
        return ServerProcess(
            self.data_dir, self.log_path, admin_key=self.admin_key, addr=self.address
        )

    def log_tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return "\nserver log:\n" + "\n".join(text) if text else ""
