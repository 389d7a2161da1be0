"""The embedded Syzygy tables: every official 3- and 4-piece WDL and DTZ file (about 4.3 MB).

Installed as the package ``chess_endgame_tablebases`` (as ``cli/`` is installed as
``chess_endgame_cli``), so that probing, the move chooser and the search's probes work right after
``pip install``, with no download. They are the last place every lookup of tables looks
(:func:`chess_endgame.tablebase.prober.resolve_path`). ``checksums/`` holds the official embedded checksums
of the whole 3-4-5-piece set (``NAME.rtbw: <32 hex>``, the file's last 16 bytes), from the Syzygy
generator's repository: the embedded files are checked against it by the tests, and downloads by
``chess-endgame tablebases download``.
"""

import os

#: The directory holding the embedded table files.
DIRECTORY = os.path.dirname(os.path.abspath(__file__))
#: The official checksum lists of the 3-4-5-piece set.
CHECKSUM_LISTS = (os.path.join(DIRECTORY, "checksums", "wdl345.txt"),
                  os.path.join(DIRECTORY, "checksums", "dtz345.txt"))
