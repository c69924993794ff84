"""Redaction by detect-secrets + entropy + skillci's own gaps (issue 16 item 2; design 162).

The corpus: one test string per gitleaks rule (tests/fixtures/secrets/secrets.jsonl, built by
build_corpus.py from gitleaks' own rule sources), in the sample contexts gitleaks validates
its rules with. Plus the formats issue 16 found leaking.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.trace.redact import Redactor

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "secrets" / "secrets.jsonl"
R = Redactor(env={})


def corpus() -> list[dict[str, str]]:
    return [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if x]


def contexts(item: dict[str, str]) -> list[str]:
    """gitleaks' GenerateSampleSecret(s) shapes (config, JSON, YAML, code)."""
    i, s = item["ident"], item["secret"]
    if not i:  # a literal sample: gitleaks' own line, with its own context
        return [s]
    return [
        f'{i}_api_token = "{s}"',
        f"{i}Token={s}",
        f'{{\n    "{i}_token": "{s}"\n}}',
        f"{i}_token: '{s}'",
        f'var {i}Token string = "{s}"',
    ]


def test_corpus_covers_at_least_60_formats_with_sources() -> None:
    items = corpus()
    assert len({x["format"] for x in items}) >= 60
    assert all(x["commit"] and x["source"].startswith("https://github.com/") for x in items)


@pytest.mark.parametrize("item", corpus(), ids=lambda x: x["format"])
def test_every_gitleaks_format_is_redacted_in_its_sample_contexts(item: dict[str, str]) -> None:
    for text in contexts(item):
        out = R.redact_text(text)
        assert item["secret"] not in out, out
        assert "[REDACTED:" in out


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"the key {AWS_SECRET} goes in the bucket config", AWS_SECRET),
        ("redis://:s3cretPw9@cache:6379/0", "s3cretPw9"),
        (
            "https://hooks.slack.com/services/T0AAA1111/B0BBB2222/abcdefGHIJKLmnop12345678",
            "abcdefGHIJKLmnop12345678",
        ),
        ("stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
        ("glpat-" + "xY12abCD34efGH56ijKL", "xY12abCD34efGH56ijKL"),
        ("npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
        ("pypi-" + "AgEIcHlwaS5vcmc" + "A" * 60 + "xyz123", "AgEIcHlwaS5vcmc"),
        (
            "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
            "TwL2iGABf9DHoTf",
        ),
        ("curl -u admin:Sup3rPass https://api", "Sup3rPass"),
        ("machine api.example.com login bob password hunter22", "hunter22"),
        ("mysql -uroot -pTopSecret1 db", "TopSecret1"),
        ('{"auths": {"r.io": {"auth": "Ym9iOnMzY3JldHB3"}}}', "Ym9iOnMzY3JldHB3"),
        ("xapp-1-A0123456789-1234567890123-abcdef0123456789", "abcdef0123456789"),
        (
            "https://discord.com/api/webhooks/123456789012345678/AbCdEf-GhIjKl_MnOp",
            "AbCdEf-GhIjKl_MnOp",
        ),
        ("VAULT_TOKEN is hvs." + "CAESIJlWx6f1cmVMUzlCeQ9vYvT1", "CAESIJlWx6f1cmVMUzlCeQ9vYvT1"),
        ("dop_v1_" + "0123456789abcdef" * 4, "0123456789abcdef" * 4),
        ("token dapi" + "0123456789abcdef" * 2, "dapi" + "0123456789abcdef" * 2),
        (
            "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE",
            "AGE-SECRET-KEY-1QPZRY",
        ),
        (f"header {JWT[:50]}\n{JWT[50:]} end", JWT[40:60]),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
            "lQOYBF",
        ),
    ],
)
def test_formats_issue_16_found_leaking(text: str, secret: str) -> None:
    out = R.redact_text(text)
    assert secret not in out, out


def test_keys_are_redacted_like_values() -> None:
    ghp = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    out = R.redact_obj({ghp: "x", "nested": {f"token={ghp}": 1}})
    assert ghp not in json.dumps(out)


@pytest.mark.parametrize(
    "text",
    [
        "run-20260101-120000-ab12cd34",
        "hosted_vllm/Qwen/Qwen2.5-7B-Instruct-AWQ",
        "skill_hash=sha256-9f86d081884c7d659a2feaa0c55ad0159f86d081884c7d659a2feaa0c55ad015",
        "tests/unit/patch/test_guard_layers.py::test_policy_classes_in_several_languages",
        "ConnectionResetError: [Errno 104] Connection reset by peer",
        "harbor-job_1-trial.2",
        "patch-0123456789abcdef",
    ],
)
def test_ids_hashes_and_paths_survive(text: str) -> None:
    assert R.redact_text(text) == text


@pytest.mark.parametrize(
    "value",
    [
        "q7w2e9r4t1y8u3i6o0p5a2s7d4f9g1h8",  # single case: no mixed-case check applies
        "Z9X8C7V6B5N4M3L2K1J0HQWE",  # upper case and digits, 24 characters
    ],
)
def test_bare_random_values_are_redacted_without_a_key_name(value: str) -> None:
    assert value not in Redactor(env={}).redact_text(f"then use {value} for the upload")


@pytest.mark.parametrize(
    "value",
    [
        "3f786850e387550fdab836ed7e6dc881de23001b",  # a git sha: hex is at most 4 bits/char
        "test_redaction_of_bare_values_v2",
        "run-20260102-153000-abc123",
    ],
)
def test_bare_ids_and_hashes_are_kept(value: str) -> None:
    assert value in Redactor(env={}).redact_text(f"see {value} in the log")
