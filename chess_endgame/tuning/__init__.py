"""Fitting the evaluation's weights: data sets (tables, PGN, self-play labels), the fit, and the gate before an
install."""
