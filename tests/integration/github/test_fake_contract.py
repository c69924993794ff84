"""The OpenAPI check on the fake can fail: drifted shapes, unknown routes and bad requests
are caught. Without these, "every response is validated" could be an empty promise."""

from __future__ import annotations

import copy
import json
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from github import Auth, Github

from tests.fakes.github_api import FakeGitHub
from tests.fakes.openapi import (
    OCTOKIT_OPENAPI_VERSION,
    Contract,
    SpecUnavailable,
    ensure_spec,
    spec_path,
    to_json_schema,
)
from tests.integration.github.conftest import push_branch, sh


@pytest.fixture
def probe(contract: Contract) -> Iterator[Contract]:
    """The contract, for direct checks that must not count in the session's figures."""
    saved = (
        contract.responses_validated,
        contract.requests_validated,
        Counter(contract.operations_seen),
    )
    yield contract
    contract.responses_validated, contract.requests_validated, contract.operations_seen = saved


def _op(contract: Contract, method: str, path: str):  # type: ignore[no-untyped-def]
    found = contract.operation(method, path)
    assert found is not None, f"{method} {path}"
    return found[0]


def test_the_pinned_description_is_installed(contract: Contract) -> None:
    assert spec_path().is_file()
    assert contract.version == OCTOKIT_OPENAPI_VERSION
    assert str(json.loads(spec_path().read_text())["openapi"]).startswith("3.0")


def test_nullable_is_translated() -> None:
    doc = {
        "a": {"type": "string", "nullable": True},
        "b": {"type": "string", "enum": ["x"], "nullable": True},
        "c": {"allOf": [{"$ref": "#/x"}], "nullable": True},
        "d": {"nullable": True, "description": "anything"},
        "e": {"type": "integer"},
    }
    out = to_json_schema(doc)
    assert out["a"] == {"type": ["string", "null"]}
    assert out["b"]["enum"] == ["x", None]
    assert out["c"] == {"anyOf": [{"allOf": [{"$ref": "#/x"}]}, {"type": "null"}]}
    assert out["d"] == {"description": "anything"}
    assert out["e"] == {"type": "integer"}


def test_a_drifted_pull_request_is_caught(fake: FakeGitHub, probe: Contract, work: Path) -> None:
    push_branch(work, "feature", {"b.txt": "two\n"})
    pr = fake.op_pulls_create({}, {}, {"title": "t", "head": "feature", "base": "main"})[1]
    op = _op(probe, "GET", "/repos/o/r/pulls/1")
    assert probe.check_response(op, 200, pr, True) == []
    assert probe.check_response(op, 200, {**pr, "body": None}, True) == []  # nullable
    missing = {k: v for k, v in pr.items() if k != "head"}
    assert any(
        "'head' is a required property" in e for e in probe.check_response(op, 200, missing, True)
    )
    bad = copy.deepcopy(pr)
    bad["title"] = None
    assert any("at title" in e for e in probe.check_response(op, 200, bad, True))
    bad = copy.deepcopy(pr)
    bad["created_at"] = "yesterday"
    assert any("date-time" in e for e in probe.check_response(op, 200, bad, True))
    bad = copy.deepcopy(pr)
    bad["state"] = "merged"  # GitHub says closed + merged_at
    assert any("at state" in e for e in probe.check_response(op, 200, bad, True))


def test_undocumented_statuses_and_bodies_are_caught(probe: Contract) -> None:
    contract = probe
    op = _op(contract, "DELETE", "/repos/o/r/git/refs/heads/x")
    assert contract.check_response(op, 204, None, False) == []
    assert contract.check_response(op, 204, {"x": 1}, True) != []
    assert "not documented" in contract.check_response(op, 201, None, False)[0]
    # GitHub's undocumented errors are held to basic-error
    assert contract.check_response(op, 500, {"message": "boom"}, True) == []
    assert contract.check_response(op, 500, {"message": 5}, True) != []


def test_requests_are_checked_too(probe: Contract) -> None:
    contract = probe
    labels = _op(contract, "POST", "/repos/o/r/issues/1/labels")
    assert contract.check_request(labels, {}, {"labels": ["a"]}, True) == []
    # what PyGithub's add_to_labels() sends; hence GitHubForge posts the object form
    assert contract.check_request(labels, {}, ["a"], True) != []
    issues = _op(contract, "GET", "/repos/o/r/issues")
    assert (
        contract.check_request(issues, {"state": ["all"], "per_page": ["100"]}, None, False) == []
    )
    errs = contract.check_request(issues, {"state": ["merged"], "bogus": ["1"]}, None, False)
    assert any("'merged' is not one of" in e for e in errs)
    assert any("'bogus' is not in the description" in e for e in errs)


def test_unknown_route_is_a_violation_and_a_418(fake: FakeGitHub) -> None:
    req = urllib.request.Request(
        f"{fake.base_url}/repos/{fake.owner}/{fake.name}/no-such-thing",
        headers={"Authorization": f"token {fake.token}"},
    )
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=10)
    assert exc.value.code == 418
    exc.value.close()
    assert fake.violations and "no such operation" in fake.violations[0]
    fake.violations.clear()


def test_every_request_of_a_session_is_counted(fake: FakeGitHub, work: Path) -> None:
    before = (fake.contract.responses_validated, fake.contract.requests_validated)
    push_branch(work, "feature", {"b.txt": "two\n"})
    req = urllib.request.Request(
        f"{fake.base_url}/repos/{fake.owner}/{fake.name}/pulls?state=all",
        headers={"Authorization": f"token {fake.token}"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert json.loads(resp.read()) == []
    after = (fake.contract.responses_validated, fake.contract.requests_validated)
    assert after == (before[0] + 1, before[1] + 1)


def test_tag_objects_get_no_ref_like_on_github(fake: FakeGitHub) -> None:
    """The GitHub behaviour GitHubRepo.create_tag works around (it creates the ref too)."""
    main = sh(fake.git.path, "rev-parse", "main")
    with Github(
        auth=Auth.Token(fake.token),
        base_url=fake.base_url,
        retry=None,
        lazy=True,
        seconds_between_requests=0,
        seconds_between_writes=0,
    ) as gh:
        tag = gh.get_repo(f"{fake.owner}/{fake.name}").create_git_tag("loose", "m", main, "commit")
    assert sh(fake.git.path, "cat-file", "-t", tag.sha) == "tag"
    assert sh(fake.git.path, "tag", "--list") == ""


def test_an_unreachable_registry_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cached description and no registry: an error with the command, never a skip."""
    monkeypatch.setenv("SKILLCI_TEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("npm_config_registry", "http://localhost:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))  # not ~/.npm
    with pytest.raises(SpecUnavailable, match=r"npm install --prefix .*@octokit/openapi@"):
        ensure_spec()
