from textutil.slug import slugify


def test_slugify():
    assert slugify("Hello Big World") == "hello-big-world"
