"""Cart queries."""

from shop.items import item_name


def last_item_name(cart):
    """Name of the most recently added item."""
    return item_name(cart, len(cart))
