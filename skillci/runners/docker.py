"""The Docker runner: one trial in containers of the task's own image (docker SDK).

It is the :class:`~skillci.runners.local.TrialRunner` with its hooks filled in, so the agent,
the verifier, the record and the trial dir are the same code whichever runner ran them:

- **image** — ``--image`` (``TrialSpec.image``), else ``[environment] docker_image``, else the
  task's ``environment/Dockerfile`` built once and tagged ``skillci-task/<id>:<env hash>``
  (the hash of ``environment/``: an unchanged task reuses its image; a file lock keeps two
  processes from building it twice). Nothing is pulled implicitly for a Dockerfile build:
  its base must be in the engine (``scripts/ci_docker.sh`` makes one offline).
- **workspace** — the task's working directory (``[environment] workdir``, else the image's
  ``WORKDIR``, else ``/app``): what ``COPY`` and ``RUN`` made of it (the task's data, its git
  baseline) is exported once per image and directory into ``<state>/docker/workdirs/`` and
  unpacked into the trial's ``workspace/``, which is bind-mounted at the same path: the
  built-in agent's prompt and file tools, its commands and the verifier all see the same
  directory and the same bytes (docs/design/250-docker-workdir.md).
- **commands** — every shell command (the agent's ``run`` tool, the oracle's ``solve.sh``,
  ``tests/test.sh``) is a ``docker exec`` of ``bash -c`` under coreutils ``timeout -s KILL``
  in a container started from the image with ``sleep infinity``: the task's cpus and memory
  as limits, its ``gpus`` as an NVIDIA device request, ``network_mode="none"`` unless the task sets ``allow_internet``, the rendered
  skill bind-mounted read-only at ``/skills/<name>``, ``/solution`` only for the oracle and
  the agent's logs at ``/logs/agent``. The agent's container is removed before the verifier
  runs in a fresh one (the workspace, ``/tests`` read-only, ``/logs``), so nothing the agent left
  running or changed outside ``/app`` can touch the verdict; the verifier's files land in
  ``<trial>/logs/verifier/`` through the mount. Containers are always removed (labelled
  ``skillci.trial=<key>``), also when the trial fails.

Bind mounts need an engine on this machine: a ``tcp://``/``ssh://`` ``DOCKER_HOST`` is refused
up front instead of silently mounting empty directories on another host.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
import socket
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from filelock import FileLock

from skillci.agents.base import AgentResult, CommandResult, Shell
from skillci.agents.workspace import WORKSPACE_MOUNT
from skillci.errors import RunnerError
from skillci.fsutil import atomic_write_bytes
from skillci.runners.base import TrialSpec
from skillci.runners.capabilities import docker_capabilities
from skillci.runners.local import TrialRunner
from skillci.runners.sandbox import MAX_CAPTURE, Mount, scrub_env
from skillci.tasks.environment import (
    EnvRequirements,
    RunnerCapabilities,
    dockerfile_requirements,
    mountable,
)
from skillci.tasks.loader import dir_hash
from skillci.tasks.models import Task
from skillci.trace.models import Evaluation, RunRecord

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

IMAGE_PREFIX = "skillci-task"
LABEL = "skillci.trial"
#: PATH inside task containers (the image's own tools, not the host's).
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: Extra seconds the host waits for an exec past its in-container ``timeout``.
EXEC_GRACE_SEC = 15.0
DOCKER_HINT = (
    "start an engine and export DOCKER_HOST (on a CI machine: "
    'eval "$(bash scripts/ci_docker.sh start)")'
)


def _docker_errors() -> Any:
    import docker.errors

    return docker.errors


@functools.cache
def client() -> DockerClient:
    """The engine of ``DOCKER_HOST`` (checked once per process)."""
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith(("unix://", "npipe://")):
        raise RunnerError(
            f"DOCKER_HOST={host} is a remote engine; the Docker runner bind-mounts trial dirs "
            "and needs an engine on this machine",
            hint="point DOCKER_HOST at a local socket, or use --runner benchflow/harbor",
        )
    sock = host.removeprefix("unix://") if host.startswith("unix://") else None
    if not host:
        sock = "/var/run/docker.sock"
    if sock is not None:  # probe it ourselves: docker-py leaks the socket of a failed connect
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(5)
                probe.connect(sock)
        except OSError as exc:
            raise RunnerError(
                f"no Docker engine at unix://{sock}: {exc}", hint=DOCKER_HINT
            ) from exc
    import docker

    c = None
    try:
        c = docker.from_env(timeout=600)
        c.ping()
    except _docker_errors().DockerException as exc:
        if c is not None:
            c.close()
        where = host or "the default socket (/var/run/docker.sock)"
        raise RunnerError(f"no Docker engine at {where}: {exc}", hint=DOCKER_HINT) from exc
    return c


def check_engine() -> str:
    """Raise :class:`RunnerError` unless an engine answers; returns its version."""
    return str(client().version().get("Version", "?"))


def _base_images(dockerfile: Path) -> list[str]:
    """The images a Dockerfile's FROM lines name (stage aliases left out)."""
    bases = dockerfile_requirements(dockerfile.read_text(errors="replace"))["base_images"]
    assert isinstance(bases, list)
    return [str(b) for b in bases]


