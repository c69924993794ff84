"""Run the jobs of our GitHub Actions workflow files, offline, as GitHub would.

Only what our workflows use: job/step ``if``, ``env``, ``outputs``, ``needs``, matrices
from ``fromJSON``, ``continue-on-error``, ``${{ }}`` expressions (property access,
literals, ``!``, ``==``, ``!=``, ``&&``, ``||``, ``fromJSON``, ``contains``, ``success``,
``always``, ``cancelled``, ``failure``), and the four actions they pin:

- ``actions/checkout``: a clone of the bare repository behind the fake GitHub API,
  detached at the PR head for ``pull_request`` events (GitHub checks out the merge ref;
  the gate reads base and head by sha either way) or at ``with.ref``, else the default
  branch checked out;
- ``actions/setup-python``: nothing (skillci's venv is on PATH), and ``pip install``
  steps are skipped for the same reason;
- ``actions/upload-artifact`` / ``download-artifact``: directories under one artifact
  store per workflow run (``name`` or ``pattern``; ``run-id`` picks another run's store).

Reusable workflows: a job ``uses: ./.github/workflows/X.yml`` (resolved next to the calling
file) or ``uses: OWNER/REPO/.github/workflows/X.yml@SHA`` (resolved through
:attr:`Machine.remotes`) is replaced by the called workflow's jobs, under their own names,
each seeing ``inputs`` (the caller's ``with`` over the declared defaults), ``secrets``
(what the caller passes) and the called file's ``env``; the caller's ``if`` gates them all.
Steps that install skillci (``pip install``) or bubblewrap (``apt-get install``) are
skipped: skillci's venv is on PATH and bwrap is on the machine.

Each job runs on a fresh "machine": its own checkout and its own ``.skillci`` state, and
every ``run:`` step is executed by bash with the Actions environment (GITHUB_EVENT_PATH,
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_API_URL pointing at the fake, ...).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

VENV_BIN = Path(sys.executable).parent


# --------------------------------------------------------------------------- expressions

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!(),.\[\]])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _truthy(v: Any) -> bool:
    return v not in (None, False, 0, "", 0.0)


class Expr:
    """A tiny evaluator of GitHub Actions expressions."""

    def __init__(self, text: str, ctx: dict[str, Any], status: dict[str, bool]) -> None:
        self.toks: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise ValueError(f"cannot parse expression {text!r} at {pos}")
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0
        self.ctx = ctx
        self.status = status

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        t = self.toks[self.i]
        if value is not None and t[1] != value:
            raise ValueError(f"expected {value!r}, got {t[1]!r}")
        self.i += 1
        return t

    def value(self) -> Any:
        v = self.or_()
        if self.peek() is not None:
            raise ValueError(f"trailing tokens: {self.toks[self.i :]}")
        return v

    def or_(self) -> Any:
        v = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            rhs = self.and_()
            v = v if _truthy(v) else rhs
        return v

    def and_(self) -> Any:
        v = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            rhs = self.cmp()
            v = rhs if _truthy(v) else v
        return v

    def cmp(self) -> Any:
        v = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            rhs = self.unary()
            eq = (str(v).lower() == str(rhs).lower()) if isinstance(v, str) else v == rhs
            v = eq if op == "==" else not eq
        return v

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, tok = self.take()
        if tok == "(":
            inner = self.or_()
            self.take(")")
            return inner
        if kind == "str":
            return tok[1:-1].replace("''", "'")
        if kind == "num":
            return float(tok) if "." in tok else int(tok)
        if tok in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[tok]
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return self.call(tok, args)
        v: Any = self.ctx.get(tok)
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = self.or_()
                self.take("]")
            v = v.get(key) if isinstance(v, dict) else None
        return v

    def call(self, name: str, args: list[Any]) -> Any:
        low = name.lower()
        if low == "fromjson":
            return json.loads(args[0])
        if low == "tojson":
            return json.dumps(args[0])
        if low == "contains":
            hay, needle = args
            if isinstance(hay, list):
                return needle in hay
            return str(needle).lower() in str(hay).lower()
        if low in ("success", "always", "cancelled", "failure"):
            return self.status[low]
        raise ValueError(f"unknown function {name}")


_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def evaluate(text: Any, ctx: dict[str, Any], status: dict[str, bool] | None = None) -> Any:
    """A value with ``${{ }}`` expressions; a lone expression keeps its type."""
    st = status or {"success": True, "always": True, "cancelled": False, "failure": False}
    if not isinstance(text, str):
        return text
    m = _TEMPLATE.fullmatch(text.strip())
    if m:
        return Expr(m.group(1), ctx, st).value()

    def one(mm: re.Match[str]) -> str:
        v = Expr(mm.group(1), ctx, st).value()
        return "" if v is None else (json.dumps(v) if isinstance(v, dict | list) else str(v))

    return _TEMPLATE.sub(one, text)


def condition(text: Any, ctx: dict[str, Any], status: dict[str, bool]) -> bool:
    if text is None:
        return status["success"]
    if isinstance(text, bool):
        return text
    body = str(text).strip()
    m = _TEMPLATE.fullmatch(body)
    expr = m.group(1) if m else body
    uses_status = re.search(r"\b(success|always|cancelled|failure)\s*\(", expr) is not None
    v = _truthy(Expr(expr, ctx, status).value())
    return v if uses_status else (v and status["success"])


# --------------------------------------------------------------------------- runs


@dataclass
class StepResult:
    name: str
    outcome: str  # success, failure, skipped
    stdout: str = ""
    stderr: str = ""
    rc: int | None = None


@dataclass
class JobResult:
    job: str
    result: str  # success, failure, skipped
    outputs: dict[str, str] = field(default_factory=dict)
    steps: list[StepResult] = field(default_factory=list)
    summary: str = ""
    workdir: Path | None = None

    def step(self, needle: str) -> StepResult:
        return next(s for s in self.steps if needle in s.name)


@dataclass
class Machine:
    """What every job of a run sees: the remote, the fake's URLs, the artifact stores."""

    bare: Path
    api_url: str
    server_url: str
    repository: str
    token: str
    tmp: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    runs: int = 0
    remotes: dict[str, Path] = field(default_factory=dict)
    """``owner/repo`` of reusable workflows called by full name -> a local checkout."""


