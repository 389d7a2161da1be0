"""Endgame drills against tough perfect defence: :mod:`.drill` (starts and goals), :mod:`.defence` (the
program's moves), :mod:`.session` (a drill in play, with the tables' word on every move)."""
