"""The package structure docs/architecture.md describes, checked against the code.

Every ``import`` in ``skillci/`` (module level and inside functions, parsed with ``ast``)
must be allowed by the table in docs/architecture.md; packages form no import cycle; the
pure core does no I/O imports; every package is named in the document and opens with a
docstring saying what it may import; no module imports a private name of another module;
functions anywhere in skillci/ stay under 100 lines or say why.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "skillci"
DOC = ROOT / "docs" / "architecture.md"

PURE = ("skill", "patch", "analyze", "gate", "graders", "present")
IO_MODULES = ("subprocess", "socket", "requests", "httpx", "urllib.request", "docker", "litellm")
IO_MODULES += ("github",)
MAX_LINES = 100


@cache
def nodes_of(path: Path) -> tuple[ast.AST, ...]:
    """Every node of ``path``'s syntax tree, parsed once per test process."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def units() -> list[str]:
    """Packages (dirs with ``__init__.py``) and top-level modules of skillci."""
    out = [p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()]
    out += [p.stem for p in PKG.glob("*.py") if p.stem != "__init__"]
    return sorted(out)


def unit_of(path: Path) -> str:
    rel = path.relative_to(PKG).parts
    return rel[0] if len(rel) > 1 else rel[0].removesuffix(".py")


def imported_units(node: ast.AST) -> Iterator[tuple[str, int]]:
    """The skillci units an import statement names (``skillci`` = the package root)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        assert node.level == 0, "absolute imports only"
        if node.module == "skillci":
            names = [f"skillci.{a.name}" for a in node.names]
        elif node.module:
            names = [node.module]
    for name in names:
        parts = name.split(".")
        if parts[0] != "skillci":
            continue
        if len(parts) == 1:
            yield "skillci", node.lineno
        elif (PKG / parts[1]).is_dir() or (PKG / f"{parts[1]}.py").is_file():
            yield parts[1], node.lineno
        else:
            yield "skillci", node.lineno  # a name from the root, e.g. __version__


def import_graph() -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> ``file:line`` of each import."""
    graph: dict[str, dict[str, list[str]]] = {u: {} for u in units()}
    for f in sorted(PKG.rglob("*.py")):
        if f == PKG / "__init__.py":
            continue
        src = unit_of(f)
        for node in nodes_of(f):
            for dst, line in imported_units(node):
                if dst != src:
                    where = f"{f.relative_to(ROOT)}:{line}"
                    graph[src].setdefault(dst, []).append(where)
    return graph


def allowed_table() -> dict[str, set[str]]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- allowed-imports:start -->")[1].split("<!-- allowed-imports:end -->")[0]
    table: dict[str, set[str]] = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        table[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", cells[2]))
    return table


def test_the_table_names_every_package_and_only_real_ones() -> None:
    table = allowed_table()
    assert set(units()) - {"runtime", "schemas"} <= set(table), "add the package to the table"
    assert set(table) <= set(units()), "the table names a package that does not exist"
    for allowed in table.values():
        assert allowed <= set(units()) | {"skillci"}


def test_every_import_is_allowed_by_the_table() -> None:
    table = allowed_table()
    bad = [
        f"{src} -> {dst} ({', '.join(where[:3])})"
        for src, deps in import_graph().items()
        for dst, where in deps.items()
        if dst not in table.get(src, set())
    ]
    assert not bad, "imports not allowed by docs/architecture.md:\n" + "\n".join(bad)


#: What ``cli`` may import (design 420): flows do the work; errors, presentation, atomic
#: writes of ``--out`` files and the version string are all a command needs besides.
CLI_ALLOWED = {"errors", "flows", "fsutil", "present", "version"}


def test_the_cli_imports_flows_not_the_domain() -> None:
    """cli -> flows only (plus errors, present, fsutil, version): the table's row for
    ``cli`` is held to that, so a domain import in cli/ fails the import check above."""
    assert allowed_table()["cli"] == CLI_ALLOWED
    assert set(import_graph()["cli"]) <= CLI_ALLOWED


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as a path ending where it starts), or None."""
    done: set[str] = set()

    def visit(u: str, stack: list[str]) -> list[str] | None:
        if u in stack:
            return [*stack[stack.index(u) :], u]
        if u in done:
            return None
        for v in sorted(graph.get(u, ())):
            found = visit(v, [*stack, u])
            if found:
                return found
        done.add(u)
        return None

    for u in sorted(graph):
        found = visit(u, [])
        if found:
            return found
    return None


def test_packages_form_no_import_cycle() -> None:
    graph = {src: set(deps) - {"skillci"} for src, deps in import_graph().items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_pure_core_imports_no_io() -> None:
    bad = []
    for pkg in PURE:
        for f in sorted((PKG / pkg).rglob("*.py")):
            for node in nodes_of(f):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                for n in names:
                    if any(n == m or n.startswith(m + ".") for m in IO_MODULES):
                        bad.append(f"{f.relative_to(ROOT)}:{node.lineno} imports {n}")
    assert not bad, "\n".join(bad)


def test_every_package_says_what_it_may_import() -> None:
    missing = []
    for u in units():
        init = PKG / u / "__init__.py"
        if not init.is_file():
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if "may import" not in doc.lower():
            missing.append(u)
    assert not missing, f"packages whose __init__ docstring lacks 'May import': {missing}"
    assert all(u in DOC.read_text(encoding="utf-8") for u in units())


def long_in(source: str) -> dict[str, bool]:
    """function name -> whether it says why it is long, for functions over MAX_LINES."""
    lines = source.splitlines()
    out: dict[str, bool] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if end - node.lineno + 1 > MAX_LINES:
                body = lines[node.lineno - 1 : end]
                out[node.name] = any("# long:" in line for line in body)
    return out


def long_functions() -> dict[tuple[str, str], bool]:
    """(file, function) -> whether it says why it is long, over every module of skillci/."""
    return {
        (f.relative_to(PKG).as_posix(), name): why
        for f in sorted(PKG.rglob("*.py"))
        for name, why in long_in(f.read_text(encoding="utf-8")).items()
    }


def test_functions_stay_short_or_say_why() -> None:
    """Every package, not only cli/ and flows/: a function over MAX_LINES lines carries a
    ``# long: <reason>`` comment (on its ``def`` line or in its body)."""
    unexplained = sorted(k for k, why in long_functions().items() if not why)
    assert not unexplained, f"over {MAX_LINES} lines without a '# long:' comment: {unexplained}"


