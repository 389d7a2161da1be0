"""Words for the reports every front end prints."""

from __future__ import annotations

#: Plurals that do not just add an s.
_IRREGULAR = {"ply": "plies", "inaccuracy": "inaccuracies", "dubious": "dubious"}


def plural(count: int, word: str) -> str:
    """``count`` and ``word``, in the plural unless ``count`` is 1: ``1 ply``, ``2 plies``, ``0 games``."""
    return f"{count} {word if count == 1 else _IRREGULAR.get(word, word + 's')}"