@dataclass
class Scope:
    """Where a job comes from: its file's ``env``, the ``inputs``/``secrets`` of a call, and
    the calling job's ``if`` and context (None for a job of the run's own file)."""

    env: dict[str, Any]
    inputs: dict[str, Any] | None = None
    secrets: dict[str, str] | None = None
    gate: Any = None
    caller: str | None = None
    outputs: dict[str, Any] = field(default_factory=dict)


class WorkflowRun:
    """One run of one workflow for one event."""

    def __init__(
        self,
        machine: Machine,
        workflow: Path,
        event_name: str,
        event: dict[str, Any],
        *,
        secrets: dict[str, str] | None = None,
    ) -> None:
        machine.runs += 1
        self.m = machine
        self.run_id = 1000 + machine.runs
        self.wf = yaml.safe_load(workflow.read_text())
        self.name = self.wf["name"]
        self.file = workflow
        self.scopes: dict[str, Scope] = {}
        self.calls: dict[str, Scope] = {}
        self.event_name = event_name
        self.event = event
        self.secrets = secrets or {}
        self.dir = machine.tmp / f"run-{self.run_id}-{self.name}"
        self.dir.mkdir(parents=True)
        self.event_path = self.dir / "event.json"
        self.event_path.write_text(json.dumps(event))
        self.jobs: dict[str, JobResult] = {}
        self._n = 0
        self._expand()

    # ------------------------------------------------------------------ reusable workflows

    def _resolve(self, uses: str) -> Path:
        if uses.startswith("./"):
            return self.file.parents[2] / uses[2:]
        target, _, ref = uses.partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{uses} is not pinned to a commit"
        owner, repo, path = target.split("/", 2)
        root = self.m.remotes.get(f"{owner}/{repo}")
        assert root is not None, f"no checkout of {owner}/{repo} for {uses}"
        return root / path

    def _expand(self) -> None:
        jobs: dict[str, Any] = {}
        for name, spec in self.wf["jobs"].items():
            if "uses" not in spec:
                jobs[name] = spec
                self.scopes[name] = Scope(env=self.wf.get("env") or {})
                continue
            called = yaml.safe_load(self._resolve(spec["uses"]).read_text())
            on = called.get("on") or called.get(True) or {}
            declared = (on.get("workflow_call") or {}).get("inputs") or {}
            ctx = self._ctx([], None)
            given = {k: evaluate(v, ctx) for k, v in (spec.get("with") or {}).items()}
            unknown = set(given) - set(declared)
            assert not unknown, f"{name}: inputs {sorted(unknown)} not declared by {spec['uses']}"
            inputs: dict[str, Any] = {}
            for k, d in declared.items():
                if k in given:
                    inputs[k] = given[k]
                else:
                    assert not d.get("required"), f"{name}: required input {k} not given"
                    inputs[k] = d.get("default", "" if d.get("type") == "string" else None)
            secrets = {  # an unset secret passed on is empty, as on GitHub
                k: str(evaluate(v, ctx) or "") for k, v in (spec.get("secrets") or {}).items()
            }
            scope = Scope(
                env=called.get("env") or {},
                inputs=inputs,
                secrets=secrets,
                gate=spec.get("if"),
                caller=name,
                outputs=(on.get("workflow_call") or {}).get("outputs") or {},
            )
            self.calls[name] = scope
            for inner, ispec in called["jobs"].items():
                assert inner not in jobs, f"job {inner} of {spec['uses']} clashes"
                jobs[inner] = ispec
                self.scopes[inner] = scope
        self.wf["jobs"] = jobs

    def call_outputs(self, caller: str) -> dict[str, str]:
        """The ``on.workflow_call.outputs`` of the workflow that job ``caller`` called."""
        scope = self.calls[caller]
        ctx = {
            "jobs": {
                n: {"outputs": r.outputs, "result": r.result}
                for n, r in self.jobs.items()
                if self.scopes.get(n) is scope
            }
        }
        return {k: str(evaluate(v["value"], ctx) or "") for k, v in scope.outputs.items()}

    @staticmethod
    def artifacts_of(machine: Machine, run_id: int) -> Path:
        return machine.tmp / "artifacts" / str(run_id)

    # ------------------------------------------------------------------ context

    def _github(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "event_name": self.event_name,
            "repository": self.m.repository,
            "token": self.m.token,
            "sha": self._default_sha(),
            "run_id": str(self.run_id),
            "server_url": self.m.server_url,
            "api_url": self.m.api_url,
        }

    def _default_sha(self) -> str:
        return subprocess.run(
            ["git", "rev-parse", "refs/heads/main"],
            cwd=self.m.bare,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    def _ctx(
        self, needs: list[str], matrix: dict[str, Any] | None, job: str | None = None
    ) -> dict[str, Any]:
        scope = self.scopes.get(job) if job else None
        inputs = dict(self.event.get("inputs") or {})
        if scope is not None and scope.inputs is not None:
            inputs = dict(scope.inputs)
        elif self.event_name == "workflow_dispatch":
            declared = (self.wf.get("on") or self.wf.get(True) or {}).get("workflow_dispatch") or {}
            for k, spec in (declared.get("inputs") or {}).items():
                inputs.setdefault(k, spec.get("default", ""))
        return {
            "github": self._github(),
            "inputs": inputs,
            # a called job also reads its environment's secrets (the run's, here)
            "secrets": {**self.secrets, **((scope.secrets or {}) if scope else {})},
            "vars": {},
            "matrix": matrix or {},
            "needs": {
                n: {"outputs": self.jobs[n].outputs, "result": self.jobs[n].result} for n in needs
            },
            "steps": {},
            "env": {},
        }

    # ------------------------------------------------------------------ jobs

    def matrix_of(self, job: str) -> list[dict[str, Any]]:
        spec = self.wf["jobs"][job]
        needs = _list(spec.get("needs"))
        m = (spec.get("strategy") or {}).get("matrix")
        if m is None:
            return [{}]
        ctx = self._ctx(needs, None, job)
        m = evaluate(m, ctx)
        if isinstance(m, dict):
            m = {k: evaluate(v, ctx) for k, v in m.items()}
        if "include" in m:
            return list(m["include"])
        ((key, values),) = m.items()
        return [{key: v} for v in values]

    def skipped(self, job: str) -> bool:
        """The job's `if` (and its caller's) is false: it is skipped, before GitHub expands
        its matrix."""
        spec = self.wf["jobs"][job]
        needs = _list(spec.get("needs"))
        failed_needs = any(self.jobs[n].result == "failure" for n in needs)
        # as on GitHub: a job whose need failed or was skipped is skipped, unless its `if`
        # calls a status function (always(), !cancelled(), ...)
        skipped_needs = any(self.jobs[n].result == "skipped" for n in needs)
        status = {
            "success": not failed_needs and not skipped_needs,
            "always": True,
            "cancelled": False,
            "failure": failed_needs,
        }
        scope = self.scopes[job]
        # the calling job's `if` is decided once, before any called job ran
        fresh = {"success": True, "always": True, "cancelled": False, "failure": False}
        gated = scope.gate is None or condition(scope.gate, self._ctx([], None), fresh)
        return not gated or not condition(spec.get("if"), self._ctx(needs, None, job), status)

    def run_job(self, job: str, matrix: dict[str, Any] | None = None) -> JobResult:
        spec = self.wf["jobs"][job]
        needs = _list(spec.get("needs"))
        ctx = self._ctx(needs, matrix, job)
        if self.skipped(job):
            res = JobResult(job, "skipped")
            self.jobs[job] = res
            return res
        scope = self.scopes[job]
        self._n += 1
        work = self.dir / f"{job}-{self._n}"
        work.mkdir()
        ws = work / "ws"
        env = {k: str(evaluate(v, ctx)) for k, v in scope.env.items()}
        env |= {k: str(evaluate(v, ctx)) for k, v in (spec.get("env") or {}).items()}
        ctx["env"] = env
        res = JobResult(job, "success", workdir=work)
        ok = True
        for i, step in enumerate(spec["steps"]):
            st = {"success": ok, "always": True, "cancelled": False, "failure": not ok}
            name = step.get("name") or step.get("uses") or step.get("run", "")[:40]
            if not condition(step.get("if"), ctx, st):
                res.steps.append(StepResult(name, "skipped"))
                continue
            sr = self._step(step, ctx, env, ws, work, i)
            res.steps.append(sr)
            if sr.outcome == "failure" and not step.get("continue-on-error"):
                ok = False
        res.result = "success" if ok else "failure"
        res.outputs = {
            k: str(evaluate(v, ctx) or "") for k, v in (spec.get("outputs") or {}).items()
        }
        summary = work / "summary.md"
        res.summary = summary.read_text() if summary.exists() else ""
        self.jobs[job] = res
        return res

    def run_all(self, job: str) -> list[JobResult]:
        """Every matrix entry of ``job`` (the last result is the job's). As on GitHub, a
        skipped job's matrix is never expanded, and an empty matrix fails the job."""
        if self.skipped(job):
            return [self.run_job(job)]
        entries = self.matrix_of(job)
        if not entries:
            self.jobs[job] = JobResult(job, "failure")
            return [self.jobs[job]]
        out = [self.run_job(job, m or None) for m in entries]
        if any(r.result == "failure" for r in out):
            self.jobs[job] = next(r for r in out if r.result == "failure")
        return out

    # ------------------------------------------------------------------ steps

    def _step(
        self,
        step: dict[str, Any],
        ctx: dict[str, Any],
        env: dict[str, str],
        ws: Path,
        work: Path,
        index: int,
    ) -> StepResult:
        name = step.get("name") or step.get("uses") or "run"
        with_ = {k: evaluate(v, ctx) for k, v in (step.get("with") or {}).items()}
        uses = step.get("uses")
        if uses:
            action = uses.split("@", 1)[0]
            assert re.fullmatch(r"[0-9a-f]{40}", uses.split("@", 1)[1]), f"{uses} is not pinned"
            try:
                outputs = getattr(self, "_" + action.split("/")[1].replace("-", "_"))(with_, ws)
            except (FileNotFoundError, subprocess.CalledProcessError, AssertionError) as exc:
                return StepResult(name, "failure", stderr=str(exc))
            if step.get("id"):
                ctx["steps"][step["id"]] = {"outputs": outputs or {}, "outcome": "success"}
            return StepResult(name, "success")
        script = step["run"]
        if script.startswith(("python -m pip install", "sudo apt-get install")):
            return StepResult(name, "success")  # skillci's venv is on PATH; bwrap is here
        step_env = {k: str(evaluate(v, ctx)) for k, v in (step.get("env") or {}).items()}
        out_file = work / f"output-{index}"
        out_file.touch()
        full = self._env(ws, work, out_file) | env | step_env
        proc = subprocess.run(
            ["bash", "-e", "-c", evaluate(script, ctx)],
            cwd=ws,
            env=full,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if step.get("id"):
            ctx["steps"][step["id"]] = {
                "outputs": parse_outputs(out_file.read_text()),
                "outcome": "success" if proc.returncode == 0 else "failure",
            }
        return StepResult(
            name,
            "success" if proc.returncode == 0 else "failure",
            proc.stdout,
            proc.stderr,
            proc.returncode,
        )

    def _env(self, ws: Path, work: Path, out_file: Path) -> dict[str, str]:
        keep = {
            k: v
            for k, v in os.environ.items()
            if k.startswith(("GIT_", "LITELLM_", "SKILLCI_TEST_"))
            or k in ("HOME", "LANG", "TMPDIR")
        }
        return keep | {
            "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(self.event_path),
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_STEP_SUMMARY": str(work / "summary.md"),
            "GITHUB_REPOSITORY": self.m.repository,
            "GITHUB_API_URL": self.m.api_url,
            "GITHUB_SERVER_URL": self.m.server_url,
            "GITHUB_RUN_ID": str(self.run_id),
            "GITHUB_WORKSPACE": str(ws),
            "RUNNER_TEMP": str(work),
            **self.m.extra_env,
        }

    def _checkout(self, with_: dict[str, Any], ws: Path) -> None:
        subprocess.run(
            ["git", "clone", "-q", str(self.m.bare), str(ws)], check=True, capture_output=True
        )
        pr = self.event.get("pull_request") or {}
        ref = with_.get("ref") or (pr.get("head", {}).get("sha") if pr else None)
        if ref:
            subprocess.run(
                ["git", "checkout", "-q", "--detach", ref], cwd=ws, check=True, capture_output=True
            )

    def _setup_python(self, with_: dict[str, Any], ws: Path) -> None:
        assert with_.get("python-version"), "setup-python without python-version"

    def _upload_artifact(self, with_: dict[str, Any], ws: Path) -> dict[str, str]:
        src = ws / str(with_["path"]).rstrip("/")
        store = self.artifacts_of(self.m, self.run_id)
        if not src.exists():
            assert with_.get("if-no-files-found", "warn") != "error", f"no files at {src}"
            return {}
        dst = store / str(with_["name"])
        assert not dst.exists(), f"artifact {with_['name']} uploaded twice"
        shutil.copytree(src, dst)
        n = len(list(store.iterdir()))
        url = f"{self.m.server_url}/{self.m.repository}/actions/runs/{self.run_id}/artifacts/{n}"
        return {"artifact-id": str(n), "artifact-url": url}

    def _download_artifact(self, with_: dict[str, Any], ws: Path) -> None:
        run_id = int(with_.get("run-id") or self.run_id)
        store = self.artifacts_of(self.m, run_id)
        dst = ws / str(with_.get("path") or ".")
        if with_.get("name"):
            src = store / str(with_["name"])
            if not src.is_dir():
                raise FileNotFoundError(f"artifact {with_['name']} not found in run {run_id}")
            shutil.copytree(src, dst, dirs_exist_ok=True)
            return
        names = [p.name for p in sorted(store.iterdir())] if store.is_dir() else []
        found = [n for n in names if fnmatch.fnmatch(n, str(with_.get("pattern") or "*"))]
        for n in found:
            shutil.copytree(store / n, dst / n)


def parse_outputs(text: str) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIM`` heredocs of a GITHUB_OUTPUT file."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1 : j])
            i = j + 1
            continue
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
        i += 1
    return out


def _list(v: Any) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)
