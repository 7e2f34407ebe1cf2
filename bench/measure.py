"""Run a command as a fresh process with a timeout; report its wall time, peak RSS and output.

Peak RSS: Linux's ``ru_maxrss`` of a child is at least the RSS of the process that forked it (the
copied address space counts until ``exec``, and the high-water mark survives ``exec``). Measured with
``os.wait4`` from the harness, a small tool would be charged the harness's own memory. So the command
is started through ``/usr/bin/time -f %M`` (a ~1 MB process): the number it writes is the peak RSS of
the command alone. Without ``/usr/bin/time`` the ``wait4`` value is used and flagged as an upper bound.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Finished", "exact_rss", "spawn"]

_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else shutil.which("gtime")
exact_rss = _TIME is not None  # whether peak RSS is the command's alone


@dataclass(frozen=True)
class Finished:
    """How a process ended."""

    seconds: float  # wall time from start to exit, seen by the parent
    peak_rss_mb: float
    returncode: int
    timed_out: bool
    stdout: str
    stderr: str
    rss_exact: bool = True  # False: an upper bound that includes the harness's own RSS
    cpu_seconds: float = 0.0  # user + system time of the process and the children it waited for (wait4)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def failure(self) -> str:
        """A one-line reason, for the table."""
        if self.timed_out:
            return "timeout"
        lines = [line for line in self.stderr.strip().splitlines() if line.strip()]
        return f"exit {self.returncode}: {lines[-1][:160] if lines else 'no message'}"


def spawn(argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None, cwd: str | None = None) -> Finished:
    """Run ``argv`` to completion (or kill its process group after ``timeout`` seconds)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as rss:
        command = [_TIME, "-f", "%M", "-o", rss.name, *argv] if _TIME else list(argv)
        killed = threading.Event()
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=dict(env) if env else None, cwd=cwd, start_new_session=True)

        def kill() -> None:
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): take the child's process group down too
            kill()
            raise
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
        measured = rss.read().split()
        exact = bool(_TIME) and bool(measured) and measured[-1].isdigit()
        out.seek(0)
        err.seek(0)
        return Finished(
            seconds=seconds,
            peak_rss_mb=(int(measured[-1]) if exact else usage.ru_maxrss) / 1024.0,
            returncode=proc.returncode,
            timed_out=killed.is_set(),
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            rss_exact=exact,
            cpu_seconds=usage.ru_utime + usage.ru_stime,
        )
