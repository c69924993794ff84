"""``skillci skill``: list, lint, render, diff, import, export, migrate, schemas."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from skillci.cli.choices import Harness
from skillci.cli.output import console, emit_json
from skillci.cli.tables import Column, fit_table, print_table
from skillci.errors import LintFailed, SkillciError
from skillci.flows.skill_files import (
    SKILL_MD,
    ensure_empty,
    export_skill,
    import_skill,
    lint_paths,
    migrate_skill,
    render_skill,
    write_schemas,
    write_tree,
)

app = typer.Typer(help="Inspect and convert skill packages.", no_args_is_help=True)


@app.command("lint")
def lint_cmd(
    paths: list[Path] = typer.Argument(..., help="Skill package directories."),
    json_out: bool = typer.Option(False, "--json", help="Print findings as JSON."),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Everything the Agent Skills spec's validator refuses is an error, including "
        "fields only some harnesses read.",
    ),
    warnings_fail: bool = typer.Option(
        False, "--warnings-fail", help="Any warning fails too (the publisher's prose included)."
    ),
) -> int:
    """Report everything wrong with skill packages (exit 2 on errors)."""
    reports = lint_paths(paths, strict=strict)
    errors = sum(r.errors for r in reports)
    warnings = sum(r.warnings for r in reports)
    if json_out:
        emit_json({"packages": reports, "errors": errors, "warnings": warnings})
    else:
        for r in reports:
            for f in r.findings:
                style = "red" if f.severity == "error" else "yellow"
                console.print(f"[{style}]{escape(f.format())}[/{style}]", markup=True)
        console.print(f"{len(reports)} package(s): {errors} error(s), {warnings} warning(s)")
    if errors or (warnings_fail and warnings):
        if not json_out:
            raise LintFailed(f"lint failed: {errors} error(s), {warnings} warning(s)")
        return int(LintFailed.exit_code)
    return 0


@app.command("list")
def list_cmd(
    only: str = typer.Option(
        "", "--only", help="Comma-separated skills to keep (checked); empty = every one."
    ),
    repo: Path = typer.Option(Path("."), "--repo", help="Repository root."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> int:
    """Skill folders with skillci metadata at HEAD (the scheduled workflows' matrix).

    Also writes ``skills=<JSON list>`` to $GITHUB_OUTPUT under GitHub Actions."""
    import json

    from skillci.flows.actions import set_output
    from skillci.flows.context import RepoContext
    from skillci.flows.skills import select_skills

    ctx = RepoContext.open(repo)
    dirs = select_skills(ctx, [s.strip() for s in only.split(",") if s.strip()])
    set_output("skills", json.dumps(dirs))
    if json_out:
        emit_json({"skills": dirs})
    else:
        for d in dirs:
            console.print(d, markup=False)
        if not dirs:
            console.print("no skill with skillci metadata (run `skillci init`)")
    return 0


@app.command("render")
def render_cmd(
    path: Path = typer.Argument(..., help="Skill package directory."),
    harness: Harness = typer.Option("folder", "--harness", help="The harness to render for."),
    out: Path | None = typer.Option(None, "--out", help="Write the rendered files here."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Render what a harness loads at start-up and on demand, with token counts."""
    rendered = render_skill(path, harness)
    if out is not None:
        ensure_empty(out, force)
        write_tree({f.path: f.content for f in rendered.files}, out)
    if json_out:
        emit_json(
            {
                "name": rendered.name,
                "version": rendered.version,
                "harness": harness,
                "package_hash": rendered.package_hash,
                "bootstrap_tokens": rendered.bootstrap_tokens,
                "total_tokens": rendered.total_tokens,
                "out": str(out) if out else None,
                "files": [
                    {"path": f.path, "kind": f.kind, "tokens": f.tokens, "when": f.when}
                    for f in rendered.files
                ],
            }
        )
        return 0
    table = fit_table(
        [
            Column("file", key=True, no_wrap=True),
            Column("kind", key=True, no_wrap=True),
            Column("tokens", key=True, no_wrap=True, justify="right"),
            Column("load when", drop_rank=1),
        ],
        [
            [
                escape(f.path),
                f.kind,
                str(f.tokens) if f.kind != "bundled" else "-",
                escape(f.when or ""),
            ]
            for f in rendered.files
        ],
        title=escape(f"{rendered.name} {rendered.version} for harness {harness}"),
    )
    print_table(table)
    console.print(
        f"bootstrap {rendered.bootstrap_tokens} tokens, everything loadable {rendered.total_tokens} tokens"
        + (f"; written to {out}" if out else "")
    )
    return 0


@app.command("diff")
def diff_cmd(
    base: str = typer.Argument(..., help="Base revision (branch, tag, sha)."),
    head: str = typer.Argument("HEAD", help="Head revision."),
    skill: str | None = typer.Option(
        None, "--skill", help="Skill folder or name (default: the repository's only skill)."
    ),
    repo: Path = typer.Option(Path("."), "--repo", help="Repository root."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> int:
    """Which sections and files of a skill changed between two revisions, with tokens."""
    from skillci.flows.context import RepoContext
    from skillci.flows.skill_diff import diff_refs

    res = diff_refs(RepoContext.open(repo), base, head, skill)
    if json_out:
        emit_json(res)
        return 0
    d = res.diff
    console.print(
        f"{res.skill_dir}: {base} -> {head}" + (f" (release bump: {res.bump})" if res.bump else ""),
        markup=False,
    )
    if d.empty:
        console.print("no change to SKILL.md, prose or bundled files", markup=False)
    for field in d.frontmatter:
        console.print(f"  frontmatter  {field} changed", markup=False)
    moved = [s for s in d.sections if s.change == "moved" and s.from_file == SKILL_MD != s.file]
    if moved:
        console.print(
            f"  {len(moved)} section(s) moved to on-demand files: "
            + ", ".join(sorted({s.file for s in moved})),
            markup=False,
        )
    for s in d.sections:
        where = f" from {s.from_file} § {s.from_section}" if s.change == "moved" else ""
        console.print(
            f"  section      {s.file} § {s.section}: {s.change}{where} "
            f"({s.tokens_before} -> {s.tokens_after} tokens)",
            markup=False,
        )
    for f in d.files:
        if f.path == SKILL_MD:
            continue
        size = "binary" if f.binary else f"{f.tokens_before} -> {f.tokens_after} tokens"
        was = f" from {f.from_path}" if f.from_path else ""
        console.print(f"  file         {f.path} ({f.kind}): {f.change}{was} ({size})", markup=False)
    tb, ta = d.skill_md_tokens
    console.print(f"SKILL.md tokens: {tb} -> {ta}", markup=False)
    return 0


@app.command("import")
def import_cmd(
    src: Path = typer.Argument(..., help="A plain skill folder, or a SkillsBench task dir."),
    out: Path | None = typer.Option(None, "--out", help="Package dir (default skills/<name>)."),
    model_family: str = typer.Option(
        "unspecified", "--model-family", help="Model family the skill was written for."
    ),
    model: str | None = typer.Option(
        None, "--model", help="Target student route, e.g. sim/student."
    ),
    harness: str = typer.Option("any", "--harness", help="Target agent harness."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out."),
    seed_triggers: bool = typer.Option(
        False,
        "--seed-triggers",
        help="Also write skillci/evals/triggers.yaml seeded from the description.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be written."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Turn a plain SKILL.md skill into a skillci package (files kept byte-exact)."""
    imported = import_skill(
        src,
        model_family=model_family,
        model=model,
        harness=harness,
        seed_triggers=seed_triggers,
    )
    pkg, folder, fmt, notes = imported.package, imported.folder, imported.format, imported.notes
    name = pkg.manifest.name
    dest = out or Path("skills") / name
    if not dry_run:
        ensure_empty(dest, force)
        write_tree(dict(pkg.files), dest, pkg.executable)
    result = {
        "name": name,
        "format": fmt,
        "source": str(folder),
        "out": str(dest),
        "files": sorted(pkg.files),
        "warnings": notes,
        "dry_run": dry_run,
    }
    if json_out:
        emit_json(result)
    else:
        for note in notes:
            console.print(f"warning: {note}", markup=False)
        verb = "would write" if dry_run else "wrote"
        console.print(
            f"{verb} package {name} ({len(pkg.files)} files, manifest generated) to {dest}"
        )
    return 0


@app.command("export")
def export_cmd(
    path: Path = typer.Argument(..., help="Skill package directory."),
    out: Path = typer.Option(..., "--out", help="Plain skill folder to write."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would change; change nothing."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Render a package back to a plain skill folder (Anthropic format)."""
    files, executable = export_skill(path)
    if not dry_run:
        ensure_empty(out, force)
        write_tree(files, out, executable)
    if json_out:
        emit_json({"out": str(out), "files": sorted(files), "dry_run": dry_run})
    else:
        console.print(f"{'would write' if dry_run else 'wrote'} {len(files)} files to {out}")
    return 0


@app.command("migrate")
def migrate_cmd(
    path: Path = typer.Argument(..., help="An old-layout package (manifest.yaml, rules/ …)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the moves; change nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Move an old-layout package to skillci.yaml + skillci/ (docs/design/140)."""
    m = migrate_skill(path, dry_run=dry_run)
    if json_out:
        emit_json(
            {"path": str(path), "moves": m.moves, "rewritten": m.rewritten, "dry_run": dry_run}
        )
    elif not m.changed:
        console.print(f"{path} is already in the current layout")
    else:
        for old, new in m.moves.items():
            console.print(f"{old} -> {new}")
        for rel in m.rewritten:
            console.print(f"rewrote references to moved files in {rel}")
        verb = "would move" if dry_run else "moved"
        console.print(f"{verb} {len(m.moves)} file(s) of {path} to the skillci/ layout")
    return 0


@app.command("schemas")
def schemas_cmd(
    out: Path = typer.Option(Path("schemas"), "--out", help="Directory for the JSON Schemas."),
    check: bool = typer.Option(False, "--check", help="Fail if the files differ from the models."),
) -> int:
    """Export (or check) the JSON Schemas of every saved shape."""
    stale = write_schemas(out, check=check)
    if stale:
        raise SkillciError(
            f"schemas out of date: {', '.join(stale)}", hint="run `skillci skill schemas`"
        )
    console.print("schemas up to date" if check else f"wrote schemas to {out}")
    return 0
