"""Finding completed trials under a results dir while other trials are being discarded."""

from __future__ import annotations

from pathlib import Path

from skillci.runners.pool import TRASH, discard_tree
from skillci.runners.slots import _markers, index_complete
from skillci.runners.trialdir import MARKER


def _marked(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / MARKER).write_text("{}")
    return path / MARKER


def test_markers_skip_dirs_set_aside_or_being_deleted(tmp_path: Path) -> None:
    """A trial dir renamed into ``.trash`` keeps its ``test-`` name and its marker until the
    background deleter reaches it: it is discarded, never a completed trial to reuse (and
    the deleter empties ``.trash`` while the index walks, which made ``rglob`` raise)."""
    kept = _marked(tmp_path / "batch-000" / "test-0")
    _marked(tmp_path / "batch-000" / TRASH / "test-1-2899-1")
    _marked(tmp_path / "batch-000" / ".incomplete" / "test-2")
    assert _markers(tmp_path) == [kept]


def test_index_walks_past_a_trial_dir_discarded_while_it_runs(tmp_path: Path) -> None:
    doomed = _marked(tmp_path / "batch-000" / "test-3").parent
    discard_tree(doomed, tmp_path / "batch-000" / TRASH)  # renamed now, deleted later
    assert index_complete([tmp_path]) == {}  # its marker is no longer a trial's
