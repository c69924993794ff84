from stats.ratios import percent


def test_percent():
    assert percent(1, 4) == 25.0
