"""URL slugs."""


def slugify(text):
    """Lower-case words joined by hyphens."""
    words = text.lower().split()
    return "-".join(words[1:])
