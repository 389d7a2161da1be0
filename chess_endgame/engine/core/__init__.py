"""The compiled search core: board arrays, move generation, evaluation and search under numba.

Every function here is plain, typed Python (integers and numpy arrays) decorated with
:func:`njit`; numba compiles it to machine code on first use and caches the result
(see :mod:`.jit`). With numba missing, or ``NUMBA_DISABLE_JIT=1``, the very same
functions run as ordinary Python: slowly, with the same results.

Modules, bottom up: :mod:`.bits` (bitboards and attack tables), :mod:`.position`
(the board, make/unmake, Zobrist keys, repetitions), :mod:`.movegen` (legal moves), :mod:`.features`
(the evaluation's features), :mod:`.structs` (structs of arrays, read without reference counts),
:mod:`.treestate` (the arrays of a search), :mod:`.history`
(what the search learns), :mod:`.ordering` (move ordering), :mod:`.quiescence` (the leaves),
:mod:`.tree` (the search). python-chess stays at the boundary:
:mod:`chess_endgame.engine.search` turns a :class:`chess.Board` into arrays and the moves that
come back into :class:`chess.Move`.
"""
