import pytest
from shop.cart import last_item_name
from shop.items import item_name


def test_last():
    assert last_item_name([{"name": "a"}]) == "a"
    assert last_item_name([{"name": "a"}, {"name": "b"}, {"name": "c"}]) == "c"


def test_helper_still_strict():
    with pytest.raises(IndexError):
        item_name([{"name": "a"}], 1)
    with pytest.raises(IndexError):
        item_name([{"name": "a"}], -1)
