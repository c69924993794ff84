from ranges.pages import page_count, page_of


def test_page_count():
    assert page_count(25, 10) == 3


def test_empty_has_one_page():
    assert page_count(0, 10) == 1


def test_page_of():
    assert page_of(10, 10) == 2
