"""``chess-endgame eval``: the linear evaluation, feature by feature."""

from __future__ import annotations

import click

from chess_endgame.engine.evaluation import Evaluator, WeightsError, load_weights

from .common import echo_json, fail, position_arguments, position_from


@click.command("eval")
@position_arguments
@click.option("--weights", "weights_path", type=click.Path(dir_okay=False), default=None,
              help="A weight file (JSON, as tune writes it; default: the package's data/weights.json).")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON {fen, total, weights, features: [{name, value, weight, contribution}]} instead of "
                   "the table (centipawns).")
def evaluate(position: tuple[str, ...], moves: bool, weights_path: str | None, as_json: bool) -> None:
    """Every feature of FEN (from the side to move), its weight and contribution, and the total."""
    board = position_from(position, moves)
    try:
        evaluator = Evaluator(load_weights(weights_path) if weights_path else None)
    except WeightsError as exc:
        fail(str(exc))
    rows = evaluator.contributions(board)
    total = evaluator.evaluate(board)
    if as_json:
        echo_json({"fen": board.fen(), "total": total, "weights": evaluator.weights.source,
                   "features": [{"name": n, "value": v, "weight": w, "contribution": c} for n, v, w, c in rows]})
        return
    side = "White" if board.turn else "Black"
    click.echo(f"{board.fen()}  ({side} to move; centipawns from {side}'s view; weights: "
               f"{evaluator.weights.source})")
    click.echo(f"{'feature':<22}{'value':>9}{'weight':>10}{'cp':>10}")
    for name, value, weight, contribution in rows:
        click.echo(f"{name:<22}{value:>9.2f}{weight:>10.2f}{contribution:>10.1f}")
    click.echo(f"{'total':<22}{'':>9}{'':>10}{total:>10}")
