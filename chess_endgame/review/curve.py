"""A game's evaluation curve as an SVG picture, written by hand (no plotting dependency).

The curve is White's winning chances (Lichess's curve of the evaluation, -1 to
+1; tablebase wins sit at the top or bottom, draws on the middle line) after
every ply; the part of the game within the tables is shaded, and every flagged
move is a dot coloured by its judgement, with its comment as a tooltip.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from chess_endgame.review.annotate import comment
from chess_endgame.review.judge import Judgement, winning_chances
from chess_endgame.review.reviewer import GameReview

WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 46, 14, 34, 30
COLORS = {Judgement.BLUNDER: "#d62728", Judgement.MISTAKE: "#ff7f0e", Judgement.DUBIOUS: "#e3b505",
          Judgement.INACCURACY: "#e3b505"}


def curve_values(review: GameReview) -> list[float]:
    """White's winning chances (-1..1) of every position, the start first (a missing evaluation repeats
    the one before)."""
    values: list[float] = []
    for score in review.evals:
        values.append(winning_chances(score.white()) if score is not None else (values[-1] if values else 0.0))
    return values


def curve_svg(review: GameReview) -> str:
    """The SVG document of ``review``'s evaluation curve."""
    values = curve_values(review)
    plies = max(len(values) - 1, 1)
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(ply: int) -> float:
        return LEFT + width * ply / plies

    def y(value: float) -> float:
        return TOP + height * (1 - value) / 2

    headers = review.headers
    title = (f"Game {review.number}: {headers.get('White', '?')} - {headers.get('Black', '?')} "
             f"{headers.get('Result', '*')}")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
           f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{LEFT}" y="{TOP}" width="{width}" height="{height / 2:.1f}" fill="#f4f4f4"/>',
           f'<rect x="{LEFT}" y="{y(0):.1f}" width="{width}" height="{height / 2:.1f}" fill="#d9d9d9"/>']
    for value, label in ((1, "White"), (0.5, ""), (0, "0"), (-0.5, ""), (-1, "Black")):
        out.append(f'<line x1="{LEFT}" y1="{y(value):.1f}" x2="{LEFT + width}" y2="{y(value):.1f}" '
                   f'stroke="#999" stroke-width="{1 if value == 0 else 0.4}"/>')
        if label:
            out.append(f'<text x="{LEFT - 4}" y="{y(value) + 4:.1f}" text-anchor="end">{label}</text>')
    for ply in range(0, plies + 1, _tick_step(plies)):
        out.append(f'<text x="{x(ply):.1f}" y="{HEIGHT - 10}" text-anchor="middle">{ply}</text>')
    out.append(f'<text x="{LEFT - 4}" y="{HEIGHT - 10}" text-anchor="end" fill="#666">ply</text>')
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    out.append(f'<polygon points="{x(0):.1f},{y(0):.1f} {points} {x(len(values) - 1):.1f},{y(0):.1f}" '
               f'fill="#333" fill-opacity="0.15"/>')
    entry = review.entered
    if entry is not None:  # the part within the tables: a blue band, explained beside the title
        out.append(f'<rect x="{x(entry.ply):.1f}" y="{TOP}" width="{x(plies) - x(entry.ply):.1f}" '
                   f'height="{height}" fill="#4c78a8" fill-opacity="0.18"/>')
        label = f"tables from ply {entry.ply}: {entry.material}, {entry.cls} for {entry.turn.capitalize()} to move"
        out.append(f'<text x="{LEFT + width}" y="18" text-anchor="end" fill="#2b4f7a">{escape(label)}</text>')
    out.append(f'<polyline points="{points}" fill="none" stroke="#222" stroke-width="1.5"/>')
    for move in review.moves:
        if move.judgement is None:
            continue
        tip = f"{move.label}{move.judgement.symbol} {comment(move)}"
        out.append(f'<circle cx="{x(move.ply):.1f}" cy="{y(values[move.ply]):.1f}" r="4.5" '
                   f'fill="{COLORS[move.judgement]}" stroke="black" stroke-width="0.6">'
                   f"<title>{escape(tip)}</title></circle>")
        if move.judgement is Judgement.BLUNDER:
            label = f"{move.label}??"
            out.append(f'<text x="{x(move.ply):.1f}" y="{y(values[move.ply]) - 7:.1f}" '
                       f'text-anchor="{label_anchor(x(move.ply), label)}" '
                       f'fill={quoteattr(COLORS[move.judgement])}>{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


#: Width of a character of the 11-pixel sans-serif labels, a generous estimate in pixels.
CHAR_WIDTH = 7.0


def label_anchor(x: float, text: str) -> str:
    """How to anchor a label at ``x`` so that it stays inside the picture: centred on its point, or ending
    (starting) there near the right (left) edge."""
    half = CHAR_WIDTH * len(text) / 2
    if x + half > WIDTH - 2:
        return "end"
    return "start" if x - half < 2 else "middle"


def _tick_step(plies: int) -> int:
    for step in (2, 10, 20, 50, 100, 200):
        if plies / step <= 12:
            return step
    return 500
