from __future__ import annotations

import skillci.gate


def test_all_matches_public_names() -> None:
    public = {
        name
        for name in vars(skillci.gate)
        if not name.startswith("_")
        and name not in {"annotations", "impact", "metrics", "sequential", "stats", "resample"}
    }
    assert sorted(skillci.gate.__all__) == sorted(public)
