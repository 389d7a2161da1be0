"""``python -m chess_endgame``: the same as the ``chess-endgame`` command."""

from chess_endgame_cli.launch import main

if __name__ == "__main__":
    main()
