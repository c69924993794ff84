"""Redaction that keeps structure (design 341): model keys, webhooks go; ids and paths stay."""

from __future__ import annotations


def test_model_keys_entries_are_redacted_by_value() -> None:
    from skillci.trace.redact import Redactor

    env = {
        "SKILLCI_MODEL_KEYS": "OPENAI_API_KEY=abcdEFGH12345678xyz\nexport B_KEY='qwertyuiop0987654321'"
    }
    r = Redactor(env=env)
    out = r.redact_text("got abcdEFGH12345678xyz and qwertyuiop0987654321")
    assert "abcdEFGH12345678xyz" not in out and "qwertyuiop0987654321" not in out
    assert "[REDACTED:env:SKILLCI_MODEL_KEYS:OPENAI_API_KEY]" in out


def test_webhook_urls_with_tokens_are_redacted() -> None:
    from skillci.trace.redact import Redactor

    r = Redactor(env={})
    for url in (
        "https://hooks.zapier.com/hooks/catch/1234567/abcdefg/",
        "https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    ):
        assert r.redact_text(f"posting to {url} now") == "posting to [REDACTED:webhook_url] now"


def test_ids_hashes_and_trial_paths_survive() -> None:
    from skillci.trace.redact import Redactor

    r = Redactor(env={})
    kept = [
        "toolu_01QPEgccMWgQ5JYBxQ9urLZg",
        "call_a8Bf93kLmN02pQrS7tUvWxYz",
        "3f786850e387550fdab836ed7e6dc881de23001b",
        "/tmp/skillci/trials/run-7f3a9Bc81dE2/agent/x9Kq2LmP8vR4tY7wZ1aB3cD5.txt",
    ]
    for text in kept:
        assert r.redact_text(f"id {text} done") == f"id {text} done"
    # a random value of the same length standing alone is still a secret
    assert "[REDACTED" in r.redact_text("value x9Kq2LmP8vR4tY7wZ1aB3cD5q7Tz done")
