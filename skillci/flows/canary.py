"""Channels, canary and rollback: ``skillci channel|canary|rollback``.

Every move goes through :meth:`skillci.release.channels.ChannelStore.append`, whose builder
decides from the state it read and returns None when there is nothing (left) to do — so
two concurrent ``canary analyze --auto`` runs move a channel at most once: the loser of the
compare-and-swap re-reads, finds the canary already resolved, and does nothing.

A rollback marks the version in the skill's CHANGELOG.md and compatibility (manifest +
COMPATIBILITY.md) with one commit on the base branch (plumbing, then ``advance_branch``),
written only by the process whose rollback event won.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from skillci.errors import ConflictError, GitError, InvalidInputError, ReleaseRefused
from skillci.flows.context import RepoContext
from skillci.release import changelog, compat
from skillci.release.canary import analyze
from skillci.release.channels import Builder, ChannelStore, Draft
from skillci.release.manifest_text import MANIFEST, set_compatibility
from skillci.release.models import CanaryAnalysis as CanaryAnalysis  # re-exported: the CLI's
from skillci.release.models import (
    Channel,
    ChannelState,
    Move,
    Pointer,
    ReleaseInfo,
    utcnow,
)
from skillci.release.models import ChannelEvent as ChannelEvent  # renderers annotate these
from skillci.release.production import window
from skillci.release.tags import (
    STAMP_GATE,
    STAMP_REPORT,
    STAMP_VERDICT,
    read_stamp,
    release_tags,
    report_digest,
    tag_message,
    tag_name,
)

ANALYSIS_BLOB = "canary-analysis"
BOT = "skillci[bot]"


def _move(channel: Channel, old: Pointer | None, new: Pointer | None) -> Move:
    return Move(
        channel=channel,
        from_version=old.version if old else None,
        to_version=new.version if new else None,
        from_commit=old.commit if old else None,
        to_commit=new.commit if new else None,
        weight=new.weight if new else None,
    )


def _store(ctx: RepoContext) -> ChannelStore:
    return ChannelStore(ctx.git)


def _state(ctx: RepoContext, skill: str) -> ChannelState:
    st = _store(ctx).state(skill)
    if st is None:
        raise InvalidInputError(
            f"{skill} has no channels yet",
            hint=f"run `skillci channel init {skill}` (tags the current version as stable)",
        )
    return st


def _release(ctx: RepoContext, state: ChannelState, version: str) -> ReleaseInfo:
    """The release of ``version`` (from the log, else from its tag)."""
    if version in state.releases:
        return state.releases[version]
    commit = release_tags(ctx.git, state.skill).get(version)
    if commit is None:
        raise InvalidInputError(
            f"{tag_name(state.skill, version)} does not exist",
            hint=f"released versions: {', '.join(release_tags(ctx.git, state.skill)) or 'none'}",
        )
    return ReleaseInfo(
        version=version, commit=commit, tag=tag_name(state.skill, version), released_at=utcnow()
    )


def _pointer(info: ReleaseInfo, weight: int | None = None) -> Pointer:
    return Pointer(
        version=info.version, commit=info.commit, tag=info.tag, since=utcnow(), weight=weight
    )


# ---------------------------------------------------------------------------- gated


def gate_refusal(ctx: RepoContext, skill: str, version: str) -> tuple[str | None, str | None]:
    """(why the version may not serve canary/stable, gate id): None when its release tag
    carries the stamp of a passing gate (docs/design/220-gated-channels.md). A report
    found in the local trace store must have the stamped hash and accept."""
    from skillci.flows.release import stored_gate

    tag = tag_name(skill, version)
    stamp = read_stamp(tag_message(ctx.git, tag))
    gid = stamp.get(STAMP_GATE)
    if not gid or not stamp.get(STAMP_REPORT):
        return (
            f"{tag} carries no gate stamp ({STAMP_GATE}, {STAMP_REPORT} in its annotation): "
            "it never passed a skillci gate",
            None,
        )
    if stamp.get(STAMP_VERDICT) != "accept":
        return f"{tag}: gate {gid} did not accept it ({stamp.get(STAMP_VERDICT)})", gid
    report = stored_gate(ctx, gid)
    if report is not None:
        if report_digest(report.model_dump_json()) != stamp[STAMP_REPORT]:
            return f"{tag}: the stored report of gate {gid} does not have the stamped hash", gid
        if not report.accepted:
            return f"{tag}: gate {gid} rejected it", gid
    return None, gid


def _gated(
    ctx: RepoContext, skill: str, version: str, *, force: bool, channel: str
) -> tuple[str | None, str | None]:
    """(what --force overrode or None, gate id); refuses an ungated version without force."""
    why, gid = gate_refusal(ctx, skill, version)
    if why is None:
        return None, gid
    if not force:
        raise ReleaseRefused(
            f"{channel} refused: {why}",
            hint="release it with `skillci release --pr N` (a passing gate stamps the tag), "
            "or pass --force (recorded in the channel log)",
        )
    return why, gid


def ever_stable(ctx: RepoContext, skill: str) -> set[str]:
    """Versions the channel log ever moved stable to (they passed its bar once)."""
    return {
        m.to_version
        for e in _store(ctx).log(skill)
        for m in e.moves
        if m.channel == "stable" and m.to_version
    }


# ---------------------------------------------------------------------------- init


def channel_init(
    ctx: RepoContext, skill: str, *, ref: str = "main", actor: str
) -> ChannelEvent | None:
    """Point stable at the skill's current version on ``ref``, tagging it if it has no tag.

    Returns the event, or None when stable was already set (nothing to do)."""
    skill_dir = ctx.skill_dir(skill)
    sha = ctx.git.rev(ref)
    if sha is None:
        raise InvalidInputError(f"unknown ref {ref!r}")
    manifest = ctx.package_at(sha, skill_dir).manifest
    name, version = manifest.name, manifest.version
    tag = tag_name(name, version)
    commit = ctx.git.rev(f"refs/tags/{tag}")
    existing = _store(ctx).state(name)
    if existing is not None and existing.stable is not None:
        return None
    if commit is None:
        if not ctx.dry_run:
            ctx.git.tag_annotated(
                tag, sha, f"{name} {version}\nInitial stable release (skillci channel init).\n"
            )
        commit = sha
    info = ReleaseInfo(version=version, commit=commit, tag=tag, released_at=utcnow())
    base = ref if ctx.git.rev(f"refs/heads/{ref}") else "main"

    def build(state: ChannelState) -> Draft | None:
        if state.stable is not None:
            return None
        state.releases.setdefault(version, info)
        new = _pointer(state.releases[version])
        ev = ChannelEvent(
            seq=1,
            type="init",
            version=version,
            moves=[_move("stable", None, new)],
            actor=actor,
            command=f"skillci channel init {name} --ref {ref}",
            reason=f"initial stable: {tag} ({commit[:12]})",
            at=utcnow(),
        )
        state.stable = new
        return Draft(ev, state)

    draft = _store(ctx).append(name, ChannelState(skill=name, path=skill_dir, base=base), build)
    return draft.event if draft else None


# ---------------------------------------------------------------------------- canary


def canary_start(
    ctx: RepoContext, skill: str, version: str, *, weight: int, actor: str, force: bool = False
) -> ChannelEvent:
    """Put ``<skill>@<version>`` on the canary channel with ``weight`` percent of requests
    (re-running with the running canary's version changes its weight). Only a version whose
    tag carries a passing gate's stamp, unless ``force`` (recorded in the event)."""
    if not 0 < weight <= 100:
        raise InvalidInputError(f"--weight {weight} must be 1..100")
    state = _state(ctx, skill)
    info = _release(ctx, state, version)
    forced, gid = _gated(ctx, skill, version, force=force, channel="canary")

    def build(st: ChannelState) -> Draft | None:
        if st.stable is None:
            raise InvalidInputError(f"{skill} has no stable version to compare the canary with")
        if st.stable.version == version:
            raise InvalidInputError(f"{skill}@{version} is already stable")
        if info.rolled_back or (version in st.releases and st.releases[version].rolled_back):
            raise InvalidInputError(
                f"{skill}@{version} was rolled back ({(st.releases.get(version) or info).rolled_back})",
                hint="release a fixed version instead",
            )
        old = st.canary
        if old is not None and old.version != version:
            raise InvalidInputError(
                f"canary {skill}@{old.version} is running",
                hint="analyze it (`skillci canary analyze`) or roll it back first",
            )
        if old is not None and old.weight == weight:
            return None
        st.releases.setdefault(version, info)
        new = (
            old.model_copy(update={"weight": weight})
            if old is not None
            else _pointer(st.releases[version], weight)
        )
        ev = ChannelEvent(
            seq=1,
            type="canary_start",
            version=version,
            moves=[_move("canary", old, new)],
            actor=actor,
            command=f"skillci canary start {skill}@{version} --weight {weight}"
            + (" --force" if forced else ""),
            reason=(
                f"canary weight {old.weight}% -> {weight}%"
                if old
                else f"start canary {version} at {weight}% against stable {st.stable.version}"
            )
            + (f" (forced: {forced})" if forced else ""),
            gate_id=gid,
            forced=forced,
            at=utcnow(),
        )
        st.canary = new
        return Draft(ev, st)

    draft = _store(ctx).append(skill, state, build)
    if draft is None:
        return _store(ctx).log(skill)[-1]
    return draft.event


def _promote_builder(
    skill: str, expected: Pointer, actor: str, command: str, reason: str, analysis_id: str | None
) -> Builder:
    def build(st: ChannelState) -> Draft | None:
        c = st.canary
        if c is None or c.version != expected.version or c.since != expected.since:
            return None  # already promoted or rolled back (maybe by a concurrent run)
        new = c.model_copy(update={"since": utcnow(), "weight": None})
        moves = [_move("stable", st.stable, new), _move("canary", c, None)]
        if st.stable is not None:
            st.stable_history.append(st.stable.version)
        st.stable, st.canary = new, None
        ev = ChannelEvent(
            seq=1,
            type="promote",
            version=c.version,
            moves=moves,
            actor=actor,
            command=command,
            reason=reason,
            analysis_id=analysis_id,
            at=utcnow(),
        )
        return Draft(ev, st)

    return build


def promote(ctx: RepoContext, skill: str, *, actor: str, reason: str = "") -> ChannelEvent | None:
    """Stable moves to the running canary; the canary is cleared."""
    state = _state(ctx, skill)
    if state.canary is None:
        raise InvalidInputError(f"{skill} has no canary to promote")
    build = _promote_builder(
        skill,
        state.canary,
        actor,
        f"skillci canary promote {skill}",
        reason or f"manual promotion by {actor}",
        None,
    )
    draft = _store(ctx).append(skill, state, build)
    return draft.event if draft else None


# ---------------------------------------------------------------------------- rollback


def mark_rolled_back(
    ctx: RepoContext, state: ChannelState, versions: list[str], note: str, reason: str
) -> tuple[str | None, list[str]]:
    """One commit on the base branch marking ``versions`` rolled back in CHANGELOG.md and
    the compatibility matrix. Returns (the commit or None, one line per version saying
    what was marked or why nothing was)."""
    for _ in range(5):
        tip = ctx.git.rev(f"refs/heads/{state.base}")
        if tip is None:
            raise InvalidInputError(f"base branch {state.base!r} is gone")
        pkg = ctx.package_at(tip, state.path)
        files: dict[str, bytes] = {}
        notes: list[str] = []
        has_log = changelog.CHANGELOG_FILE in pkg.files
        text = pkg.text(changelog.CHANGELOG_FILE) if has_log else ""
        manifest = pkg.manifest
        new_compat = manifest.compatibility
        for v in versions:
            marked = changelog.mark_rolled_back(text, v, note) if has_log else None
            where = f"{state.path}/{changelog.CHANGELOG_FILE}"
            if marked is not None:
                text = marked
                notes.append(f"{v}: marked rolled back in {where}")
            elif not has_log:
                notes.append(f"{v}: not marked: {where} does not exist")
            elif any(ln.rstrip() == f"## {v}" for ln in text.splitlines()):
                notes.append(f"{v}: already marked rolled back in {where}")
            else:
                notes.append(
                    f"{v}: not marked: {where} has no section for {v} "
                    "(released outside `skillci release`?)"
                )
            after = compat.mark_rolled_back(new_compat, v, reason)
            if after != new_compat:
                notes.append(f"{v}: verified compatibility rows moved to incompatible")
            new_compat = after
        if has_log and text != pkg.text(changelog.CHANGELOG_FILE):
            files[changelog.CHANGELOG_FILE] = text.encode()
        if new_compat != manifest.compatibility:
            files[MANIFEST] = set_compatibility(pkg.text(MANIFEST), new_compat).encode()
            files[compat.COMPAT_FILE] = compat.render_markdown(
                manifest.name, manifest.version, new_compat
            ).encode()
        if not files:
            return None, notes
        if ctx.dry_run:
            return None, [*notes, "dry run: nothing written"]
        tree = ctx.git.tree_with(tip, {f"{state.path}/{k}": v for k, v in files.items()})
        msg = (
            f"skill({state.skill}): mark {', '.join(versions)} rolled back\n\n{reason}\n\n"
            f"Skillci-Rollback: {', '.join(versions)}\n"
        )
        commit = ctx.git.commit_tree(tree, [tip], msg, bot=True)
        try:
            ctx.git.advance_branch(state.base, commit, tip)
        except ConflictError:
            continue
        return commit, notes
    raise ConflictError(f"{state.base} kept moving; could not mark {', '.join(versions)}")


def _rollback_builder(
    skill: str,
    *,
    to: str | None,
    expected_canary: Pointer | None,
    actor: str,
    command: str,
    reason: str,
    analysis_id: str | None,
    ctx: RepoContext,
    out: list[str],
    served: set[str] | None = None,
    force: bool = False,
    forced: list[str] | None = None,
) -> Builder:
    """Builder of a rollback; ``out`` receives the versions it rolled back. A stable target
    outside ``served`` (versions stable once) must carry a passing gate's stamp unless
    ``force``; what force overrode goes to ``forced``."""

    def build(st: ChannelState) -> Draft | None:
        out.clear()
        moves: list[Move] = []
        c = st.canary
        if expected_canary is not None and (
            c is None or c.version != expected_canary.version or c.since != expected_canary.since
        ):
            return None  # that canary was already resolved (maybe by a concurrent run)
        if c is not None:
            moves.append(_move("canary", c, None))
            out.append(c.version)
            st.canary = None
        if to is not None or (c is None and expected_canary is None):
            old = st.stable
            if old is None:
                raise InvalidInputError(f"{skill} has no stable version to roll back")
            target = to
            if target is None:

                def usable(v: str) -> bool:
                    return v != old.version and not (
                        v in st.releases and st.releases[v].rolled_back
                    )

                history = [v for v in st.stable_history if usable(v)]
                if history:
                    target = history[-1]
                else:
                    older = [
                        v for v in release_tags(ctx.git, skill) if _lt(v, old.version) and usable(v)
                    ]
                    if not older:
                        raise InvalidInputError(
                            f"no release before {skill}@{old.version} to roll back to",
                            hint="pass --to VERSION",
                        )
                    target = older[-1]
            if target != old.version:
                info = _release(ctx, st, target)
                if info.rolled_back:
                    raise InvalidInputError(f"{skill}@{target} was itself rolled back")
                if served is not None and target not in served:
                    why, _gid = _gated(ctx, skill, target, force=force, channel="stable")
                    if why and forced is not None:
                        forced.append(why)
                st.releases.setdefault(target, info)
                new = _pointer(st.releases[target])
                moves.append(_move("stable", old, new))
                out.append(old.version)
                if target in st.stable_history:
                    st.stable_history = st.stable_history[: st.stable_history.index(target)]
                st.stable = new
        if not moves:
            return None
        for v in out:
            if v in st.releases:
                st.releases[v] = st.releases[v].model_copy(update={"rolled_back": reason})
        ev = ChannelEvent(
            seq=1,
            type="rollback",
            version=out[0],
            moves=moves,
            actor=actor,
            command=command,
            reason=reason + (f" (forced: {forced[0]})" if forced else ""),
            analysis_id=analysis_id,
            forced=forced[0] if forced else None,
            at=utcnow(),
        )
        return Draft(ev, st)

    return build


def _lt(a: str, b: str) -> bool:
    import semver

    return bool(semver.Version.parse(a) < semver.Version.parse(b))


def rollback(
    ctx: RepoContext,
    skill: str,
    *,
    to: str | None = None,
    reason: str | None = None,
    actor: str,
    force: bool = False,
) -> tuple[ChannelEvent | None, str | None, list[str]]:
    """Roll back: a running canary is cleared; without one (or with ``to``) stable moves to
    ``to`` or the previous stable release — a version never stable before must carry a
    passing gate's stamp unless ``force``. Returns (event, marking commit, what was marked
    or why nothing was, one line per version)."""
    state = _state(ctx, skill)
    why = reason or f"manual rollback by {actor}"
    rolled: list[str] = []
    forced: list[str] = []
    cmd = (
        f"skillci rollback {skill}" + (f" --to {to}" if to else "") + (" --force" if force else "")
    )
    build = _rollback_builder(
        skill,
        to=to,
        expected_canary=None,
        actor=actor,
        command=cmd,
        reason=why,
        analysis_id=None,
        ctx=ctx,
        out=rolled,
        served=ever_stable(ctx, skill),
        force=force,
        forced=forced,
    )
    draft = _store(ctx).append(skill, state, build)
    if draft is None:
        return None, None, []
    note = f"{utcnow():%Y-%m-%d} by {actor} — {why}"
    commit, notes = _mark(ctx, draft.state, rolled, note, why)
    return draft.event, commit, notes


def _mark(
    ctx: RepoContext, state: ChannelState, versions: list[str], note: str, reason: str
) -> tuple[str | None, list[str]]:
    try:
        return mark_rolled_back(ctx, state, versions, note, reason)
    except (GitError, ConflictError) as exc:
        raise type(exc)(
            f"channels moved, but marking {', '.join(versions)} in the changelog failed: "
            f"{exc.message}",
            hint="fix the cause, then run `skillci rollback <skill> --mark-only`",
        ) from None


def mark_pending(ctx: RepoContext, skill: str, *, actor: str) -> list[str]:
    """Mark every rolled-back release in CHANGELOG.md/compatibility (idempotent): repairs a
    rollback whose marking commit failed. Returns the commits written."""
    state = _state(ctx, skill)
    out = []
    for v, info in state.releases.items():
        if info.rolled_back:
            note = f"{utcnow():%Y-%m-%d} by {actor} — {info.rolled_back}"
            commit, _notes = mark_rolled_back(ctx, state, [v], note, info.rolled_back)
            if commit:
                out.append(commit)
    return out


# ---------------------------------------------------------------------------- analyze


def canary_analyze(
    ctx: RepoContext,
    skill: str,
    *,
    auto: bool = False,
    actor: str = BOT,
    now: datetime | None = None,
) -> CanaryAnalysis:
    """Compare canary vs stable production records since the canary started; with ``auto``
    promote on pass and roll back on fail (at most once, whatever runs concurrently)."""
    state = _state(ctx, skill)
    c, s = state.canary, state.stable
    if c is None or s is None:
        raise InvalidInputError(
            f"{skill} has no running canary", hint=f"`skillci canary start {skill}@<version>`"
        )
    policy = ctx.package_at(s.commit, state.path).manifest.canary  # stable's bar, not the canary's
    end = now or datetime.now(UTC)  # full precision: records of this second count
    seen = window(ctx.store, skill, [s.version, c.version], c.since, end)
    result = analyze(
        skill=skill,
        stable=(s.version, seen.samples[s.version]),
        canary=(c.version, seen.samples[c.version]),
        policy=policy,
        window_start=c.since,
        window_end=end,
    )
    result.excluded = dict(sorted(seen.excluded.items()))
    if seen.excluded.get("after_window"):
        result.reasons.append(
            f"{seen.excluded['after_window']} record(s) dated after the analysis time "
            f"{end:%Y-%m-%dT%H:%M:%SZ} were not counted (a deployment clock ahead?)"
        )
    if seen.excluded.get("duplicate_request"):
        result.reasons.append(
            f"{seen.excluded['duplicate_request']} record(s) repeat a request id already "
            "counted (a re-run step?); each request counts once"
        )
    if auto and result.outcome != "inconclusive" and not ctx.dry_run:
        summary = "; ".join(
            f"{ch.name} {ch.value} (limit {ch.threshold})"
            for ch in result.checks
            if ch.passed is not None
        )
        if result.outcome == "pass":
            reason = f"canary passed ({summary})"
            build = _promote_builder(
                skill,
                c,
                actor,
                f"skillci canary analyze {skill} --auto",
                reason,
                result.analysis_id,
            )
            draft = _store(ctx).append(skill, state, build)
            if draft is not None:
                result.action, result.event_seq = "promote", draft.event.seq
        else:
            reason = "canary failed: " + "; ".join(result.reasons)
            rolled: list[str] = []
            build = _rollback_builder(
                skill,
                to=None,
                expected_canary=c,
                actor=actor,
                command=f"skillci canary analyze {skill} --auto",
                reason=reason,
                analysis_id=result.analysis_id,
                ctx=ctx,
                out=rolled,
            )
            draft = _store(ctx).append(skill, state, build)
            if draft is not None:
                result.action, result.event_seq = "rollback", draft.event.seq
                note = f"{utcnow():%Y-%m-%d} by {actor} (analysis {result.analysis_id}) — {reason}"
                _commit, marks = _mark(ctx, draft.state, rolled, note, reason)
                result.note = "; ".join(marks)
        if result.action == "none":
            result.note = "the canary was already resolved by another run; nothing moved"
    if auto and ctx.dry_run and result.outcome != "inconclusive":
        verb = "promote" if result.outcome == "pass" else "roll back"
        result.note = f"dry run: would {verb} {c.version}; nothing moved"
    if not ctx.dry_run:
        ctx.store.put_blob(ANALYSIS_BLOB, result, key=result.analysis_id, replace=True)
    return result


def channel_log(repo: Path, skill: str) -> list[ChannelEvent]:
    """Every channel move of ``skill`` in ``repo`` (``channel log``); a skill with no channel
    log is an invalid-input error naming the skills that have one."""
    from skillci.vcs.git import Git

    store = ChannelStore(Git(repo))
    events = store.log(skill)
    if not events and skill not in store.skills():
        known = store.skills()
        raise InvalidInputError(
            f"{skill} has no channel log in {repo}",
            hint=f"skills with channels: {', '.join(known)}"
            if known
            else f"`skillci channel init {skill}` or release a version first",
        )
    return events


def channel_state(repo: Path, skill: str) -> ChannelState | None:
    """Where ``skill``'s channels point in ``repo`` now, and its releases (``channel show``)."""
    from skillci.vcs.git import Git

    return ChannelStore(Git(repo)).state(skill)