def _image_name(task: Task) -> str:
    """``skillci-task/<id>:<hash of environment/ and of the local base images' ids>``."""
    assert task.environment_dir is not None and task.dockerfile is not None
    h = hashlib.sha256(dir_hash(task.environment_dir).encode())
    for base in _base_images(task.dockerfile):
        with contextlib.suppress(_docker_errors().DockerException):
            h.update(str(client().images.get(base).id).encode())
    safe = re.sub(r"[^a-z0-9._-]+", "-", task.id.lower()).strip(".-_") or "task"
    return f"{IMAGE_PREFIX}/{safe}:{h.hexdigest()[:16]}"


def resolve_image(spec: TrialSpec) -> str:
    """The image a trial runs in, built from the task's Dockerfile when needed."""
    task = spec.task
    errors = _docker_errors()
    name = spec.image or task.config.environment.docker_image
    if name is not None:
        try:
            client().images.get(name)
        except errors.ImageNotFound:
            raise RunnerError(
                f"image {name} is not in the engine",
                hint="build or load it first (skillci pulls nothing), or drop --image",
            ) from None
        return name
    if task.dockerfile is None or task.environment_dir is None:
        raise RunnerError(
            f"task {task.id} has no environment/Dockerfile and no [environment] docker_image",
            hint="add a Dockerfile, or pass --image",
            file=task.root,
        )
    tag = _image_name(task)
    locks = spec.state_dir / "docker" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with FileLock(str(locks / (tag.replace("/", "_").replace(":", "_") + ".lock"))):
        try:
            client().images.get(tag)
            return tag
        except errors.ImageNotFound:
            pass
        try:
            client().images.build(
                path=str(task.environment_dir),
                dockerfile=task.dockerfile.name,
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                timeout=int(task.config.environment.build_timeout_sec),
                network_mode=os.environ.get("SKILLCI_DOCKER_BUILD_NETWORK") or None,
                labels={"skillci.task": task.id},
            )
        except errors.BuildError as exc:
            tail = "".join(str(x.get("stream", x.get("error", ""))) for x in exc.build_log)
            raise RunnerError(
                f"building {task.dockerfile} failed: {exc.msg}; last output: {tail[-400:]!r}",
                hint="build it by hand with `docker build` to see the whole log",
                file=task.dockerfile,
            ) from exc
        except errors.APIError as exc:
            raise RunnerError(f"building {task.dockerfile} failed: {exc}") from exc
    return tag


def _strip_first(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """Extraction filter: drop the archive's top dir (``app/``), then the data filter."""
    parts = PurePosixPath(member.name).parts
    if len(parts) <= 1:
        return None
    member = member.replace(name=str(PurePosixPath(*parts[1:])), deep=False)
    if member.islnk():
        link = PurePosixPath(member.linkname).parts[1:]
        member = member.replace(linkname=str(PurePosixPath(*link)), deep=False)
    return tarfile.data_filter(member, dest)


def image_workdir(image: str, declared: str | None = None) -> str:
    """The working directory a trial of ``image`` gets: the task's declared one, else the
    image's ``WORKDIR`` when a workspace can be mounted there, else ``/app``."""
    if declared:
        return declared
    config = client().images.get(image).attrs.get("Config") or {}
    wd = str(config.get("WorkingDir") or "")
    return wd if wd.startswith("/") and mountable(wd) else WORKSPACE_MOUNT


def export_workdir(image: str, state_dir: Path, path: str = WORKSPACE_MOUNT) -> Path:
    """A tarball of the image's ``path`` (cached per image id and path)."""
    img = client().images.get(image)
    digest = str(img.id).split(":")[-1]
    if path != WORKSPACE_MOUNT:  # /app keeps the name exports had before (design 250)
        digest += "-" + hashlib.sha256(path.encode()).hexdigest()[:8]
    out = state_dir / "docker" / "workdirs" / f"{digest}.tar"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    c = client().containers.create(image, entrypoint=["true"], labels={LABEL: "export"})
    try:
        stream, _ = c.get_archive(path)
        atomic_write_bytes(out, b"".join(stream))
    except _docker_errors().NotFound:
        raise RunnerError(
            f"image {image} has no {path}",
            hint="the task's working directory must exist in its image (WORKDIR, or "
            "[environment] workdir)",
        ) from None
    finally:
        c.remove(force=True)
    return out


def _container_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": CONTAINER_PATH,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "TERM": "dumb",
        "LOGS_DIR": "/logs",
        "SKILLCI_LOGS_DIR": "/logs",
    }
    env.update(extra or {})
    return scrub_env(env)  # no host secret reaches task code (design 310)


