from stats.median import lower_median, median_index


def test_median():
    assert lower_median([4, 1, 3, 2]) == 2
    assert lower_median([5, 1, 3]) == 3
    assert median_index(4) == 1
