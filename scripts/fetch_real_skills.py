"""Copy the real-skills corpus out of local bare mirrors of its public source repositories.

Usage: python scripts/fetch_real_skills.py MIRRORS_DIR OUT_DIR

MIRRORS_DIR holds one bare git dir per source as ``<owner>+<name>/repo`` (what the
session's ``fetch`` tool brings). Each skill folder is copied byte-exact from the
repository's HEAD (file modes and symlinks kept); files over 1 MB and submodules are
skipped and listed in SOURCES.yaml. Which skills are taken is decided by the rules in
SOURCES below (all of a folder, or a hash sample, licence and size limits), never by
reading the skills; the dev/test split is a hash of the skill id, fixed before any
skill is looked at.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

MAX_FILE = 1_000_000
MAX_SKILL = 2_000_000


@dataclass(frozen=True)
class Source:
    publisher: str
    repo: str
    skills_root: str  # folder whose children with SKILL.md are skills ('' = listed paths)
    licence: str
    licence_file: str  # repository-level licence file copied next to the skills
    sample_mod: int = 1  # keep skills whose id hash % sample_mod == 0
    paths: tuple[str, ...] = ()
    per_skill_licence: str = ""  # file inside the skill whose first line must contain licence


SOURCES = [
    Source(
        "anthropics",
        "anthropics/skills",
        "skills",
        "Apache-2.0",
        "THIRD_PARTY_NOTICES.md",
        per_skill_licence="LICENSE.txt",
    ),
    Source("openai", "openai/skills", "", "Apache-2.0", "", paths=()),
    Source("obra", "obra/superpowers", "skills", "MIT", "LICENSE"),
    Source(
        "k-dense",
        "K-Dense-AI/claude-scientific-skills",
        "scientific-skills",
        "MIT",
        "LICENSE.md",
        sample_mod=4,
    ),
    Source(
        "cangjie",
        "cangjielanguage-sig/CangjieSkills",
        "",
        "MIT",
        "LICENSE",
        paths=(".agents/skills/cangjie-coding",),
    ),
    Source("modelstudio", "modelstudioai/skills", "skills", "Apache-2.0", "LICENSE"),
]


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True
    ).stdout


def tree(gitdir: Path, path: str) -> list[tuple[str, str, str, int, str]]:
    """(mode, type, sha, size, path) for every entry under path at HEAD."""
    out = git(gitdir, "ls-tree", "-r", "-l", "-z", "HEAD", "--", path)
    rows = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, name = entry.split(b"\t", 1)
        mode, kind, sha, size = meta.decode().split()
        rows.append((mode, kind, sha, int(size) if size.isdigit() else -1, name.decode()))
    return rows


def skill_dirs(gitdir: Path, src: Source) -> list[str]:
    if src.paths:
        return list(src.paths)
    names = git(gitdir, "ls-tree", "-r", "--name-only", "-z", "HEAD").decode().split("\0")
    root = src.skills_root
    found = set()
    for name in names:
        if not name.endswith("/SKILL.md"):
            continue
        folder = name[: -len("/SKILL.md")]
        if root:
            rel = folder[len(root) + 1 :] if folder.startswith(root + "/") else None
            if rel is None or "/" in rel:
                continue  # only direct children of the skills root
        elif folder.count("/") != 2:  # openai: skills/<channel>/<skill>
            continue
        found.add(folder)
    return sorted(found)


def bucket(skill_id: str, mod: int) -> int:
    return int(hashlib.sha256(skill_id.encode()).hexdigest(), 16) % mod


def split_of(skill_id: str) -> str:
    return "test" if bucket("split:" + skill_id, 3) == 0 else "dev"


def open_licence(text: bytes) -> bool:
    head = text[:400]
    return b"Apache License" in head or b"MIT License" in head or b"Permission is hereby" in text


def language(text: str) -> str:
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return "zh" if cjk > 200 else "en"


def main(argv: list[str]) -> int:
    mirrors, out = Path(argv[1]), Path(argv[2])
    entries = []
    excluded = []
    for src in SOURCES:
        gitdir = mirrors / src.repo.replace("/", "+") / "repo"
        commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
        pub_dir = out / src.publisher
        if src.licence_file:
            pub_dir.mkdir(parents=True, exist_ok=True)
            lic = git(gitdir, "show", f"{commit}:{src.licence_file}")
            (pub_dir / Path(src.licence_file).name).write_bytes(lic)
        for folder in skill_dirs(gitdir, src):
            name = folder.rsplit("/", 1)[-1]
            skill_id = f"{src.publisher}/{name}"
            if bucket(skill_id, src.sample_mod) != 0:
                continue
            rows = tree(gitdir, folder)
            total = sum(r[3] for r in rows)
            if total > MAX_SKILL:
                excluded.append({"id": skill_id, "reason": f"folder is {total} bytes > 2 MB"})
                continue
            own = [r[4] for r in rows if r[4].count("/") == folder.count("/") + 1]
            lic_files = [p for p in own if p.rsplit("/", 1)[-1].upper().startswith("LICEN")]
            if src.per_skill_licence and not lic_files:
                excluded.append({"id": skill_id, "reason": "no licence file in the folder"})
                continue
            if any(not open_licence(git(gitdir, "show", f"{commit}:{p}")) for p in lic_files):
                excluded.append({"id": skill_id, "reason": "its licence file is not open"})
                continue
            dest = pub_dir / name
            skipped = []
            for mode, kind, sha, size, path in rows:
                rel = path[len(folder) + 1 :]
                if kind == "commit":
                    skipped.append({"path": rel, "reason": "git submodule"})
                    continue
                if size < 0:
                    skipped.append({"path": rel, "reason": "blob absent from the snapshot"})
                    continue
                if size > MAX_FILE:
                    skipped.append({"path": rel, "reason": f"{size} bytes > 1 MB"})
                    continue
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                data = git(gitdir, "cat-file", "blob", sha)
                if mode == "120000":
                    target.symlink_to(data.decode())
                    continue
                target.write_bytes(data)
                target.chmod(0o755 if mode == "100755" else 0o644)
            skill_md = (dest / "SKILL.md").read_text(encoding="utf-8", errors="replace")
            entry = {
                "id": skill_id,
                "dir": f"{src.publisher}/{name}",
                "repo": src.repo,
                "commit": commit,
                "path": folder,
                "licence": src.licence,
                "language": language(skill_md),
                "split": split_of(skill_id),
            }
            if skipped:
                entry["skipped_files"] = skipped
            entries.append(entry)
    doc = {
        "schema_version": 1,
        "note": (
            "Real public Agent Skills, copied byte-exact by scripts/fetch_real_skills.py. "
            "split = sha256('split:' + id) % 3 == 0 -> test (test-only), else dev."
        ),
        "skills": entries,
        "excluded": excluded,
    }
    (out / "SOURCES.yaml").write_text(
        yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
    )
    print(f"{len(entries)} skills, {len(excluded)} excluded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
