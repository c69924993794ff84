from __future__ import annotations

from pathlib import Path
from typing import Any

from skillci.patch.apply import Applied, apply_detailed
from skillci.patch.models import Patch
from skillci.skill.package import SkillPackage

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "skills" / "repo-debugger"


def bundled() -> SkillPackage:
    return SkillPackage.from_dir(BUNDLED)


def make_patch(*ops: dict[str, Any], **meta: Any) -> Patch:
    data: dict[str, Any] = {
        "failure_class": "verification_missing",
        "rationale": "students report success without rerunning the test",
        "supporting_runs": ["run-a", "run-b"],
        "author": {"compiler": "test"},
        "ops": list(ops),
    }
    data.update(meta)
    return Patch.model_validate(data)


def run(pkg: SkillPackage, *ops: dict[str, Any], **meta: Any) -> Applied:
    return apply_detailed(pkg, make_patch(*ops, **meta))


def rule(rid: str, *steps: str, **extra: Any) -> dict[str, Any]:
    return {"id": rid, "instruction": {"steps": list(steps) or ["do_one_thing"]}, **extra}


def text(pkg: SkillPackage, rel: str) -> str:
    return pkg.files[rel].decode("utf-8")
