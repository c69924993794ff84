"""The release, dry run (design 350): what .github/workflows/publish.yml does on a tag, against
a package index on loopback instead of PyPI.

On a clone of this checkout: ``scripts/release.py cut`` the next patch version, commit, tag,
``scripts/release.py check --tag`` (the workflow's first step, and the release notes), then
``scripts/ci_wheel.sh`` (the workflow's build step) with ``SKILLCI_WHEEL_INDEX``: it builds
the sdist and the wheel, uploads both with twine (what pypa/gh-action-pypi-publish runs) to a
real pypiserver on 127.0.0.1, installs ``skillci==X.Y.Z`` into a fresh venv with
``pip install --index-url …/simple/`` and nothing else (no pip configuration, find-links or
cache), and runs ``skillci demo`` from it. The index also holds skillci's dependencies,
repacked as wheels from this test's own venv, so nothing is fetched beyond loopback.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from importlib.metadata import Distribution, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT
from tests.integration.loop.conftest import git

# measured 2026-12-03: 848 s on a 2-core machine shared by ~8 engineers (setup, repacking 81
# dependency wheels: 55 s; the demo from the installed wheel is most of the rest)
pytestmark = pytest.mark.slow


def dependency_closure(name: str) -> list[Distribution]:
    """The installed distributions ``name`` needs (markers evaluated here, extras followed)."""
    found: dict[str, Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        dist_name, extras = todo.pop()
        if (canonicalize_name(dist_name), extras) in done:
            continue
        done.add((canonicalize_name(dist_name), extras))
        dist = distribution(dist_name)
        if canonicalize_name(dist_name) != canonicalize_name(name):
            found[canonicalize_name(dist_name)] = dist
        for line in dist.requires or []:
            req = Requirement(line)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return sorted(found.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def repack(dist: Distribution, out: Path) -> Path:
    """A wheel of an installed distribution: its files under site-packages and its
    dist-info (without pip's INSTALLER/REQUESTED/direct_url.json), with a fresh RECORD.
    Console scripts come back from entry_points.txt when pip installs it."""
    tags = [
        t.split(":", 1)[1].strip()
        for t in (dist.read_text("WHEEL") or "").splitlines()
        if t.startswith("Tag:")
    ]
    assert tags, f"{dist.metadata['Name']}: no WHEEL tags (not installed from a wheel)"
    parts = [sorted({t.split("-")[i] for t in tags}) for i in range(3)]
    tag = "-".join(".".join(p) for p in parts)
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    wheel = out / f"{name}-{dist.version}-{tag}.whl"
    skip = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
    record_name = ""
    rows: list[tuple[str, str, str]] = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for rel in dist.files or []:
            posix = rel.as_posix()
            if posix.startswith("..") or "__pycache__" in rel.parts:
                continue
            if ".dist-info/" in posix and rel.name in skip:
                record_name = record_name or f"{posix.rsplit('/', 1)[0]}/RECORD"
                continue
            src = Path(str(dist.locate_file(rel)))
            if not src.is_file():
                continue
            data = src.read_bytes()
            zf.writestr(posix, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append((posix, f"sha256={digest.decode()}", str(len(data))))
        assert record_name, f"{dist.metadata['Name']}: no dist-info in its RECORD"
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([*rows, (record_name, "", "")])
        zf.writestr(record_name, buf.getvalue())
    return wheel


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A pypiserver on 127.0.0.1 that takes uploads (no auth) and never falls back to PyPI,
    holding skillci's dependencies: (url, its package dir, its request log)."""
    packages = tmp_path / "index"
    packages.mkdir()
    deps = dependency_closure("skillci")
    assert {"pydantic", "litellm", "typer"} <= {canonicalize_name(d.metadata["Name"]) for d in deps}
    for dist in deps:
        repack(dist, packages)
    port, log = free_port(), tmp_path / "pypiserver.log"
    cmd = [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port)]
    cmd += ["-a", ".", "-P", ".", "--disable-fallback", "-v", "--log-file", str(log), str(packages)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/simple/", timeout=5) as r:
                    assert r.status == 200
                break
            except OSError:
                assert proc.poll() is None, log.read_text() if log.exists() else "exited"
                assert time.monotonic() < deadline, "pypiserver did not answer in 60 s"
                time.sleep(0.2)
        yield url, packages, log
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.timeout(2400)
def test_tag_build_upload_install_from_the_index_and_demo(
    tmp_path: Path, index: tuple[str, Path, Path]
) -> None:
    url, packages, log = index
    clone = tmp_path / "skillci"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    init = (clone / "skillci" / "__init__.py").read_text()
    major, minor, patch = re.findall(r'__version__ = "(\d+)\.(\d+)\.(\d+)"', init)[0]
    version = f"{major}.{minor}.{int(patch) + 1}"
    changelog = clone / "CHANGELOG.md"
    changelog.write_text(
        changelog.read_text().replace(
            "## [Unreleased]\n", "## [Unreleased]\n\n- The release dry run.\n", 1
        )
    )
    release = [sys.executable, str(clone / "scripts" / "release.py")]
    subprocess.run([*release, "cut", version], check=True, timeout=60, capture_output=True)
    git(clone, "commit", "-qam", f"release {version}")
    git(clone, "tag", f"v{version}")
    head = git(clone, "rev-parse", "HEAD").strip()
    notes = tmp_path / "notes.md"
    subprocess.run(
        [*release, "check", "--tag", f"v{version}", "--notes", str(notes)],
        check=True,
        timeout=60,
    )
    assert "- The release dry run.\n" in notes.read_text()

    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    env |= {"SKILLCI_WHEEL_INDEX": url, "SKILLCI_BUILD_PYTHON": sys.executable}
    proc = subprocess.run(
        ["bash", str(clone / "scripts" / "ci_wheel.sh"), str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert f"ci_wheel: uploaded skillci {version} to {url}" in proc.stderr
    assert f"ci_wheel: skillci {version} (commit {head[:12]})" in proc.stderr
    assert "ci_wheel: OK: skillci demo ran from the wheel" in proc.stderr
    # twine's upload landed in the index, and pip fetched skillci from there
    uploaded = {p.name for p in packages.glob("skillci-*")}
    assert uploaded == {f"skillci-{version}.tar.gz", f"skillci-{version}-py3-none-any.whl"}
    requests = log.read_text()
    assert "/simple/skillci/" in requests
    assert f"skillci-{version}-py3-none-any.whl" in requests