def test_the_size_check_finds_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    assert long_in(f"def f():\n{body}") == {"f": False}
    assert long_in(f"def f():  # long: a table\n{body}") == {"f": True}
    assert long_in(f"async def g():\n{body[: -len('    x99 = 99') - 1]}") == {}


def private_imports() -> set[tuple[str, str, str]]:
    """(file, module, name) of each ``from skillci.x import _name`` in skillci/."""
    out = set()
    for f in sorted(PKG.rglob("*.py")):
        for node in nodes_of(f):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skillci"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        out.add((f.relative_to(PKG).as_posix(), node.module or "", a.name))
    return out


def test_no_module_imports_a_private_name_of_another() -> None:
    """A feature family that spans modules (bench: flows/bench*, cli/bench; the release
    family: cli/release, canary, channel, rollback, flows/release, canary) shares public
    names: a name another module needs is public where it lives."""
    found = sorted(private_imports())
    assert not found, f"private names imported from another module (make them public): {found}"


def test_the_presentation_is_apart_from_the_decisions() -> None:
    """gate/ decides, present/ renders (design 415): the gate imports nothing from present/
    (which would make the two one package), present/ reads the gate's shapes."""
    graph = import_graph()
    assert "present" not in graph["gate"], graph["gate"].get("present")
    assert "gate" in graph["present"]


def test_no_module_imports_its_own_package_init() -> None:
    """``from skillci.<own package> import x`` runs back through the package's
    ``__init__`` (a package-init cycle when the init imports the module): name the module,
    ``import skillci.<package>.<module> as x``."""
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).parts
        if len(rel) < 2 or f.name == "__init__.py":
            continue
        own = f"skillci.{rel[0]}"
        for node in nodes_of(f):
            if isinstance(node, ast.ImportFrom) and node.module == own:
                bad.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "imports from the own package's __init__:\n" + "\n".join(bad)


def _config_only_base(node: ast.ClassDef) -> bool:
    """A class on ``BaseModel`` whose body is only a docstring and ``model_config``."""
    bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
    body = [
        n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    return (
        bases == {"BaseModel"}
        and len(body) == 1
        and isinstance(body[0], ast.Assign)
        and [getattr(t, "id", "") for t in body[0].targets] == ["model_config"]
    )


def test_one_set_of_pydantic_bases() -> None:
    """The strict/frozen/open bases live in skillci/basemodels.py, not in private copies."""
    copies = [
        f"{f.relative_to(ROOT)}:{node.lineno} {node.name}"
        for f in sorted(PKG.rglob("*.py"))
        if f != PKG / "basemodels.py"
        for node in nodes_of(f)
        if isinstance(node, ast.ClassDef) and _config_only_base(node)
    ]
    assert not copies, "use skillci.basemodels instead of:\n" + "\n".join(copies)
    src = ast.parse((PKG / "basemodels.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.ClassDef) and _config_only_base(n) for n in ast.walk(src))
