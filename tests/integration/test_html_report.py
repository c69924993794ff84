"""`skillci report GATE_ID --html DIR` end to end: a gate report and its run records in a real
trace store, the page written by ``write_html`` (and by the CLI), then loaded in headless
Chromium: scripts ran, no console message, the verdict is in the DOM and on the screenshot,
and hostile record text stayed text.

The tests that load the page need Debian's ``chromium`` (``apt-get install -y chromium``): they
are marked ``chromium`` and skip without it, or FAIL under ``SKILLCI_REQUIRE_SERVICES`` (as in CI).
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.flows.context import RepoContext
from skillci.flows.gate import GATE_BLOB, load_report
from skillci.flows.html_report import write_html
from skillci.fsutil import atomic_write_text
from skillci.present.html import render_html
from skillci.present.html.markup import anchor
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore
from tests.unit.gate.report_fixture import IMG, SCRIPT, Built, build_report

CHROMIUM_INSTALL = "apt-get update && apt-get install -y chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
)
REJECT_RED = (0xCF, 0x22, 0x2E)  # .verdict.reject background
MISSING_RUN = "run-missing-from-store-0"


# ---------------------------------------------------------------------------- helpers


def chromium_exe() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail(
            "chromium is not installed: the HTML report is tested in headless Chromium. "
            f"Install it with `{CHROMIUM_INSTALL}` (Debian/Ubuntu).",
            pytrace=False,
        )
    return exe


def chromium(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium once with a fresh profile; fail with its stderr if it fails."""
    exe = chromium_exe()
    profile = tempfile.mkdtemp(prefix="profile-", dir=work)
    env = {
        **os.environ,
        "HOME": str(work),
        "XDG_CONFIG_HOME": str(work / "xdg-config"),
        "XDG_CACHE_HOME": str(work / "xdg-cache"),
    }
    proc = subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, f"chromium exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc


def console_messages(stderr: str) -> list[str]:
    """Console output of the page (any level: our page logs nothing) and uncaught errors.

    Chromium logs them as ``[pid:tid:time:INFO:CONSOLE:line] "text", source: url (line)``.
    """
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


@dataclass
class Png:
    width: int
    height: int
    rows: list[bytes]
    channels: int

    def colours(self) -> collections.Counter[tuple[int, int, int]]:
        c: collections.Counter[tuple[int, int, int]] = collections.Counter()
        n = self.channels
        for row in self.rows:
            c.update(zip(row[0::n], row[1::n], row[2::n], strict=True))
        return c

    def rows_with(self, colour: tuple[int, int, int], min_count: int, first: int) -> list[int]:
        """Indexes of the first ``first`` rows with at least ``min_count`` pixels of ``colour``."""
        n, px = self.channels, bytes(colour)
        out = []
        for y, row in enumerate(self.rows[:first]):
            hits = sum(row[i : i + 3] == px for i in range(0, len(row), n))
            if hits >= min_count:
                out.append(y)
        return out


def _add_bytes(x: bytes, y: bytes) -> bytes:
    """Bytewise (x + y) mod 256 on whole rows at once (SIMD-within-a-register)."""
    n = len(x)
    a, b = int.from_bytes(x, "big"), int.from_bytes(y, "big")
    lo = int.from_bytes(b"\x7f" * n, "big")
    hi = int.from_bytes(b"\x80" * n, "big")
    return (((a & lo) + (b & lo)) ^ ((a ^ b) & hi)).to_bytes(n, "big")


def _unfilter(kind: int, cur: bytes, prev: bytes, bpp: int) -> bytes:
    if kind == 0:
        return cur
    if kind == 2:
        return _add_bytes(cur, prev)
    out = bytearray(cur)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        if kind == 1:
            pred = a
        elif kind == 3:
            pred = (a + prev[i]) >> 1
        else:  # 4: Paeth
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        out[i] = (out[i] + pred) & 0xFF
    return bytes(out)


def read_png(path: Path) -> Png:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) with zlib only."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    assert ihdr is not None
    width, height, depth, colour_type, _, _, interlace = ihdr
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, f"unexpected PNG {ihdr}"
    bpp = 3 if colour_type == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    assert len(raw) == height * (stride + 1)
    rows, prev = [], bytes(stride)
    for y in range(height):
        off = y * (stride + 1)
        prev = _unfilter(raw[off], raw[off + 1 : off + 1 + stride], prev, bpp)
        rows.append(prev)
    return Png(width, height, rows, bpp)


# ---------------------------------------------------------------------------- fixtures


@dataclass
class Site:
    built: Built
    page: Path
    work: Path


