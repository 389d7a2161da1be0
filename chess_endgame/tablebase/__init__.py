"""Syzygy tables: the prober interface and its local and remote answerers, where the tables live, and the files.

- :mod:`.prober`: :class:`Prober` (python-chess over local files, the embedded 3-4-piece set beneath them) and the
  :class:`TablebaseProber` interface every answerer meets;
- :mod:`.remote`: the same interface over a Lichess-API tablebase server;
- :mod:`.files`: what a directory holds, checks against the official checksums, downloads.
"""
