"""GitHubRepo: the code side of GitHub — refs, API pushes, annotated tags, releases.

:class:`skillci.forge.github.GitHubForge` adds pull requests on top. Both share one
PyGithub client, one retry policy and one way of turning failures into skillci errors
(:mod:`skillci.forge.github_retry`).

Configuration: ``GITHUB_TOKEN`` (App installation token, the Actions token or a PAT),
``GITHUB_REPOSITORY`` (``owner/name``), ``GITHUB_API_URL`` (default
``https://api.github.com``; GitHub Enterprise Server is ``https://HOST/api/v3``). Under
Actions (``GITHUB_SERVER_URL`` + ``GITHUB_RUN_ID``), statuses link to the workflow run.

Pushing candidate commits: :meth:`GitHubRepo.push_commit` rebuilds them through the git
database API (docs/design/060-github-forge.md says why); a plain ``git push`` of the
branch works too.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Self, TypeVar

import requests
from github import Auth, Github, InputGitAuthor, InputGitTreeElement
from github.GitCommit import GitCommit
from github.GithubException import GithubException
from github.GitRef import GitRef
from pydantic import BaseModel, Field

from skillci.errors import ConfigError, ConflictError, ForgeError, InvalidInputError
from skillci.forge.base import now
from skillci.forge.github_push import (
    LocalCommit,
    PushResult,
    commits_between,
    first_parents,
    read_commit,
)
from skillci.forge.github_retry import Op, RetryPolicy, call, github_message, status_of, to_error
from skillci.vcs.git import Git

T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"
READ_CONTENTS = "contents: read"
WRITE_CONTENTS = "contents: write"


def iso(value: datetime | None) -> str:
    """A PyGithub datetime as skillci's timestamps (UTC, seconds)."""
    if value is None:
        return now()
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="seconds")


class GitHubRelease(BaseModel):
    """A GitHub release as skillci sees it."""

    id: int = Field(description="GitHub's release id.")
    tag: str = Field(description="Tag name, e.g. repo-debugger@1.2.0.")
    name: str | None = Field(description="Release title.")
    body: str | None = Field(description="Release notes (markdown).")
    url: str = Field(description="Web page of the release.")
    draft: bool
    prerelease: bool


