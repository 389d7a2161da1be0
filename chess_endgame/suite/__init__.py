"""The test-suite runner: EPD and Lichess puzzle suites, any UCI engine, tablebase-verified scoring.

:mod:`.items` reads suites, the engines of :mod:`chess_endgame.play.engines` answer (this project's
player in-process, or any UCI engine through python-chess), :mod:`.scoring`
judges each answer (and checks it against the tablebases), :mod:`.runner` runs
positions in parallel processes, :mod:`.report` sums up and writes JSON/CSV.
"""

from chess_endgame.suite.items import Item, LoadError, load_files
from chess_endgame.suite.report import Summary, summarize, write_csv, write_json
from chess_endgame.suite.runner import EngineSpec, SuiteRun, run_items
from chess_endgame.suite.scoring import Result

__all__ = ["EngineSpec", "Item", "LoadError", "SuiteRun", "Result", "Summary", "load_files", "run_items",
           "summarize", "write_csv", "write_json"]
