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


# design 408: the shapes benchmarks/redaction_structure.py found redacted in the corpora
RANDOM = "Qz7xK2mP9vL4tR8wN3bY6cH1"  # mixed case and digits, 24 chars: a generic secret


def test_uuid_ending_a_line_is_not_the_head_of_a_wrapped_token() -> None:
    from skillci.trace.redact import Redactor

    r = Redactor(env={})
    uuid = "bbb15cbf-7249-4d71-b820-dae421112a40"
    text = f"queueDepth=0 activeSessionId={uuid}\nLATAM export is in"
    assert r.redact_text(text) == text
    # a random value wrapped over two lines is still joined and redacted
    wrapped = f"value {RANDOM[:12]}\n{RANDOM[12:]} done"
    out = r.redact_text(wrapped)
    assert RANDOM[:12] not in out and RANDOM[12:] not in out


def test_harbor_trial_names_survive_a_random_suffix_does_not() -> None:
    from skillci.trace.redact import Redactor

    r = Redactor(env={})
    for name in ("linux-notification-preferences__9MMwcyY", "hermes-telegram-mirror-drop__zk5N5fF"):
        assert r.redact_obj({"trial_name": name, "log": f"trial {name} done"}) == {
            "trial_name": name,
            "log": f"trial {name} done",
        }
    assert "[REDACTED" in r.redact_text(f"linux-notification-{RANDOM}")


def test_urls_keep_hex_and_slug_paths_but_not_keys() -> None:
    from skillci.trace.redact import Redactor

    r = Redactor(env={})
    kept = [
        "https://www.semanticscholar.org/paper/MCIP:-Protecting-MCP-Safety-via-Model-Contextual-"
        "Jing-Li/38b67dc681a674da55fdedecf6491f4006cfba6a",
        "https://openreview.net/pdf/34476fe921bb38c89bcb93b697dd9252af85e485.pdf",
        "https://doaj.org/article/51b7cd1f6494485bb03ba82fde425749",
    ]
    for url in kept:
        assert r.redact_text(f'"url":"{url}"') == f'"url":"{url}"'
    for url in (
        f"https://files.example.com/share/{RANDOM}{RANDOM}",  # a random key in the path
        f"https://example.com/download?sig={RANDOM}",  # in the query
        f"https://doaj.org/article/x?{RANDOM}{RANDOM}",
    ):
        assert RANDOM not in r.redact_text(url), url
    assert "hunter2pass" not in r.redact_text("https://bob:hunter2pass@doaj.org/article/abc")


def test_secret_in_tool_call_arguments_and_result_goes_while_call_id_stays() -> None:
    from skillci.trace.models import ToolCallEvent, ToolResultEvent
    from skillci.trace.redact import Redactor
    from tests.unit.trace.helpers import make_record

    ghp = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    call_id = "toolu_01QPEgccMWgQ5JYBxQ9urLZg"
    rec = make_record()
    events = list(rec.events)
    events[3] = ToolCallEvent(
        step=3,
        tool="Bash",
        call_id=call_id,
        arguments={"command": f"git clone https://x:{ghp}@github.com/o/r", "key": RANDOM},
    )
    events[4] = ToolResultEvent(
        step=4, call_id=call_id, output=f"cloned into /tmp/r/{call_id}\nsecret {RANDOM} used"
    )
    clean = Redactor(env={}).redact_model(make_record(events=events))
    call, result = clean.events[3], clean.events[4]
    assert isinstance(call, ToolCallEvent) and isinstance(result, ToolResultEvent)
    assert call.call_id == result.call_id == call_id
    dumped = clean.model_dump_json()
    assert ghp not in dumped and RANDOM not in dumped
    assert f"/tmp/r/{call_id}" in result.output