class GitHubRepo:
    """One GitHub repository through PyGithub, with retries and clear errors."""

    def __init__(
        self,
        repo: str,
        *,
        token: str | None = None,
        auth: Auth.Auth | None = None,
        base_url: str = DEFAULT_API_URL,
        details_url: str | None = None,
        per_page: int = 100,
        timeout: int = 30,
        seconds_between_requests: float | None = 0.25,
        seconds_between_writes: float | None = 1.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
            raise ConfigError(
                f"GitHub repository {repo!r} is not owner/name", hint="set GITHUB_REPOSITORY"
            )
        if auth is None:
            if not token:
                raise ConfigError(
                    "no GitHub token",
                    hint="set GITHUB_TOKEN (App installation token, Actions token or PAT)",
                )
            auth = Auth.Token(token)
        self.full_name = repo
        self.base_url = base_url.rstrip("/")
        self.details_url = details_url
        self.policy = retry or RetryPolicy()
        self._gh = Github(
            auth=auth,
            base_url=self.base_url,
            per_page=per_page,
            timeout=timeout,
            retry=None,  # tenacity does it, with our rules (github_retry.py)
            seconds_between_requests=seconds_between_requests,
            seconds_between_writes=seconds_between_writes,
            lazy=True,
        )
        self._repo = self._gh.get_repo(repo)

    @classmethod
    def from_env(
        cls, repo: str | None = None, *, env: Mapping[str, str] | None = None, **kw: Any
    ) -> Self:
        """Configured from GitHub Actions' environment variables (module docstring)."""
        env = os.environ if env is None else env
        repo = repo or env.get("GITHUB_REPOSITORY")
        if not repo:
            raise ConfigError(
                "no GitHub repository given", hint="set GITHUB_REPOSITORY=owner/name or pass it"
            )
        token = env.get("GITHUB_TOKEN")
        if not token:
            raise ConfigError(
                "GITHUB_TOKEN is not set",
                hint="export an App installation token, the Actions token or a PAT "
                "(docs/github.md)",
            )
        details = None
        if env.get("GITHUB_RUN_ID") and env.get("GITHUB_SERVER_URL"):
            details = f"{env['GITHUB_SERVER_URL']}/{repo}/actions/runs/{env['GITHUB_RUN_ID']}"
        kw.setdefault("details_url", details)
        return cls(repo, token=token, base_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL, **kw)

    def disconnect(self) -> None:
        """Close the HTTP connections (PyGithub keeps a pool). ``close`` closes PRs."""
        self._gh.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.disconnect()

    # ------------------------------------------------------------------ plumbing

    def _call(
        self,
        op: Op,
        fn: Callable[[], T],
        *,
        idempotent: bool = True,
        answers: tuple[int, ...] = (),
    ) -> T:
        """One API call with retries; statuses in ``answers`` reach the caller raw."""
        try:
            return call(op, fn, self.policy, idempotent=idempotent)
        except (GithubException, requests.RequestException) as exc:
            if status_of(exc) in answers:
                raise
            raise to_error(op, exc, base_url=self.base_url) from exc

    # ------------------------------------------------------------------ refs and pushes

    def _git_ref(self, name: str) -> GitRef | None:
        """``refs/<name>`` fetched from GitHub, or None.

        Fetched, not lazy: a lazy ``get_git_ref()`` object carries the GET URL
        (``/git/ref/...``), and its ``edit()``/``delete()`` would send PATCH/DELETE there
        instead of to ``/git/refs/...``; the fetched object has GitHub's own URL.
        """
        try:
            return self._call(
                Op(f"read ref refs/{name}", READ_CONTENTS),
                lambda: self._repo.get_git_ref(name).complete(),
                answers=(404,),
            )
        except GithubException:
            return None

    def _ref(self, name: str) -> tuple[str, str] | None:
        """(object type, sha) of ``refs/<name>``, or None."""
        ref = self._git_ref(name)
        return (ref.object.type, ref.object.sha) if ref is not None else None

    def branch_sha(self, branch: str) -> str | None:
        ref = self._ref(f"heads/{branch}")
        return ref[1] if ref else None

    def create_branch(self, branch: str, sha: str) -> None:
        """Create ``refs/heads/<branch>`` at ``sha`` (fine if it is already there)."""
        op = Op(f"create branch {branch}", WRITE_CONTENTS)
        try:
            self._call(
                op, lambda: self._repo.create_git_ref(f"refs/heads/{branch}", sha), answers=(422,)
            )
        except GithubException as exc:
            current = self.branch_sha(branch)
            if current == sha:
                return
            if current is not None:
                raise ConflictError(
                    f"branch {branch} exists on GitHub at {current[:12]}, not {sha[:12]}"
                ) from exc
            raise to_error(op, exc) from exc

    def update_branch(self, branch: str, sha: str, *, force: bool = False) -> None:
        """Move an existing branch; without ``force`` only fast-forward."""
        ref = self._git_ref(f"heads/{branch}")
        if ref is None:
            raise ConflictError(f"branch {branch} does not exist on GitHub")
        op = Op(f"update branch {branch}", WRITE_CONTENTS)
        try:
            self._call(op, lambda: ref.edit(sha, force=force), answers=(422,))
        except GithubException as exc:
            raise ConflictError(
                f"cannot move {branch} to {sha[:12]}: {github_message(exc)}",
                hint="the branch moved on GitHub; re-create the candidate on its tip",
            ) from exc

    def delete_branch(self, branch: str) -> bool:
        """Delete ``refs/heads/<branch>``; False when it was already gone."""
        ref = self._git_ref(f"heads/{branch}")
        if ref is None:
            return False
        op = Op(f"delete branch {branch}", WRITE_CONTENTS)
        try:
            self._call(op, ref.delete, answers=(404, 422))
        except GithubException:
            return False  # deleted concurrently
        return True

    def _remote_commit(self, sha: str) -> GitCommit | None:
        try:
            return self._call(
                Op(f"read commit {sha[:12]}", READ_CONTENTS),
                lambda: self._repo.get_git_commit(sha),
                answers=(404, 422),
            )
        except GithubException:
            return None

    def push_commit(
        self,
        git: Git,
        commit: str,
        branch: str,
        *,
        base: str | None = None,
        force: bool = False,
        search_depth: int = 50,
    ) -> PushResult:
        """Send local ``commit`` (and its ancestors GitHub lacks) and point ``branch`` at it.

        ``base`` is a commit GitHub already has (the base branch tip the candidate was
        built on); without it the first-parent ancestors are probed, newest first. Each
        commit is rebuilt through the git database API: changed blobs, a tree on the
        parent's tree, the commit with the original author, committer and dates.
        """
        local = git.rev(commit)
        if local is None:
            raise InvalidInputError(f"no local commit {commit!r}")
        remote_base: GitCommit | None = None
        if base is not None:
            remote_base = self._remote_commit(base)
            if remote_base is None:
                raise ForgeError(f"GitHub does not have the base commit {base[:12]}")
        else:
            for sha in first_parents(git, local, search_depth):
                remote_base = self._remote_commit(sha)
                if remote_base is not None:
                    break
            if remote_base is None:
                raise ForgeError(
                    f"none of the last {search_depth} ancestors of {local[:12]} is on GitHub",
                    hint="push the base branch with git push first",
                )
        parent = remote_base
        mapping = {remote_base.sha: remote_base.sha}
        blobs = 0
        shas = commits_between(git, remote_base.sha, local)
        for sha in shas:
            c = read_commit(git, sha)
            if mapping.get(c.parent) != parent.sha:
                raise ForgeError(f"commit {sha[:12]} does not descend linearly from the base")
            parent, uploaded = self._push_one(git, c, parent)
            mapping[sha] = parent.sha
            blobs += uploaded
        remote = mapping[local] if shas else remote_base.sha
        if self.branch_sha(branch) is None:
            self.create_branch(branch, remote)
        else:
            self.update_branch(branch, remote, force=force)
        return PushResult(
            branch=branch,
            local_sha=local,
            remote_sha=remote,
            commits=len(shas),
            blobs=blobs,
            identical=all(k == v for k, v in mapping.items()),
        )

    def _push_one(self, git: Git, c: LocalCommit, parent: GitCommit) -> tuple[GitCommit, int]:
        """Rebuild local commit ``c`` on GitHub on top of ``parent``."""
        entries = []
        uploaded = 0
        for ch in c.changes:
            sha = ch.sha
            if ch.type == "blob" and sha is not None:
                data = git.show_file(c.sha, ch.path)
                if data is None:
                    raise ForgeError(f"cannot read {ch.path} at {c.sha[:12]}")
                sha = self._upload_blob(sha, data)
                uploaded += 1
            entries.append(InputGitTreeElement(ch.path, ch.mode, ch.type, sha=sha))
        tree = self._call(
            Op(f"create the tree of {c.sha[:12]}", WRITE_CONTENTS),
            lambda: self._repo.create_git_tree(entries, parent.tree),
        )
        if tree.sha != c.tree:
            raise ForgeError(
                f"GitHub built tree {tree.sha[:12]} for {c.sha[:12]}, expected {c.tree[:12]}"
            )
        author = InputGitAuthor(c.author.name, c.author.email, c.author.date)
        committer = InputGitAuthor(c.committer.name, c.committer.email, c.committer.date)
        made = self._call(
            Op(f"create commit {c.sha[:12]}", WRITE_CONTENTS),
            lambda: self._repo.create_git_commit(
                c.message, tree, [parent], author=author, committer=committer
            ),
        )
        return made, uploaded

    def _upload_blob(self, sha: str, data: bytes) -> str:
        content = base64.b64encode(data).decode()
        blob = self._call(
            Op(f"upload blob {sha[:12]}", WRITE_CONTENTS),
            lambda: self._repo.create_git_blob(content, "base64"),
        )
        if blob.sha != sha:
            raise ForgeError(f"GitHub stored blob {blob.sha[:12]}, expected {sha[:12]}")
        return blob.sha

    # ------------------------------------------------------------------ tags and releases

    def create_tag(
        self, name: str, sha: str, message: str, *, tagger: tuple[str, str] | None = None
    ) -> str:
        """Annotated tag ``name`` on commit ``sha``: tag object + ``refs/tags/<name>``.

        Idempotent for the same target; a tag on another commit is a ConflictError (tags
        never move). Returns the tag object's sha.
        """
        existing = self._ref(f"tags/{name}")
        if existing is not None:
            kind, obj = existing
            target = obj
            if kind == "tag":
                tag_obj = self._call(
                    Op(f"read tag {name}", READ_CONTENTS), lambda: self._repo.get_git_tag(obj)
                )
                target = tag_obj.object.sha
            if kind == "tag" and target == sha:
                return obj
            raise ConflictError(
                f"tag {name} already exists on {target[:12]}",
                hint="tags never move; bump the version",
            )
        who = (
            InputGitAuthor(tagger[0], tagger[1], datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
            if tagger
            else None
        )
        tag = self._call(
            Op(f"create tag object {name}", WRITE_CONTENTS),
            lambda: self._repo.create_git_tag(
                name, message, sha, "commit", **({"tagger": who} if who else {})
            ),
        )
        op = Op(f"create ref refs/tags/{name}", WRITE_CONTENTS)
        try:
            self._call(
                op, lambda: self._repo.create_git_ref(f"refs/tags/{name}", tag.sha), answers=(422,)
            )
        except GithubException as exc:
            raise ConflictError(
                f"tag {name} appeared while skillci was creating it ({github_message(exc)})"
            ) from exc
        return tag.sha

    def create_release(
        self, tag: str, *, name: str, notes: str, prerelease: bool = False, draft: bool = False
    ) -> GitHubRelease:
        """Create the release of ``tag`` or update its title and notes (idempotent)."""
        try:
            rel = self._call(
                Op(f"read release {tag}", READ_CONTENTS),
                lambda: self._repo.get_release(tag),
                answers=(404,),
            )
        except GithubException:
            rel = None
        latest = "false" if prerelease or draft else "true"
        if rel is None:
            rel = self._call(
                Op(f"create release {tag}", WRITE_CONTENTS),
                lambda: self._repo.create_git_release(
                    tag,
                    name=name,
                    message=notes,
                    draft=draft,
                    prerelease=prerelease,
                    make_latest=latest,
                ),
                idempotent=False,
            )
        else:
            current = rel
            rel = self._call(
                Op(f"update release {tag}", WRITE_CONTENTS),
                lambda: current.update_release(
                    name, notes, draft=draft, prerelease=prerelease, make_latest=latest
                ),
            )
        return GitHubRelease(
            id=rel.id,
            tag=rel.tag_name,
            name=rel.name,
            body=rel.body,
            url=rel.html_url,
            draft=rel.draft,
            prerelease=rel.prerelease,
        )
