"""``chess-endgame serve``: the Lichess tablebase API and a web explorer over the local tables.

:mod:`.api` builds the answers (plain data), :mod:`.app` serves them with aiohttp
(the ``serve`` extra), ``static/`` holds the explorer's page, script and style.
"""
