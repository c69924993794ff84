"""A Harbor environment that runs trials in bubblewrap on this machine (no Docker).

    harbor run -p evals/tasks/py-window-end -a oracle \\
        -e skillci.runners.harbor_env.bwrap:BwrapEnvironment \\
        --ek ro_binds=/opt/py:/opt/venv --ek path=/opt/venv/bin:/usr/bin:/bin

This module is loaded by *Harbor's* interpreter (Python >= 3.12, Harbor's own venv), so it
imports nothing from skillci: only Harbor and the standard library. skillci's Harbor driver
puts a directory holding just a ``skillci`` link on ``PYTHONPATH`` and passes the kwargs.

The sandbox's filesystem is a host directory (``<trial dir>/sandbox``): a path ``/a/b`` in the
sandbox is ``<sandbox>/a/b`` on the host. Every command runs as ``bash -c`` in a fresh
``bwrap --unshare-all`` (network only with the task's ``allow_internet``) that sees the
host's ``/usr``, ``/etc`` and ``/lib*`` read-only, the dirs in ``ro_binds`` read-only (e.g.
the Python with pytest the tasks need: the environment has no image to install it in), and
each top-level dir of the sandbox (``/app``, ``/logs``, ``/tests``, ``/solution``,
``/tmp``...) writable. Uploads and downloads are file copies.

What ``start`` makes of ``environment/``: the Dockerfile's last ``WORKDIR`` (default
``/app``) receives a copy of ``environment/`` minus the Dockerfile, ``.dockerignore`` and the
names ``.dockerignore`` lists — what ``COPY . <workdir>`` does. ``RUN`` steps are NOT
executed (nothing is installed): the host (plus ``ro_binds``) must provide the tools.
Resource limits are not enforced (``--cpus``/``--memory`` policies other than ignore/auto
are refused by Harbor's checks because this class declares no resource capabilities).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult  # type: ignore[import-not-found]
from harbor.environments.capabilities import (  # type: ignore[import-not-found]
    EnvironmentCapabilities,
)

#: Top-level host dirs a sandbox path may never map onto.
SYSTEM_DIRS = frozenset(
    {"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "dev", "sys"}
)
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
MAX_OUTPUT = 4 * 1024 * 1024


def _dockerfile_workdir(dockerfile: Path) -> str:
    workdir = "/app"
    if dockerfile.is_file():
        for line in dockerfile.read_text(errors="replace").splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0].upper() == "WORKDIR":
                workdir = parts[1].strip()
    return workdir


def _ignored(env_dir: Path) -> set[str]:
    names = {"Dockerfile", ".dockerignore"}
    ignore = env_dir / ".dockerignore"
    if ignore.is_file():
        for line in ignore.read_text(errors="replace").splitlines():
            line = line.strip().strip("/")
            if line and not line.startswith("#"):
                names.add(line)
    return names


class BwrapEnvironment(BaseEnvironment):  # type: ignore[misc]
    """Harbor environment: bubblewrap sandboxes over a per-trial host directory."""

    def __init__(
        self,
        *args: Any,
        ro_binds: str = "",
        path: str = DEFAULT_PATH,
        **kwargs: Any,
    ) -> None:
        self._ro_binds = [p for p in ro_binds.split(":") if p]
        self._path = path
        super().__init__(*args, **kwargs)
        self._root = Path(self.trial_paths.trial_dir) / "sandbox"
        self._workdir = _dockerfile_workdir(Path(self.environment_dir) / "Dockerfile")

    @staticmethod
    def type() -> str:
        return "skillci-bwrap"

    @property
    def capabilities(self) -> Any:
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        if not Path(self.environment_dir).is_dir():
            raise FileNotFoundError(f"{self.environment_dir} is not a directory")
        if shutil.which("bwrap") is None:
            raise RuntimeError("bubblewrap (bwrap) is not installed on this machine")

    # ------------------------------------------------------------------ paths

    def host_path(self, sandbox_path: str) -> Path:
        """Where a sandbox path lives on the host (refuses system dirs and escapes)."""
        p = PurePosixPath(sandbox_path)
        if not p.is_absolute():
            p = PurePosixPath(self._workdir) / p
        parts = [x for x in p.parts[1:] if x not in ("", ".")]
        if not parts or ".." in parts or parts[0] in SYSTEM_DIRS:
            raise PermissionError(f"{sandbox_path}: outside what this sandbox can hold")
        return self._root.joinpath(*parts)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, force_build: bool) -> None:
        if force_build and self._root.exists():
            shutil.rmtree(self._root)
        env_dir = Path(self.environment_dir)
        work = self.host_path(self._workdir)
        if not work.exists():
            work.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(
                env_dir, work, ignore=shutil.ignore_patterns(*_ignored(env_dir), "__pycache__")
            )
        for d in ("/tmp", "/logs/agent", "/logs/verifier", "/logs/artifacts"):  # noqa: S108
            self.host_path(d).mkdir(parents=True, exist_ok=True)

    async def stop(self, delete: bool) -> None:
        if delete and self._root.exists():
            shutil.rmtree(self._root, ignore_errors=True)

    # ------------------------------------------------------------------ files

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        dest = self.host_path(target_path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, dest)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, self.host_path(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.host_path(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        src = self.host_path(source_dir)
        if src.is_dir():
            shutil.copytree(src, target_dir, dirs_exist_ok=True)

    # ------------------------------------------------------------------ exec

    def argv(self, command: str, cwd: str | None, env: dict[str, str]) -> list[str]:
        args = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all"]
        if not self._network_disabled:
            args.append("--share-net")
        args += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            p = Path("/") / name
            if p.is_symlink():
                args += ["--symlink", os.readlink(p), f"/{name}"]
            elif p.is_dir():
                args += ["--ro-bind", str(p), f"/{name}"]
        args += ["--dev", "/dev", "--proc", "/proc"]
        self._root.mkdir(parents=True, exist_ok=True)
        for top in sorted(self._root.iterdir()):
            if top.is_dir() and top.name not in SYSTEM_DIRS:
                args += ["--bind", str(top), f"/{top.name}"]
        for (
            extra
        ) in self._ro_binds:  # last: a Python under /tmp stays visible over the sandbox's /tmp
            args += ["--ro-bind", extra, extra]
        args += ["--chdir", cwd or self._workdir, "--clearenv"]
        for k, v in env.items():
            args += ["--setenv", k, v]
        return [*args, "--", "bash", "-c", command]

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        full_env = {
            "PATH": self._path,
            "HOME": "/tmp",  # noqa: S108 - the sandbox's own /tmp
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            **(self._merge_env(env) or {}),
        }
        proc = await asyncio.create_subprocess_exec(
            *self.argv(command, cwd, full_env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout_sec)
        except (TimeoutError, asyncio.CancelledError):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise
        return ExecResult(
            stdout=out[:MAX_OUTPUT].decode("utf-8", errors="replace"),
            stderr=err[:MAX_OUTPUT].decode("utf-8", errors="replace"),
            return_code=proc.returncode if proc.returncode is not None else -1,
        )


__all__ = ["BwrapEnvironment"]
