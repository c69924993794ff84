from ranges.pages import page_count


def test_page_count():
    assert page_count(25, 10) == 3
    assert page_count(20, 10) == 2
    assert page_count(1, 10) == 1
    assert page_count(0, 10) == 1
