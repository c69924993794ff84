"""Pagination helpers."""


def page_count(total, per_page):
    """Pages needed to show `total` items, `per_page` per page; an empty list has one page."""
    pages = -(-total // per_page)
    return pages if pages > 0 else 1


def page_of(index, per_page):
    """1-based page number of item `index` (0-based)."""
    return index // per_page + 1
