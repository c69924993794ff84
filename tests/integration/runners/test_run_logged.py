"""``run_logged`` (how skillci runs ``harbor run`` and ``bench``): the exit code, the log, a
timeout as 124 with the child killed, and a wait that costs this process almost no CPU
(design 413: the coordinator's CPU per remote trial)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from skillci.runners.cliparse import run_logged


def test_exit_code_and_output_go_to_the_log(tmp_path: Path) -> None:
    code = run_logged([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"],
                      log=tmp_path / "a" / "log", timeout=60)  # fmt: skip
    assert code == 3 and (tmp_path / "a" / "log").read_text() == "out\n"


def test_a_timeout_is_124_and_kills_the_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    t0 = time.perf_counter()
    code = run_logged(["bash", "-c", f"echo $$ > {pidfile}; exec sleep 60"],
                      log=tmp_path / "log", timeout=2.0)  # fmt: skip
    assert code == 124 and time.perf_counter() - t0 < 30
    pid = int(pidfile.read_text())
    try:
        os.kill(pid, 0)
        alive = Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except ProcessLookupError:
        alive = False
    assert not alive


def test_waiting_costs_almost_no_cpu(tmp_path: Path) -> None:
    # subprocess.run(timeout=...) polls every 50 ms: ~6 ms of CPU over these 4 s
    c0 = time.process_time()
    assert run_logged(["sleep", "4"], log=tmp_path / "log", timeout=600) == 0
    assert time.process_time() - c0 < 0.003


_CLEANUP = """
import signal, sys, time
def stop(*_):
    print("cleaning up", flush=True)  # BenchFlow tears its sandbox down here
    sys.exit(130)
signal.signal(signal.SIGINT, stop)
print("started", flush=True)
time.sleep(60)
"""


def test_a_stop_event_interrupts_the_child_which_cleans_up(tmp_path: Path) -> None:
    """Design 440: once the gateway saw the route fail, bench gets SIGINT (its cleanup
    runs), not the rest of its retries; it is killed if it outlives the grace."""
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    t0 = time.perf_counter()
    code = run_logged([sys.executable, "-c", _CLEANUP], log=tmp_path / "log", timeout=120,
                      stop=stop)  # fmt: skip
    assert code == 130 and time.perf_counter() - t0 < 20
    assert (tmp_path / "log").read_text() == "started\ncleaning up\n"
    # a child that ignores SIGINT is killed after the grace
    stop2 = threading.Event()
    threading.Timer(1.5, stop2.set).start()  # after the child set SIG_IGN
    ignore = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    t0 = time.perf_counter()
    code = run_logged([sys.executable, "-c", ignore], log=tmp_path / "log2", timeout=120,
                      stop=stop2, grace=1.0)  # fmt: skip
    assert code == -9 and time.perf_counter() - t0 < 20
