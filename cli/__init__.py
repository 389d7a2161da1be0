"""Command-line front end of chess-endgame (installed as ``chess_endgame_cli``).

It only parses arguments and prints; the work is done by :mod:`chess_endgame`.
"""
