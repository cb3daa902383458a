"""Where the public submission endpoint is served.

``/api/v1/f/{slug}``, and ``/f/{slug}`` beside it: a page written for a hosted form service
(``https://formspree.io/f/{id}``) then changes only its host. Every part of the server that
treats the endpoint apart (the edge's body limit, the NUL check, the one door in
submissions/intake/middleware.py) asks here, so the two paths never behave differently.
"""

from __future__ import annotations

PUBLIC_PREFIXES = ("/api/v1/f/", "/f/")


def is_public(path: str) -> bool:
    return path.startswith(PUBLIC_PREFIXES)


def public_slug(path: str) -> str | None:
    """The slug of a public endpoint's path (one non-empty segment), else None."""
    for prefix in PUBLIC_PREFIXES:
        if path.startswith(prefix):
            slug = path[len(prefix):]
            return slug if slug and "/" not in slug else None
    return None