@dataclass
class DockerShell:
    """Runs each command as ``docker exec`` in one running container (cwd ``workdir``)."""

    container_id: str
    kind: str = "docker"
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = WORKSPACE_MOUNT

    def run(self, command: str, *, timeout: float) -> CommandResult:
        api = client().api
        limit = max(0.1, timeout)
        argv = ["timeout", "-s", "KILL", f"{limit:.3f}", "bash", "-c", command]
        start = time.monotonic()
        ex = api.exec_create(
            self.container_id, argv, workdir=self.workdir, environment=_container_env(self.env)
        )
        buf = io.BytesIO()

        def pump() -> None:
            from docker.utils.socket import frames_iter

            sock = api.exec_start(ex["Id"], socket=True)
            try:
                for _stream, chunk in frames_iter(sock, tty=False):  # type: ignore[no-untyped-call]
                    if buf.tell() < MAX_CAPTURE:
                        buf.write(chunk[: MAX_CAPTURE - buf.tell()])
            except OSError:  # the container went away: the output ends here
                pass
            finally:  # close the real socket too, not only its file wrapper
                getattr(sock, "_sock", sock).close()
                sock.close()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(limit + EXEC_GRACE_SEC)
        elapsed = time.monotonic() - start
        if reader.is_alive():  # the engine never closed the stream: treat as killed
            code: int | None = 124
        else:
            code = api.exec_inspect(ex["Id"]).get("ExitCode")
        timed_out = code in (124, 137) and elapsed >= limit * 0.99
        return CommandResult(
            exit_code=124 if timed_out else (code if code is not None else -1),
            output=buf.getvalue().decode("utf-8", errors="replace"),
            timed_out=timed_out,
            duration_sec=round(elapsed, 4),
        )


