from stats.median import lower_median


def test_even_count():
    assert lower_median([4, 1, 3, 2]) == 2
