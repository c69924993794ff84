"""Can a runner honour a task's environment? (requirements, capabilities, the decision)

A task asks for an environment in two places: ``environment/Dockerfile`` (base image,
``RUN`` steps, ``WORKDIR``, ``ENV``, ``COPY``) and ``task.toml`` ``[environment]`` (prebuilt
``docker_image``, ``workdir``, ``allow_internet``, ``gpus``, ``cpus``, ``memory_mb``,
``mcp_servers``). :func:`requirements` reads both into :class:`EnvRequirements`; each runner
describes what it can provide as :class:`RunnerCapabilities` (``skillci.runners.capabilities``
fills them in, probing only the tools and Python packages the requirements name); and
:func:`check_environment` decides, as a pure function of the two, whether the trial can run
as the task means it. When it cannot, the trial is recorded as ``environment_unsupported``
(never ``failed``): docs/design/185-environment-check.md.

A runner that does not build images (the local runner) honours a Dockerfile only when every
step is one it reproduces itself: ``COPY`` of task files to the same path under ``/app``
(the workspace copy), ``WORKDIR /app``, the git baseline (``git init/add/commit``),
``apt-get``/``pip install`` of tools and packages it already has, and housekeeping
(``apt-get update``, removing apt lists or the Dockerfile). Anything else is a reason.
"""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from skillci.tasks.models import Task