class DockerRunner(TrialRunner):
    """Runs a trial in containers of the task's image (see the module docstring)."""

    name = "docker"
    takes_image = True

    def preflight(self) -> None:
        why = docker_available()
        if why is not None:
            raise RunnerError(why, hint=DOCKER_HINT)

    def __init__(self) -> None:
        self._containers: list[Container] = []
        self._images: dict[str, str] = {}
        self._workdirs: dict[str, str] = {}
        self._owned = WORKSPACE_MOUNT  # the workspace's path in the trial's containers
        self._key = ""

    def run_trial(self, spec: TrialSpec, trial_dir: Path, key: str) -> RunRecord:
        self._key = key
        try:
            return super().run_trial(spec, trial_dir, key)
        finally:
            self._release_all()

    def capabilities(self, spec: TrialSpec, req: EnvRequirements) -> RunnerCapabilities:
        facts = engine_facts()
        if facts is None:  # no engine: the trial fails on resolve_image with the reason
            return docker_capabilities(None)
        # an --image the user named and the engine lacks stays an error (resolve_image says
        # so); the images the task names are its environment
        images = [] if spec.image else [req.docker_image] if req.docker_image else req.base_images
        return docker_capabilities(
            facts[0], networks=list(facts[1]), missing_images=missing_images(images)
        )

    def environment_image(self, spec: TrialSpec) -> str:
        if spec.task.id not in self._images:
            self._images[spec.task.id] = resolve_image(spec)
        return self._images[spec.task.id]

    def workdir(self, spec: TrialSpec) -> str:
        if spec.task.id not in self._workdirs:
            declared = spec.task.config.environment.workdir
            self._workdirs[spec.task.id] = image_workdir(self.environment_image(spec), declared)
        return self._workdirs[spec.task.id]

    def prepare_workspace(self, spec: TrialSpec, workspace: Path) -> None:
        tar = export_workdir(self.environment_image(spec), spec.state_dir, self.workdir(spec))
        workspace.mkdir(parents=True)
        with tarfile.open(tar) as tf:
            tf.extractall(workspace, filter=_strip_first)  # noqa: S202 - data filter applied

    def open_shell(
        self, spec: TrialSpec, mounts: list[Mount], *, phase: Literal["agent", "verifier"]
    ) -> tuple[Shell, list[str]]:
        if phase == "verifier":
            self._release_all()  # the agent's processes end before the verdict
        container = self._start(spec, mounts)
        return DockerShell(container.id or "", workdir=self.workdir(spec)), []

    def _verify(
        self, spec: TrialSpec, trial_dir: Path, ws: Path, result: AgentResult
    ) -> Evaluation:
        try:
            return super()._verify(spec, trial_dir, ws, result)
        finally:
            self._release_all()  # before the workspace diff reads /app on the host

    def _start(self, spec: TrialSpec, mounts: list[Mount]) -> Container:
        from docker.types import DeviceRequest
        from docker.types import Mount as DockerMount

        env = spec.task.config.environment
        image = self.environment_image(spec)
        gpus = [DeviceRequest(count=env.gpus, capabilities=[["gpu"]])] if env.gpus else None
        try:
            c = client().containers.create(
                image,
                entrypoint=["sleep", "infinity"],
                command=[],
                working_dir=self.workdir(spec),
                device_requests=gpus,
                network_mode="bridge" if env.allow_internet else "none",
                nano_cpus=int(env.cpus * 1e9),
                mem_limit=f"{env.memory_mb}m",
                pids_limit=4096,
                environment=_container_env(),
                labels={LABEL: self._key},
                mounts=[
                    DockerMount(
                        m.target, str(m.host.resolve()), type="bind", read_only=not m.writable
                    )
                    for m in mounts
                ],
            )
            self._containers.append(c)
            self._owned = self.workdir(spec)
            c.start()
        except _docker_errors().APIError as exc:
            raise RunnerError(f"starting a container of {image} failed: {exc}") from exc
        return c

    def _release_all(self) -> None:
        """Give files back to this user, then remove every container of the trial."""
        uid, gid = os.getuid(), os.getgid()
        while self._containers:
            c = self._containers.pop()
            with contextlib.suppress(Exception):
                if uid != 0:
                    c.exec_run(["chown", "-R", f"{uid}:{gid}", self._owned, "/logs"])
            with contextlib.suppress(_docker_errors().NotFound):
                c.remove(force=True)


@functools.cache
def _facts() -> tuple[dict[str, Any], tuple[str, ...]]:
    c = client()
    return dict(c.info()), tuple(sorted(str(n.name) for n in c.networks.list()))


def engine_facts() -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """``docker info`` and the network names of the engine, read once per process (None when
    none answers: the check then uses this machine's figures, and the trial fails later with
    the engine's own error; a failure is not cached)."""
    try:
        return _facts()
    except (RunnerError, _docker_errors().DockerException):
        return None


def engine_info() -> dict[str, Any] | None:
    """``docker info`` of the engine (see :func:`engine_facts`)."""
    facts = engine_facts()
    return facts[0] if facts is not None else None


def missing_images(names: list[str]) -> list[str]:
    """Of ``names`` (FROM bases or a prebuilt image), those the engine does not have (it
    pulls nothing). ``scratch`` and names with build ARGs (``$``) are left to the build."""
    errors = _docker_errors()
    out = []
    for name in names:
        if not name or name == "scratch" or "$" in name:
            continue
        try:
            client().images.get(name)
        except errors.ImageNotFound:
            out.append(name)
        except errors.DockerException:
            continue  # no answer: the build says why
    return out


def remove_stale(label_value: str | None = None) -> int:
    """Remove containers skillci left behind (e.g. by a killed run); returns how many."""
    filters: dict[str, str | list[str] | bool] = {
        "label": f"{LABEL}={label_value}" if label_value else LABEL
    }
    n = 0
    for c in client().containers.list(all=True, filters=filters):
        c.remove(force=True)
        n += 1
    return n


def docker_available() -> str | None:
    """None when an engine answers, else why not (for up-front checks)."""
    try:
        check_engine()
    except RunnerError as exc:
        return exc.message
    return None


__all__ = [
    "DOCKER_HINT",
    "DockerRunner",
    "DockerShell",
    "check_engine",
    "client",
    "docker_available",
    "engine_facts",
    "engine_info",
    "export_workdir",
    "image_workdir",
    "missing_images",
    "remove_stale",
    "resolve_image",
]
