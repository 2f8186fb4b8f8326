"""Helpers documented by examples that pytest collects as doctests.

>>> from srcpkg.textutil import title_slug
>>> title_slug("Hello,  World")
'hello-world'
"""

from srcpkg.core import slug


def title_slug(text):
    """The slug of a title.

    >>> title_slug("A  B")
    'a-b'
    """
    return slug(text)


def bounded(values, low, high):
    """Every value clamped.

    >>> bounded([-5, 3, 99], 0, 10)
    [0, 3, 10]
    """
    from srcpkg.core import clamp

    return [clamp(v, low, high) for v in values]
