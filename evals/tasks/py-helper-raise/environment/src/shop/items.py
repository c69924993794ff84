"""Access to cart items."""


def item_name(cart, index):
    """Name of the item at `index`; raises IndexError for a bad index."""
    if index < 0 or index >= len(cart):
        raise IndexError(f"no item at position {index}")
    return cart[index]["name"]
