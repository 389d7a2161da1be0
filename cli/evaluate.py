"""``chess-endgame eval``: the tapered linear evaluation, family by family, with the phase and the scale."""

from __future__ import annotations

import click

from chess_endgame.engine.evaluation import Evaluator, WeightsError, load_weights

from .common import fail, position_arguments, position_from
from .outputs import echo_json


@click.command("eval")
@position_arguments
@click.option("--weights", "weights_path", type=click.Path(dir_okay=False), default=None,
              help="A weight file (JSON, as tune writes it; default: the package's data/weights.json).")
@click.option("--terms", "show_terms", is_flag=True,
              help="Also list every non-zero term under its family: value, middlegame and endgame weight.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON {fen, total, mg, scale, tempo, weights, bucket, families: [{family, mg, eg, total, "
                   "terms: [{name, value, mg, eg}]}]} instead of the table (centipawns).")
def evaluate(position: tuple[str, ...], moves: bool, weights_path: str | None, show_terms: bool,
             as_json: bool) -> None:
    """The evaluation of FEN from the side to move, in centipawns: each family of terms with its middlegame and
    endgame part, the phase (mg: 1 with every minor and major piece on the board, 0 with none) and the endgame
    scale factor."""
    board = position_from(position, moves)
    try:
        evaluator = Evaluator(load_weights(weights_path) if weights_path else None)
    except WeightsError as exc:
        fail(str(exc))
    explained = evaluator.explain(board)
    outcome = board.outcome()
    over = outcome.termination.name.lower().replace("_", " ") if outcome else None
    if as_json:
        echo_json({"fen": board.fen(), "total": explained.total, "mg": explained.mg, "scale": explained.scale,
                   "in_check": board.is_check(), "game_over": over,
                   "tempo": explained.tempo, "weights": evaluator.weights.source, "bucket": explained.bucket,
                   "families": [{"family": p.family, "mg": round(p.mg, 2), "eg": round(p.eg, 2),
                                 "total": round(p.total, 2),
                                 "terms": [{"name": n, "value": v, "mg": m, "eg": e} for n, v, m, e in p.terms]}
                                for p in explained.parts]})
        return
    side = "White" if board.turn else "Black"
    click.echo(f"{board.fen()}  ({side} to move; centipawns from {side}'s view; weights: "
               f"{evaluator.weights.source})")
    click.echo(f"phase: mg {explained.mg:.2f}, eg {1 - explained.mg:.2f}; endgame scale {explained.scale:.2f}"
               + (f"; the weights for {explained.bucket} men" if explained.bucket else ""))
    click.echo(f"{'family':<22}{'mg part':>10}{'eg part':>10}{'total':>10}")
    click.echo(f"{'tempo':<22}{'':>10}{'':>10}{explained.tempo:>10.1f}")
    for part in explained.parts:
        click.echo(f"{part.family:<22}{part.mg:>10.1f}{part.eg:>10.1f}{part.total:>10.1f}")
        if show_terms:
            for name, value, w_mg, w_eg in part.terms:
                click.echo(f"  {name:<20}{value:>10.2f}  x ({w_mg:.2f} mg, {w_eg:.2f} eg)")
    click.echo(f"{'total':<22}{'':>10}{'':>10}{explained.total:>10}")
    if over or board.is_check():
        # As Stockfish's eval says "none (in check)": the searcher never scores such a position statically.
        click.echo(f"note: the game is over ({over}); the search scores it as such, not by this evaluation" if over
                   else f"note: {side} is in check; the search answers the check, it never uses this evaluation here")
