"""Pure parts of the GitHub forge: PR body markers, rate-limit arithmetic, error lines."""

from __future__ import annotations

import pytest
from github.GithubException import GithubException, RateLimitExceededException
from hypothesis import given
from hypothesis import strategies as st

from skillci.errors import ConflictError, ForgeError, InvalidInputError
from skillci.forge.github import _run_state, compose_body, split_body
from skillci.forge.github_retry import Op, RetryPolicy, call, rate_limit_wait, to_error

OP = Op("set commit status skillci/gate", "statuses: write")


def test_body_markers_round_trip() -> None:
    raw = compose_body("diagnosis\n\nevidence\n", "abc123", "repo-debugger")
    assert raw == (
        "diagnosis\n\nevidence\n\n"
        "<!-- skillci:patch-id=abc123 -->\n<!-- skillci:skill=repo-debugger -->\n"
    )
    assert split_body(raw) == ("diagnosis\n\nevidence", "abc123", "repo-debugger")
    assert compose_body("plain", None, None) == "plain"
    assert split_body("plain\n") == ("plain\n", None, None)
    assert split_body(None) == ("", None, None)


@given(
    body=st.text(alphabet=st.characters(blacklist_characters="<>\r"), max_size=200),
    patch=st.from_regex(r"[a-f0-9]{8,64}", fullmatch=True),
)
def test_markers_survive_any_text(body: str, patch: str) -> None:
    text, pid, skill = split_body(compose_body(body, patch, "demo"))
    assert (pid, skill) == (patch, "demo")
    assert text == body.rstrip("\n")


def test_marker_values_cannot_break_out_of_the_comment() -> None:
    with pytest.raises(InvalidInputError, match="cannot go into a PR marker"):
        compose_body("x", "id --> <script>", None)


def _exc(status: int, message: str, headers: dict[str, str] | None = None) -> GithubException:
    return GithubException(status, {"message": message}, headers or {})


def test_rate_limit_wait_follows_github_headers() -> None:
    assert rate_limit_wait(_exc(429, "slow down", {"Retry-After": "12"}), now=0) == 12
    reset = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1000"}
    assert rate_limit_wait(_exc(403, "API rate limit exceeded", reset), now=990) == 11
    limited = RateLimitExceededException(403, {"message": "secondary"}, {})
    assert rate_limit_wait(limited, now=0) == 60  # GitHub: wait at least a minute
    assert rate_limit_wait(_exc(403, "Resource not accessible by integration"), now=0) is None
    assert rate_limit_wait(_exc(500, "boom"), now=0) is None


def test_forbidden_names_the_permission_and_what_github_accepts() -> None:
    err = to_error(
        OP,
        _exc(403, "Resource not accessible", {"X-Accepted-GitHub-Permissions": "statuses=write"}),
    )
    assert isinstance(err, ForgeError)
    assert str(err).startswith(
        "set commit status skillci/gate: forbidden (403 (Resource not accessible)); "
        "the token needs 'statuses: write' (GitHub accepts: statuses=write)"
    )


def test_other_statuses_become_one_line_errors() -> None:
    assert "rejected the token" in str(to_error(OP, _exc(401, "Bad credentials")))
    assert "cannot see it (needs 'statuses: write')" in str(to_error(OP, _exc(404, "Not Found")))
    assert isinstance(to_error(OP, _exc(409, "Conflict")), ConflictError)
    v = GithubException(
        422, {"message": "Validation Failed", "errors": [{"field": "head", "code": "invalid"}]}, {}
    )
    assert "422 (Validation Failed: head invalid)" in str(to_error(OP, v))
    assert "cannot reach GitHub at http://x" in str(
        to_error(OP, OSError("refused"), base_url="http://x")
    )


def test_non_idempotent_calls_are_not_repeated_after_a_server_error() -> None:
    calls: list[int] = []
    sleeps: list[float] = []

    def boom() -> None:
        calls.append(1)
        raise _exc(502, "Bad Gateway")

    with pytest.raises(GithubException):
        call(OP, boom, RetryPolicy(sleep=sleeps.append), idempotent=False)
    assert (len(calls), sleeps) == (1, [])
    calls.clear()
    with pytest.raises(GithubException):
        call(OP, boom, RetryPolicy(attempts=4, sleep=sleeps.append), idempotent=True)
    assert (len(calls), sleeps) == (4, [1.0, 2.0, 4.0])


def test_rate_limited_calls_are_repeated_even_when_not_idempotent() -> None:
    answers = [_exc(429, "slow", {"Retry-After": "2"}), None]
    sleeps: list[float] = []

    def once() -> str:
        a = answers.pop(0)
        if a is not None:
            raise a
        return "ok"

    assert call(OP, once, RetryPolicy(sleep=sleeps.append), idempotent=False) == "ok"
    assert sleeps == [2.0]


@pytest.mark.parametrize(
    ("status", "conclusion", "title", "state"),
    [
        ("in_progress", None, None, "pending"),
        ("queued", None, None, "pending"),
        ("completed", "success", None, "success"),
        ("completed", "neutral", None, "success"),
        ("completed", "failure", "skillci/gate: failure", "failure"),
        ("completed", "failure", "skillci/gate: error", "error"),
        ("completed", "timed_out", None, "failure"),
    ],
)
def test_check_runs_read_back_as_status_states(
    status: str, conclusion: str | None, title: str | None, state: str
) -> None:
    assert _run_state(status, conclusion, title) == state
