from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillci.trace.models import ToolCallEvent, ToolResultEvent
from skillci.trace.redact import Redactor
from tests.unit.trace.helpers import make_record

OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"
ANTHROPIC = "sk-ant-api03-" + "x1Y2z3W4v5U6t7S8r9Q0"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
SLACK = "xoxb-" + "1234567890-abcdefGHIJKL"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
HEX = "9f86d081884c7d659a2feaa0c55ad015"

R = Redactor(env={})


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        (OPENAI, "api_key"),
        (ANTHROPIC, "api_key"),
        (GHP, "github_token"),
        (PAT, "github_pat"),
        (SLACK, "slack_token"),
        (AWS, "aws_access_key"),
        (JWT, "jwt"),
    ],
)
def test_key_shapes(secret: str, kind: str) -> None:
    out = R.redact_text(f"use {secret} now")
    assert secret not in out
    assert out == f"use [REDACTED:{kind}] now"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.DEF-123_xyz", "Authorization: Bearer [REDACTED:bearer_token]"),
        (
            "curl -H 'Authorization: token ab12cd34ef56gh78'",
            "curl -H 'Authorization: token [REDACTED:bearer_token]'",
        ),
        (f"API_KEY={HEX}", "API_KEY=[REDACTED:secret_assignment]"),
        (f'{{"client_secret": "{HEX}"}}', '{"client_secret": "[REDACTED:secret_assignment]"}'),
        ("password=hunter2", "password=[REDACTED:password]"),
        ("db_password: hunter2", "db_password: [REDACTED:password]"),
        (
            "git clone https://bob:s3cr3t@github.com/x/y",
            "git clone https://[REDACTED:url_credentials]@github.com/x/y",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----",
            "[REDACTED:private_key]",
        ),
    ],
)
def test_contextual_secrets(text: str, expected: str) -> None:
    assert R.redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4096",
        "input_tokens: 123456789012345678",
        f"trial_cache_key={HEX}{HEX}",
        "Password: never print it",
        "the token accounting_for_everything is fine",
        "export KEY=$OPENAI_API_KEY",
        "sk-short",
        f"content hash {HEX}{HEX}",
        "Bearer tokens are described in RFC 6750",
        "key: value",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert R.redact_text(text) == text


def test_env_values_of_secret_names() -> None:
    env = {
        "MY_SERVICE_TOKEN": "plainvalue-not-a-known-shape",
        "DB_PASSWORD": "correct horse battery",
        "DEBUG_KEY": "1",  # too short to redact
        "HOME": "/root/somewhere-long",  # not a secret name
    }
    r = Redactor(env=env)
    out = r.redact_text(
        "a plainvalue-not-a-known-shape b correct horse battery c 1 /root/somewhere-long"
    )
    assert out == (
        "a [REDACTED:env:MY_SERVICE_TOKEN] b [REDACTED:env:DB_PASSWORD] c 1 /root/somewhere-long"
    )


def test_configured_secret_names() -> None:
    env = {"SKILLCI_SECRET_ENV_NAMES": "CANARY*", "CANARY_VALUE": "planted-canary-0042"}
    assert (
        Redactor(env=env).redact_text("leak planted-canary-0042")
        == "leak [REDACTED:env:CANARY_VALUE]"
    )
    assert Redactor(env={"CANARY_VALUE": "planted-canary-0042"}).redact_text(
        "planted-canary-0042"
    ) == ("planted-canary-0042")


def test_secret_field_values_whatever_their_shape() -> None:
    obj = {
        "api_key": "short1",
        "env": {"OPENAI_API_KEY": "abc"},
        "trial_cache_key": HEX,
        "input_tokens": 5,
        "nested": [{"password": "x"}],
    }
    assert R.redact_obj(obj) == {
        "api_key": "[REDACTED:field:api_key]",
        "env": {"OPENAI_API_KEY": "[REDACTED:field:OPENAI_API_KEY]"},
        "trial_cache_key": HEX,
        "input_tokens": 5,
        "nested": [{"password": "[REDACTED:field:password]"}],
    }


