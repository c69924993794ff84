"""``__all__`` of the analyze and compile modules names exactly their public definitions."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import skillci.analyze
import skillci.compile

MODULES = [
    m.name
    for pkg in (skillci.analyze, skillci.compile)
    for m in pkgutil.walk_packages(pkg.__path__, prefix=pkg.__name__ + ".")
]


def test_every_module_is_listed() -> None:
    assert len(MODULES) >= 25


@pytest.mark.parametrize("name", MODULES)
def test_all_matches_public_definitions(name: str) -> None:
    mod = importlib.import_module(name)
    exported = set(mod.__all__)
    assert all(hasattr(mod, n) for n in exported), exported - set(dir(mod))
    defined = {
        n
        for n, obj in vars(mod).items()
        if not n.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", None) == name
    }
    assert defined <= exported, f"public but not in __all__: {sorted(defined - exported)}"


@pytest.mark.parametrize("pkg", [skillci.analyze, skillci.compile])
def test_package_exports_resolve(pkg: object) -> None:
    assert all(hasattr(pkg, n) for n in pkg.__all__)  # type: ignore[attr-defined]


def test_pure_packages_do_not_import_io_modules() -> None:
    """analyze/ is pure: no subprocess, network, git or litellm imports."""
    banned = ("subprocess", "socket", "httpx", "git", "litellm", "requests", "urllib.request")
    for m in (x for x in MODULES if x.startswith("skillci.analyze.")):
        src = inspect.getsource(importlib.import_module(m))
        for b in banned:
            assert (
                f"import {b}\n" not in src and f"from {b} " not in src and f"import {b} " not in src
            ), (m, b)
