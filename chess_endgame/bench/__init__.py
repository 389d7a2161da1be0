"""Benchmarks behind ``chess-endgame bench``: fixed, seeded workloads that return figures.

Each module returns plain data; the CLI prints it. Timings are the best of
``repeat`` interleaved runs after a warm-up, to damp the noise of a shared
machine; search speed is in nodes per CPU-second.
"""