def test_redact_model_reaches_events_and_keeps_structure() -> None:
    rec = make_record()
    events = list(rec.events)
    events[3] = ToolCallEvent(
        step=3,
        tool="run",
        call_id="c1",
        arguments={"cmd": f"curl -H 'Authorization: Bearer {OPENAI}'"},
    )
    events[4] = ToolResultEvent(step=4, call_id="c1", output=f"token={GHP}")
    rec = make_record(events=events, final_output=f"the key is {AWS}")
    clean = R.redact_model(rec)
    dumped = clean.model_dump_json()
    for secret in (OPENAI, GHP, AWS):
        assert secret not in dumped
    assert clean.trial_cache_key == rec.trial_cache_key
    assert clean.runtime.skill == rec.runtime.skill
    assert type(clean) is type(rec)


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.text(max_size=40),
    suffix=st.text(max_size=40),
    secret=st.sampled_from([OPENAI, ANTHROPIC, GHP, PAT, SLACK, AWS, JWT]),
)
def test_known_shapes_never_survive_any_context(prefix: str, suffix: str, secret: str) -> None:
    out = R.redact_text(f"{prefix} {secret} {suffix}")
    assert secret not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "chunk",
    ["x", "a.", "key", "token ", "k=", "sk-", "https://a", "-----BEGIN RSA PRIVATE KEY-----", "_"],
)
def test_linear_time_on_adversarial_input(chunk: str) -> None:
    import time

    text = chunk * (300_000 // len(chunk))
    start = time.process_time()  # CPU time: a loaded machine must not fail it
    R.redact_text(text)
    assert time.process_time() - start < 2.0


def test_truncated_private_key_is_redacted_to_the_end() -> None:
    text = "cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA…(truncated)"
    assert R.redact_text(text) == "cat id_rsa\n[REDACTED:private_key]"


def test_a_repeated_text_is_redacted_every_time() -> None:
    """The per-redactor memo (a report repeats its strings) returns the redacted text, also
    for the second and later copies, and the same as a fresh redactor."""
    env = {"MY_API_TOKEN": "tok-value-0123456789"}
    red = Redactor(env=env)
    texts = ["key sk-ant-api03-" + "A1b2" * 20 + " here", "uses tok-value-0123456789 now", "ok"]
    first = [red.redact_text(t) for t in texts]
    again = [red.redact_text(t) for t in texts * 3]
    assert again == first * 3
    assert first == [Redactor(env=env).redact_text(t) for t in texts]
    assert "sk-ant" not in first[0] and "tok-value" not in first[1] and first[2] == "ok"
    data = {"evidence": {"t": {"base": [texts[0]] * 5}}, "note": texts[1]}
    out = red.redact_obj(data)
    assert out["evidence"]["t"]["base"] == [first[0]] * 5 and out["note"] == first[1]


def test_redact_files_keeps_every_jsonl_line_valid_json(tmp_path: Path) -> None:
    # On the escaped text "result:\nkq7W..." the raw pass reads "nkq7W..." as one high-entropy
    # token and its marker would leave "\[" in the line: invalid JSON. The string itself
    # ("kq7W..." on its own line) is not a secret, and the stream must stay readable.
    from skillci.trace.redact import redact_files

    benign = "result:\nkq7WzP2xR9vL4mN8tY3bC6"
    key = ANTHROPIC
    stream = tmp_path / "run" / "stream.jsonl"
    stream.parent.mkdir()
    stream.write_text(
        json.dumps({"type": "tool_result", "content": benign})
        + "\n"
        + json.dumps({"type": "text", "text": f"the key is {key}"})
        + "\n"
    )
    assert "\\[REDACTED" in Redactor().redact_text(stream.read_text())  # what the raw pass did
    redact_files(tmp_path / "run", Redactor())
    rows = [json.loads(line) for line in stream.read_text().splitlines()]
    assert rows[0]["content"] == benign
    assert key not in rows[1]["text"] and "[REDACTED:" in rows[1]["text"]


def test_redactors_of_the_same_rules_share_a_memo_and_no_other() -> None:
    """Design 433: the memo is shared by every Redactor of the same rules (the store's second
    pass over a trial's record finds the runner's work), never by one whose environment
    names another secret: what one left as it was, the other still redacts."""
    value = "plain-value-0123456789"
    text = f"the build uses {value} today"
    assert Redactor(env={}).redact_text(text) == text  # not a secret by shape
    assert Redactor(env={})._done is Redactor(env={})._done
    other = Redactor(env={"BUILD_TOKEN": value})
    assert other._done is not Redactor(env={})._done
    assert value not in other.redact_text(text) and "[REDACTED:env:BUILD_TOKEN]" in (
        other.redact_text(text)
    )


def test_warm_files_writes_nothing_and_redact_files_after_it_is_the_same(
    tmp_path: Path,
) -> None:
    """Warming (the runner does it while the verifier runs) leaves the files as they are;
    redact_files afterwards writes what it writes without warming, also for a file that
    changed in between (the verifier may write under /logs)."""
    from skillci.trace.redact import redact_files, warm_files

    def tree(root: Path) -> None:
        (root / "agent").mkdir(parents=True)
        (root / "agent" / "stream.jsonl").write_text(
            json.dumps({"type": "text", "text": f"the key is {ANTHROPIC}"}) + "\n"
        )
        (root / "agent" / "stderr.txt").write_text("all fine\n")

    warmed, cold = tmp_path / "warmed", tmp_path / "cold"
    tree(warmed)
    tree(cold)
    env = {"LATE_TOKEN": "late-secret-0123456789"}
    before = {p: p.read_bytes() for p in warmed.rglob("*") if p.is_file()}
    warm_files(warmed, Redactor(env=env))
    assert {p: p.read_bytes() for p in warmed.rglob("*") if p.is_file()} == before
    for root in (warmed, cold):  # written after the warm-up: a string the memo never saw
        (root / "agent" / "stderr.txt").write_text("leaked late-secret-0123456789\n")
        redact_files(root, Redactor(env=env))
    for name in ("stream.jsonl", "stderr.txt"):
        got = (warmed / "agent" / name).read_text()
        assert got == (cold / "agent" / name).read_text()
        assert ANTHROPIC not in got and "late-secret" not in got and "[REDACTED:" in got
