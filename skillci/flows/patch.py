"""``skillci patch check|apply|diff|bump``: read the patch, the skill and the untrusted texts
(a JSONL file, the trace store's supporting runs), then check, apply, diff or bump. The CLI
renders what these return."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import skillci.skill.yamlio as yamlio
from skillci.errors import InvalidInputError, PatchError
from skillci.fsutil import load_json
from skillci.patch.apply import apply_detailed
from skillci.patch.check import CheckReport, check
from skillci.patch.diff import diff_applied
from skillci.patch.guard import DEFAULT_ALLOWED_HOSTS, GuardConfig, UntrustedText
from skillci.patch.models import Patch, load_patch
from skillci.patch.transaction import DirResult, apply_to_dir, recover
from skillci.patch.version import ChangeList, change_list
from skillci.skill.package import SkillPackage


@dataclass(frozen=True)
class PatchInputs:
    """Where a patch command reads from: the patch, the skill dir, the untrusted texts."""

    patch_file: Path
    skill: Path
    untrusted: Path | None = None
    trace_store: Path | None = None
    min_copy: int = 40
    allow_host: tuple[str, ...] = ()
    #: model routes each asked for a second opinion on the free text (designs 407, 458)
    guard_models: tuple[str, ...] = ()

    def config(self) -> GuardConfig:
        hosts = list(self.allow_host) if self.allow_host else list(DEFAULT_ALLOWED_HOSTS)
        return GuardConfig(min_copy_chars=self.min_copy, allowed_hosts=hosts)


def read_patch(path: Path) -> Patch:
    if not path.is_file():
        raise PatchError(
            "patch file not found", file=str(path), hint="pass the path of a PATCH.yaml"
        )
    return load_patch(yamlio.decode(path.read_bytes(), str(path)), str(path))


def read_untrusted(path: Path | None) -> list[UntrustedText]:
    """``--untrusted``: one JSON string or ``{"text": ...}`` object per line."""
    if path is None:
        return []
    if not path.is_file():
        raise InvalidInputError("untrusted-text file not found", file=str(path))
    out: list[UntrustedText] = []
    text = yamlio.decode(path.read_bytes(), str(path))
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = load_json(line, file=path, line=n)
            out.append(
                UntrustedText(text=data)
                if isinstance(data, str)
                else UntrustedText.model_validate(data)
            )
        except ValueError as exc:
            raise InvalidInputError(
                f"not a JSON string or an object with `text`: {str(exc).splitlines()[0]}",
                file=str(path),
                line=n,
                hint="one JSON value per line",
            ) from None
    return out


def gather_untrusted(
    patch: Patch, untrusted: Path | None, trace_store: Path | None
) -> list[UntrustedText]:
    """The ``--untrusted`` texts, plus the untrusted events of the patch's supporting runs
    in ``trace_store``."""
    texts = read_untrusted(untrusted)
    if trace_store is not None:
        from skillci.patch.untrusted import from_record
        from skillci.trace.store import TraceStore

        store = TraceStore(trace_store)
        for run_id in patch.supporting_runs:
            texts += from_record(store.get(run_id))
    return texts


def load_skill(skill: Path) -> SkillPackage:
    recover(Path(skill).absolute())  # a crashed apply is finished or undone before we read
    return SkillPackage.from_dir(skill)


def check_patch(inp: PatchInputs) -> CheckReport:
    patch = read_patch(inp.patch_file)
    pkg = load_skill(inp.skill)
    untrusted = gather_untrusted(patch, inp.untrusted, inp.trace_store)
    from skillci.flows.guard_model import guard_models

    opinions = [
        m.opinion(patch, untrusted_texts=len(untrusted))
        for m in guard_models(inp.guard_models, inp.trace_store)
    ]
    report, _ = check(pkg, patch, untrusted, inp.config(), opinions=opinions)
    return report


def apply_patch(inp: PatchInputs, *, approved: bool, dry_run: bool) -> DirResult:
    patch = read_patch(inp.patch_file)
    untrusted = gather_untrusted(patch, inp.untrusted, inp.trace_store)
    return apply_to_dir(
        inp.skill, patch, untrusted, inp.config(), approved=approved, dry_run=dry_run
    )


def diff_patch(patch_file: Path, skill: Path, context: int = 3) -> str:
    return diff_applied(apply_detailed(load_skill(skill), read_patch(patch_file)), context)


def bump_patch(patch_file: Path, skill: Path) -> ChangeList:
    return change_list(apply_detailed(load_skill(skill), read_patch(patch_file)))


__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "CheckReport",
    "PatchInputs",
    "apply_patch",
    "bump_patch",
    "check_patch",
    "diff_patch",
    "gather_untrusted",
    "read_patch",
    "read_untrusted",
]
