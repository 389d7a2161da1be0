"""Playing games: engines (this project's and any UCI one), games with clocks and adjudication, balanced starts,
matches, and what a match result says (Elo, SPRT)."""
