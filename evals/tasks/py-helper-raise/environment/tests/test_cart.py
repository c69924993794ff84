from shop.cart import last_item_name


def test_last_item_name():
    cart = [{"name": "tea"}, {"name": "milk"}]
    assert last_item_name(cart) == "milk"
