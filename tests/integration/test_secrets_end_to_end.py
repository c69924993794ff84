"""Secrets pushed through a real trial (sim student, local runner, verifier) into the store:
none of the corpus' secrets is left in the trial dir, the record or the store (issue 16 item 2).

The corpus is tests/fixtures/secrets/secrets.jsonl (one string per gitleaks rule), written in
gitleaks' sample context; it reaches the trial through the task instruction (the agent's
prompt, recorded as events) and the verifier's output (logs and record).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from skillci.runners.base import AgentSpec, TrialSpec
from skillci.runners.local import LocalRunner
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore
from tests.integration.runners.helpers import model_agent

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "secrets" / "secrets.jsonl"


def lines() -> list[tuple[str, str]]:
    """(secret, line) per format: gitleaks' GenerateSampleSecret context, or its literal."""
    out = []
    for raw in CORPUS.read_text(encoding="utf-8").splitlines():
        item = json.loads(raw)
        s, i = item["secret"], item["ident"]
        out.append((s, f'{i}_api_token = "{s}"' if i else s))
    return out


def all_text(root: Path) -> str:
    chunks = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            chunks.append(p.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(chunks)


def test_no_corpus_secret_survives_a_trial_and_the_store(tmp_path: Path) -> None:
    corpus = lines()
    assert len(corpus) >= 60
    text = "\n".join(line for _, line in corpus)
    root = tmp_path / "tasks" / "leaky"
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "config.env").write_text(text + "\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(
        f"printf '%s\\n' {shlex.quote(text)}\n"
        'echo 1 > "${LOGS_DIR:-/logs}/verifier/reward.txt"\n'
    )
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text("true\n")
    (root / "instruction.md").write_text("Fix the config. It contains:\n\n" + text + "\n")
    (root / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 60\n[agent]\ntimeout_sec = 60\n'
    )
    task = load_task(root, purpose=Purpose.final_report)
    store = TraceStore(tmp_path / ".skillci", redactor=Redactor(env={}))
    # the model agent reads the instruction (the sim student, outside its repair domain,
    # ends the trial as an error before the verifier: design 302); the noop agent's trial
    # runs the verifier, which prints the config
    recs = []
    for name, agent in (
        ("trial", model_agent()),
        ("trial-noop", AgentSpec(kind="noop", role="student")),
    ):
        spec = TrialSpec(task=task, agent=agent, state_dir=tmp_path / "state")
        recs.append(LocalRunner().run_trial(spec, tmp_path / name, name[-1] * 64))
        store.put(recs[-1])
    rec, noop = recs

    # the secrets did reach the trials: the instruction, and the verifier's output
    assert "[REDACTED:" in rec.model_dump_json()
    assert "[REDACTED:" in (noop.evaluation.verifier_output or "")
    trial = tmp_path / "trial"
    dumped = {
        "trial dir": all_text(trial) + all_text(tmp_path / "trial-noop"),
        "store": all_text(tmp_path / ".skillci"),
    }
    leaks = [
        (where, secret[:12])
        for where, blob in dumped.items()
        for secret, _ in corpus
        if secret in blob
    ]
    assert leaks == []


def test_no_corpus_secret_survives_a_harbor_import_into_the_store(tmp_path: Path) -> None:
    from skillci.trace.importers.harbor import import_jobs
    from tests.integration.importers.test_harbor_import import ATIF, JOB, trial, trial_result

    corpus = lines()
    text = "\n".join(line for _, line in corpus)
    atif = json.loads(json.dumps(ATIF))
    step = atif["steps"][2]
    step["observation"]["results"][0]["content"] = text
    step["tool_calls"][0]["arguments"] = {"keystrokes": f"cat .env\n{text}", corpus[0][1]: "k"}
    atif["steps"][3]["message"] = "Done. The keys were:\n" + text
    name = "py-window-end__AbC12xY"
    trial(tmp_path / "jobs", "py-window-end", trial_result("py-window-end", name), atif)
    records = import_jobs(tmp_path / "jobs" / JOB)
    assert len(records) == 1
    store = TraceStore(tmp_path / ".skillci", redactor=Redactor(env={}))
    for rec in records:
        store.put(rec)
    blob = all_text(tmp_path / ".skillci")
    assert "[REDACTED:" in blob
    assert [s[:12] for s, _ in corpus if s in blob] == []


def test_no_corpus_secret_reaches_the_html_report(tmp_path: Path) -> None:
    import subprocess

    from skillci.flows.context import RepoContext
    from skillci.flows.gate import GATE_BLOB, load_report
    from skillci.flows.html_report import write_html
    from tests.unit.gate.report_fixture import build_report

    corpus = lines()
    text = "\n".join(line for _, line in corpus)
    built = build_report(n_validation=2, n_regression=1)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    store = TraceStore(repo / ".skillci", redactor=Redactor(env={}))
    for rec in built.records:
        store.put(rec.model_copy(update={"final_output": "my config:\n" + text}))
    store.put_blob(GATE_BLOB, built.report, key=built.report.gate_id, replace=True)
    ctx = RepoContext.open(repo, state_dir=repo / ".skillci")
    page = write_html(ctx, load_report(ctx, built.report.gate_id), tmp_path / "out").read_text()
    assert "REDACTED:" in page
    assert [s[:12] for s, _ in corpus if s in page] == []


def test_no_corpus_secret_survives_a_raw_task_attempt_of_an_imported_run(tmp_path: Path) -> None:
    """`eval raw-task --runner harbor|benchflow` writes what the importer read (the harness's
    own files, unredacted) as the attempt's result and trajectory: both are redacted, and so
    is the runner's own output under run/."""
    import shutil
    import time

    from skillci.flows.rawtask import RawTaskRequest, write_attempt
    from skillci.trace.importers.harbor import import_jobs
    from skillci.trace.redact import redact_files
    from tests.integration.importers.test_harbor_import import ATIF, JOB, trial, trial_result

    corpus = lines()
    text = "\n".join(line for _, line in corpus)
    atif = json.loads(json.dumps(ATIF))
    atif["steps"][2]["observation"]["results"][0]["content"] = text
    atif["steps"][3]["message"] = "Done. The keys were:\n" + text
    trial(tmp_path / "jobs", "py-window-end", trial_result("py-window-end", "t__x1"), atif)
    (rec,) = import_jobs(tmp_path / "jobs" / JOB)
    assert corpus[0][0] in rec.model_dump_json()  # the importer hands over raw text
    attempt = tmp_path / "out" / "test-001"
    shutil.copytree(tmp_path / "jobs", attempt / "run" / "jobs")
    (attempt / "run" / "harbor.log").write_text(text + "\n")
    req = RawTaskRequest(
        harness="claude-code",
        model="anthropic/claude",
        task=tmp_path / "jobs",
        skill_source=None,
        output=tmp_path / "out",
        runner="harbor",
    )
    write_attempt(attempt, 1, "k" * 64, req, rec, time.monotonic())
    redact_files(attempt / "run")
    files = {p: p.read_text(errors="replace") for p in attempt.rglob("*") if p.is_file()}
    assert "[REDACTED:" in files[attempt / "result.json"]
    leaks = [
        (str(p.relative_to(attempt)), s[:12])
        for p, blob in files.items()
        for s, _ in corpus
        if s in blob
    ]
    assert leaks == []