#: Where every skillci runner puts the workspace.
WORKSPACE = "/app"
#: The hint an environment_unsupported trial carries.
DOCKER_HINT = "run it with --sandbox docker (the Docker runner builds the task's image)"
#: The hint when even an image-building runner cannot honour the task.
HARNESS_HINT = (
    "run it with `eval raw-task --runner benchflow` or `--runner harbor` and a Docker "
    "environment (they honour any WORKDIR and compose files)"
)
#: Working directories a runner that bind-mounts the workspace there cannot give: the root and
#: the system's own directories (the mount would hide the image's files) and skillci's mounts.
UNMOUNTABLE = frozenset(
    {"/", "/bin", "/boot", "/etc", "/lib", "/lib64", "/sbin", "/usr", "/var", "/opt"}
)
_UNMOUNTABLE_TREES = ("/proc", "/sys", "/dev", "/tests", "/logs", "/skills", "/solution")
#: ENV names whose value does not change what a task's commands can do.
_HARMLESS_ENV = frozenset(
    {"DEBIAN_FRONTEND", "TZ", "LANG", "LC_ALL", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"}
)
_HARMLESS_ENV_PREFIXES = ("PIP_",)
#: Instructions that never change the files or tools a trial sees.
_IGNORED = frozenset(
    {"CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "ARG", "SHELL", "HEALTHCHECK", "VOLUME", "STOPSIGNAL"}
)
#: apt packages that are present when the executable named here is.
APT_TOOLS = {
    "python3": "python3",
    "python-is-python3": "python",
    "python3-pip": "pip",
    "python3-venv": "python3",
    "git": "git",
    "curl": "curl",
    "curl-minimal": "curl",
    "wget": "wget",
    "jq": "jq",
    "make": "make",
    "tree": "tree",
    "unzip": "unzip",
    "zip": "zip",
    "tar": "tar",
    "xz": "xz",
    "xz-utils": "xz",
    "ffmpeg": "ffmpeg",
    "procps": "ps",
    "sudo": "sudo",
    "build-essential": "gcc",
    "gcc": "gcc",
    "g++": "g++",
    "bash": "bash",
}
#: Housekeeping commands the local runner's workspace copy makes unnecessary.
_NOOP = (
    re.compile(r"^(apt-get|apt|dnf|yum) (update|clean( all)?)( -\w+)*$"),
    re.compile(r"^rm -(r?f|fr?) (/var/lib/apt/lists/\*|/var/cache/(dnf|apt)\S*)$"),
    re.compile(r"^rm -f /app/Dockerfile$"),
    re.compile(r"^git (-c \S+ )*(init|add|commit)( .*)?$"),
    re.compile(r"^set -[a-z]+$"),
)
_PIP = re.compile(r"^(pip3?|python3? -m pip) install (.+)$")
_APT = re.compile(r"^(apt-get|apt|dnf|yum) (-y )?install (.+)$")
_PIP_FLAGS = frozenset(
    {"--no-cache-dir", "--break-system-packages", "-q", "--quiet", "-U", "--upgrade", "--user"}
)
_APT_FLAGS = frozenset({"-y", "--yes", "-q", "-qq", "--no-install-recommends"})


class PythonRequirement(BaseModel):
    """``pip install NAME[==VERSION]`` in a Dockerfile."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Distribution name as written.")
    version: str | None = Field(default=None, description="Pinned version (==), if any.")


class EnvRequirements(BaseModel):
    """What a task's Dockerfile and ``[environment]`` ask of the environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str = Field(description="Task id.")
    dockerfile: bool = Field(description="The task has environment/Dockerfile.")
    base_images: list[str] = Field(
        default_factory=list, description="FROM images, in order (stage aliases left out)."
    )
    docker_image: str | None = Field(default=None, description="[environment] docker_image.")
    compose: bool = Field(default=False, description="environment/ has a docker-compose file.")
    workdir: str = Field(default=WORKSPACE, description="Working directory the task expects.")
    tools: list[str] = Field(default_factory=list, description="Executables apt steps install.")
    python: list[PythonRequirement] = Field(
        default_factory=list, description="Python packages pip steps install."
    )
    steps: list[str] = Field(
        default_factory=list,
        description="Dockerfile steps only an image build reproduces (one line each).",
    )
    notes: list[str] = Field(
        default_factory=list, description="Steps a runner without a build skips harmlessly."
    )
    allow_internet: bool = Field(default=False, description="[environment] allow_internet.")
    gpus: int = Field(default=0, description="[environment] gpus.")
    tpu: bool = Field(default=False, description="[environment] tpu is set.")
    cpus: float = Field(default=1, description="[environment] cpus.")
    memory_mb: int = Field(default=2048, description="[environment] memory_mb.")
    mcp_servers: int = Field(default=0, description="[environment] mcp_servers.")
    names_workdir: list[str] = Field(
        default_factory=list,
        description="Task files (instruction, tests, solution) that name the working "
        "directory by its absolute path: they need a runner that really gives that path.",
    )


class RunnerCapabilities(BaseModel):
    """What one runner can provide on this machine (filled in by skillci.runners)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runner: str = Field(description="local, docker, benchflow or harbor.")
    builds_images: bool = Field(description="Builds the Dockerfile or runs a prebuilt image.")
    compose: bool = Field(default=False, description="Runs multi-container (compose) tasks.")
    workdirs: list[str] | None = Field(
        default=None, description="Working directories it can give; None: any."
    )
    mounts_workdir: bool = Field(
        default=False,
        description=(
            "The workspace is bind-mounted at the task's working directory, so that cannot be "
            "/ or a system directory."
        ),
    )
    missing_images: list[str] = Field(
        default_factory=list,
        description="Of the images the task names (FROM, docker_image), those the engine lacks.",
    )
    resources_of: str = Field(
        default="this machine", description="Whose cpus and memory these are (for the reasons)."
    )
    network_closed: bool = Field(description="Can run a trial without network.")
    network_open: bool = Field(description="Can give a trial the network.")
    gpus: int = Field(default=0, description="GPUs it can attach.")
    tpu: bool = Field(default=False, description="Can attach a TPU slice.")
    cpus: float | None = Field(default=None, description="CPU cores available; None: unknown.")
    memory_mb: int | None = Field(default=None, description="Memory available; None: unknown.")
    mcp_servers: bool = Field(default=False, description="Offers MCP servers to the agent.")
    workdir_is_path: bool = Field(
        default=True,
        description="Commands see the workspace at the working directory's own path "
        "(False: a plain host subprocess, whose workspace is a host temp dir).",
    )
    tools: list[str] = Field(
        default_factory=list, description="Of the executables asked for, those present."
    )
    python: dict[str, str] = Field(
        default_factory=dict, description="Of the Python packages asked for: name -> version."
    )


class EnvCheck(BaseModel):
    """The decision: can ``runner`` honour ``task_id``'s environment?"""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str = Field(description="Task id.")
    runner: str = Field(description="Runner the decision is for.")
    supported: bool = Field(description="False: record the trial environment_unsupported.")
    reasons: list[str] = Field(default_factory=list, description="Why not (one line each).")
    notes: list[str] = Field(
        default_factory=list, description="Differences that do not stop the trial."
    )
    hint: str | None = Field(default=None, description="What to do instead.")


# ---------------------------------------------------------------------------- Dockerfile


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or (line.startswith("#") and not buf):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1].strip() + " "
            continue
        full = (buf + line).strip()
        buf = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    if buf.strip():
        word, _, rest = buf.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _norm(path: str, workdir: str) -> str:
    p = PurePosixPath(path) if path.startswith("/") else PurePosixPath(workdir) / path
    parts: list[str] = []
    for part in p.parts[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def _copy(args: str, workdir: str) -> tuple[str | None, str | None]:
    """(reason, note) for one COPY/ADD."""
    words = [w for w in args.split() if not w.startswith("--chown") and not w.startswith("--chmod")]
    if any(w.startswith("--") for w in words):
        return f"COPY {args} (from another image or stage)", None
    if len(words) < 2:
        return None, None
    *srcs, dest = words
    if any("://" in s for s in srcs):
        return f"ADD {args} (downloads at build time)", None
    if all(s.rstrip("/").split("/")[0] == "skills" for s in srcs):
        return None, f"COPY {args}: skillci installs the skills itself (/skills/<name>)"
    as_dir = dest.endswith("/") or len(srcs) > 1
    for s in srcs:
        src = s.rstrip("/") or "."
        if src == ".":
            target = _norm(dest, workdir)
            want = WORKSPACE
        else:
            name = PurePosixPath(src).name
            target = _norm(dest + "/" + name if as_dir else dest, workdir)
            want = _norm(src, WORKSPACE)
            if as_dir and target != want:  # `COPY data/ /app/data/` copies the dir's contents
                target = _norm(dest, workdir)
        if target != want:
            return (
                f"COPY {args} (puts {src} at {target}; the workspace copy has it at {want})",
                None,
            )
    return None, None


def _run_segments(cmd: str) -> list[str]:
    # `;` stays: it also separates if/then/fi. str.split, not re.split(r"\s*&&\s*"): that
    # pattern read the rest of a run of blanks from each of them (quadratic on a task's
    # Dockerfile); the blanks around `&&` are stripped from every part either way
    return [" ".join(p.split()) for p in cmd.split("&&") if p.strip()]


def _without_extras(name: str) -> str:
    r"""``re.sub(r"\[.*\]", "", name)`` for a name without a newline, in linear time (the
    pattern read to the end of the word from each ``[`` after the last ``]``): from the first
    ``[`` to the last ``]`` after it goes."""
    first, last = name.find("["), name.rfind("]")
    return name[:first] + name[last + 1 :] if 0 <= first < last else name


def _pip_specs(args: str) -> list[PythonRequirement] | None:
    try:
        words = shlex.split(args)
    except ValueError:
        return None
    out = []
    for w in words:
        if w in _PIP_FLAGS:
            continue
        if w.startswith(("-", ".")) or "/" in w:
            return None  # -r FILE, --index-url, a local path: a build step
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+?)(?:==([A-Za-z0-9_.+\-]+))?", w)
        if m is None:
            return None  # a range or marker: the build resolves it
        out.append(PythonRequirement(name=_without_extras(m.group(1)), version=m.group(2)))
    return out


def _apt_tools(args: str) -> list[str] | None:
    out = []
    for w in args.split():
        if w in _APT_FLAGS:
            continue
        if w.startswith(("-", "$")) or "=" in w:
            return None
        tool = APT_TOOLS.get(w)
        if tool is None:
            return None
        out.append(tool)
    return out


def dockerfile_requirements(text: str) -> dict[str, object]:
    """The requirements one Dockerfile's text states (fields of :class:`EnvRequirements`)."""
    workdir = "/"
    bases: list[str] = []
    aliases: set[str] = set()
    stages = 0
    tools: list[str] = []
    python: list[PythonRequirement] = []
    steps: list[str] = []
    notes: list[str] = []
    for word, args in _instructions(text):
        if word == "FROM":
            words = [w for w in args.split() if not w.startswith("--")]
            stages += 1
            if words and words[0] not in aliases:  # a stage alias is no image
                bases.append(words[0])
            if len(words) >= 3 and words[1].upper() == "AS":
                aliases.add(words[2])
            if stages > 1:
                steps.append(f"FROM {args} (a multi-stage build)")
        elif word == "WORKDIR":
            workdir = _norm(args, workdir)
        elif word in ("COPY", "ADD"):
            reason, note = _copy(args, workdir)
            steps += [reason] if reason else []
            notes += [note] if note else []
        elif word == "ENV":
            names = re.findall(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)[= ]", args)
            odd = [
                n
                for n in names
                if n not in _HARMLESS_ENV and not n.startswith(_HARMLESS_ENV_PREFIXES)
            ]
            if odd:
                steps.append(f"ENV {', '.join(odd)} (not set by a runner without the image)")
        elif word == "USER":
            if args.split(":")[0] not in ("root", "0"):
                steps.append(f"USER {args}")
        elif word == "RUN":
            for seg in _run_segments(args):
                if any(p.match(seg) for p in _NOOP):
                    continue
                if (m := _PIP.match(seg)) and (specs := _pip_specs(m.group(2))) is not None:
                    python += specs
                elif (m := _APT.match(seg)) and (apt := _apt_tools(m.group(3))) is not None:
                    tools += apt
                else:
                    steps.append(f"RUN {seg[:120]}")
        elif word not in _IGNORED:
            steps.append(f"{word} {args[:80]}")
    return {
        "base_images": bases,
        "workdir": workdir,
        "tools": sorted(set(tools)),
        "python": python,
        "steps": steps,
        "notes": notes,
    }


def requirements(task: Task) -> EnvRequirements:
    """What ``task`` asks of the environment (reads environment/Dockerfile)."""
    env = task.config.environment
    fields: dict[str, object] = {}
    if task.dockerfile is not None and task.dockerfile.is_file():
        fields = dockerfile_requirements(task.dockerfile.read_text(errors="replace"))
    if env.workdir:
        fields["workdir"] = env.workdir
    workdir = str(fields.get("workdir", WORKSPACE))
    fields["names_workdir"] = list(_naming(task.root, task.content_hash, workdir))
    compose = task.environment_dir is not None and any(
        (task.environment_dir / n).is_file()
        for n in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
    )
    return EnvRequirements(
        task_id=task.id,
        dockerfile=task.dockerfile is not None,
        docker_image=env.docker_image,
        compose=compose,
        allow_internet=env.allow_internet,
        gpus=env.gpus,
        tpu=env.tpu is not None,
        cpus=env.cpus,
        memory_mb=env.memory_mb,
        mcp_servers=len(env.mcp_servers),
        **fields,
    )


_COMMENT_LINE = re.compile(rb"(?m)^[ \t]*#.*$")


@functools.lru_cache(maxsize=256)
def _naming(root: Path, content_hash: str, path: str) -> tuple[str, ...]:
    """Files of the task's instruction, tests and solution that name ``path`` (an absolute
    directory) outside comment lines — cached per task content: a command asks once per
    trial."""
    del content_hash  # the cache key: a changed task is scanned again
    pattern = re.compile(rb"(?<![\w.-])" + re.escape(path.encode()) + rb"(?![\w.-])")
    found: list[str] = []
    candidates = [root / "instruction.md", root / "task.md"]
    for sub in ("tests", "solution"):
        if (root / sub).is_dir():
            candidates += sorted(p for p in (root / sub).rglob("*") if p.is_file())
    for p in candidates:
        try:
            if p.is_symlink() or not p.is_file() or p.stat().st_size > 1 << 20:
                continue
            code = _COMMENT_LINE.sub(b"", p.read_bytes())  # "# runs in /app" is no use of it
            if pattern.search(code):
                found.append(p.relative_to(root).as_posix())
        except OSError:
            continue
    return tuple(found)


# ---------------------------------------------------------------------------- decision


def mountable(workdir: str) -> bool:
    """Whether a workspace can be bind-mounted at ``workdir`` (not / nor a system dir)."""
    norm = _norm(workdir, "/")
    if norm in UNMOUNTABLE:
        return False
    return not any(norm == t or norm.startswith(t + "/") for t in _UNMOUNTABLE_TREES)


def _version_ok(want: str | None, have: str) -> bool:
    return want is None or want == have


def check_environment(req: EnvRequirements, caps: RunnerCapabilities) -> EnvCheck:
    """Whether ``caps``'s runner can honour ``req`` (pure)."""
    reasons: list[str] = []
    notes: list[str] = []
    if not caps.builds_images:
        if req.docker_image:
            reasons.append(f"the task runs in the prebuilt image {req.docker_image}")
        reasons += [f"Dockerfile step not reproduced: {s}" for s in req.steps]
        missing = [t for t in req.tools if t not in caps.tools]
        if missing:
            reasons.append(f"tools the image installs are missing: {', '.join(missing)}")
        for p in req.python:
            have = caps.python.get(p.name.lower().replace("_", "-"))
            if have is None:
                reasons.append(f"Python package {p.name} (the image installs it) is missing")
            elif not _version_ok(p.version, have):
                notes.append(f"Python package {p.name} is {have}, the image pins {p.version}")
        if req.dockerfile and req.base_images and not req.steps:
            notes.append(
                f"base image {req.base_images[0]} not used: commands see this machine's /usr"
            )
        notes += req.notes
    reasons += [
        f"image {name} is not in the Docker engine (skillci pulls nothing: docker pull or load "
        "it first)"
        for name in caps.missing_images
    ]
    if req.compose and not caps.compose:
        reasons.append("the environment is a docker-compose file (several services)")
    if caps.workdirs is not None and req.workdir not in caps.workdirs:
        reasons.append(
            f"working directory {req.workdir} (the {caps.runner} runner gives "
            f"{', '.join(caps.workdirs)})"
        )
    elif not caps.workdir_is_path and req.names_workdir:
        reasons.append(
            f"the task names its working directory {req.workdir} "
            f"({', '.join(req.names_workdir[:3])}); without a sandbox the workspace is a host "
            f"directory, not {req.workdir}"
        )
    elif caps.mounts_workdir and not mountable(req.workdir):
        reasons.append(
            f"working directory {req.workdir} (the {caps.runner} runner bind-mounts the "
            "workspace there: not / nor a system directory)"
        )
    if req.allow_internet and not caps.network_open:
        reasons.append("allow_internet = true, and this runner has no network")
    if not req.allow_internet and not caps.network_closed:
        notes.append("allow_internet = false, but this runner cannot close the network")
    if req.gpus > caps.gpus:
        reasons.append(f"gpus = {req.gpus} (the {caps.runner} runner has {caps.gpus})")
    if req.tpu and not caps.tpu:
        reasons.append("a TPU slice is requested")
    if caps.cpus is not None and req.cpus > caps.cpus:
        reasons.append(f"cpus = {req.cpus:g} ({caps.resources_of} has {caps.cpus:g})")
    if caps.memory_mb is not None and req.memory_mb > caps.memory_mb:
        reasons.append(f"memory_mb = {req.memory_mb} ({caps.resources_of} has {caps.memory_mb})")
    if req.mcp_servers and not caps.mcp_servers:
        reasons.append(f"{req.mcp_servers} MCP server(s) the {caps.runner} runner does not offer")
    hint = None
    if reasons:
        hint = DOCKER_HINT if not caps.builds_images else HARNESS_HINT
        if not caps.workdir_is_path:
            hint = "install bubblewrap (its sandbox gives the workspace at /app), or " + hint
    return EnvCheck(
        task_id=req.task_id,
        runner=caps.runner,
        supported=not reasons,
        reasons=reasons,
        notes=notes,
        hint=hint,
    )


def summary(check: EnvCheck, *, limit: int = 3) -> str:
    """One line: ``environment unsupported by the local runner: <reasons> — <hint>``."""
    shown = "; ".join(check.reasons[:limit])
    more = len(check.reasons) - limit
    if more > 0:
        shown += f" (+{more} more)"
    hint = f" — {check.hint}" if check.hint else ""
    return f"environment unsupported by the {check.runner} runner: {shown}{hint}"


__all__ = [
    "APT_TOOLS",
    "DOCKER_HINT",
    "HARNESS_HINT",
    "UNMOUNTABLE",
    "WORKSPACE",
    "EnvCheck",
    "EnvRequirements",
    "PythonRequirement",
    "RunnerCapabilities",
    "check_environment",
    "dockerfile_requirements",
    "mountable",
    "requirements",
    "summary",
]