@dataclass
class Stored:
    built: Built
    repo: Path
    page: Path


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """A small report and its records in a real trace store in a git repo, written by
    write_html. (Small: every record put fsyncs; 50 tasks would take ~25 s here.)"""
    root = tmp_path_factory.mktemp("html-stored")
    built = build_report(n_validation=6, n_regression=3)
    ev = built.report.evidence
    teacher = [*ev["val-task-01"]["teacher"], MISSING_RUN]
    built.report.evidence = {**ev, "val-task-01": {**ev["val-task-01"], "teacher": teacher}}
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    store = TraceStore(repo / ".skillci", redactor=Redactor(env={}))
    for rec in built.records:
        store.put(rec)
    store.put_blob(GATE_BLOB, built.report, key=built.report.gate_id, replace=True)
    ctx = RepoContext.open(repo, state_dir=repo / ".skillci")
    page = write_html(ctx, load_report(ctx, built.report.gate_id), root / "out")
    return Stored(built=built, repo=repo, page=page)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """The page of a 50-task validation suite (plus 20 regression, 2 security tasks) with
    teacher and baseline runs and hostile record text, as the browser gets it."""
    root = tmp_path_factory.mktemp("html-report")
    built = build_report(n_validation=50, n_regression=20)
    page = root / "out" / "index.html"
    atomic_write_text(page, render_html(built.report, built.by_id))
    return Site(built=built, page=page, work=root)


@pytest.fixture(scope="module")
def dom(site: Site) -> tuple[str, str]:
    proc = chromium(site.work, "--dump-dom", site.page.as_uri())
    return proc.stdout, proc.stderr


# ---------------------------------------------------------------------------- tests


def test_write_html_and_the_cli_write_the_same_page(
    stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLCI_HOME", raising=False)
    out = tmp_path / "cli-out"
    gid = stored.built.report.gate_id
    assert main(["report", gid, "--html", str(out), "--repo", str(stored.repo)]) == 0
    text = stored.page.read_text()
    assert (out / "index.html").read_text() == text
    # every stored record is shown; a missing one is listed with the store's reason
    for rec in stored.built.records:
        assert f"<summary><code>{rec.run_id}</code>" in text
    assert f"no run &#x27;{MISSING_RUN}&#x27;" in text
    # --html pointing at a file is a usage error (exit 2), and nothing is overwritten
    blocker = tmp_path / "a-file"
    blocker.write_text("keep")
    assert main(["report", gid, "--html", str(blocker), "--repo", str(stored.repo)]) == 2
    assert blocker.read_text() == "keep"


@pytest.mark.chromium
def test_page_renders_with_no_console_message_and_shows_the_verdict(
    site: Site, dom: tuple[str, str]
) -> None:
    html_out, stderr = dom
    assert console_messages(stderr) == []
    opening = re.search(r"<html[^>]*>", html_out)
    assert opening is not None
    assert 'data-ready="1"' in opening.group(0), "the page script did not run"
    assert "data-pwned" not in opening.group(0), "record text ran as script"
    verdict = re.search(r'<p class="word" id="verdict-word">([^<]*)</p>', html_out)
    assert verdict is not None and verdict.group(1) == "✘ REJECT"
    assert site.built.report.verdict == "reject"
    assert 'data-verdict="reject"' in html_out
    # hostile text is in the DOM as text; the only script element is ours
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html_out
    assert len(re.findall(r"<script\b", html_out)) == 1
    assert "<img" not in html_out and IMG not in html_out and SCRIPT not in html_out


@pytest.mark.chromium
def test_screenshot_is_a_rendered_page_with_the_verdict_banner(site: Site) -> None:
    shot = site.work / "shot.png"
    proc = chromium(
        site.work, f"--screenshot={shot}", "--window-size=1280,2000", site.page.as_uri()
    )
    assert console_messages(proc.stderr) == []
    assert shot.is_file() and shot.stat().st_size > 50_000
    png = read_png(shot)
    assert (png.width, png.height) == (1280, 2000)
    colours = png.colours()
    total = png.width * png.height
    assert len(colours) > 200, "screenshot has almost no colours: blank page?"
    assert colours.most_common(1)[0][1] < 0.95 * total
    # the red REJECT banner spans the width at the top of the page
    banner = png.rows_with(REJECT_RED, min_count=1000, first=400)
    assert len(banner) > 80 and max(banner) < 300


@pytest.mark.chromium
def test_a_task_anchor_opens_its_trajectories(site: Site) -> None:
    target = anchor("traj", "val-task-02")
    proc = chromium(site.work, "--dump-dom", f"{site.page.as_uri()}#{target}")
    assert console_messages(proc.stderr) == []
    tags = re.findall(r'<details class="traj"[^>]*>', proc.stdout)
    opened = [t for t in tags if re.search(r"\sopen(=\"\")?[\s>]", t)]
    assert len(tags) == 73
    assert len(opened) == 1 and f'id="{target}"' in opened[0]


@pytest.mark.chromium
def test_console_check_catches_a_failing_script(tmp_path: Path) -> None:
    """Negative control: the console check above can fail."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>x</title><p>x</p><script>notDefined();</script>")
    proc = chromium(tmp_path, "--dump-dom", bad.as_uri())
    found = console_messages(proc.stderr)
    assert found and "notDefined" in found[0]
