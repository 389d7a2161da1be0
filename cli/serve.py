"""``chess-endgame serve``: the Lichess tablebase API and the web explorer on a local HTTP server."""

from __future__ import annotations

import click

from .common import FiniteFloatRange, fail, load_prober, prober_option, syzygy_path_option


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, metavar="ADDRESS",
              help="Address to listen on; anything but a loopback address (127.0.0.1, ::1, localhost) lets other "
                   "machines in.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), metavar="PORT",
              help="TCP port to listen on (0: any free port, printed at start).")
@click.option("--timeout", "request_timeout", default=10.0, show_default=True,
              type=FiniteFloatRange(0.1, 600), metavar="SECONDS",
              help="Time limit of one probe request in seconds (503 past it).")
@click.option("--search-ms", default=1000, show_default=True, type=click.IntRange(10, 60000), metavar="MS",
              help="Search time in ms of the explorer beyond the tables (a request may ask for up to 5x this).")
@click.option("--max-searches", default=2, show_default=True, type=click.IntRange(1, 64), metavar="N",
              help="Searches at once, one thread each; more wait up to 10 seconds, then get 503.")
@syzygy_path_option
@prober_option
def serve(host: str, port: int, request_timeout: float, search_ms: int, max_searches: int,
          syzygy_path: str | None, backend: str | None) -> None:
    """Serve the Lichess tablebase API (/standard, /standard/mainline) and a web explorer (/) from the local tables.

    Moves are ranked by the chooser; /health reports readiness. Ctrl-C stops the server.
    """
    try:
        from chess_endgame.serve.app import ServeConfig, Server, is_loopback, run
    except ImportError as exc:
        fail(f"serve needs aiohttp ({exc}): pip install 'chess-endgame[serve]'")
    prober = load_prober(syzygy_path, required=True, backend=backend)
    config = ServeConfig(request_timeout=request_timeout, search_ms=search_ms, max_search_ms=5 * search_ms,
                         max_searches=max_searches)
    server = Server(prober, config)
    if not is_loopback(host):
        click.echo(f"chess-endgame: warning: listening on {host}: other machines can reach this server", err=True)

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        click.echo(f"chess-endgame serve: {prober.summary()}")
        click.echo(f"explorer: http://{shown}:{bound}/  API: http://{shown}:{bound}/standard?fen=...  "
                   f"health: http://{shown}:{bound}/health  (Ctrl-C stops)")

    try:
        run(server, host, port, ready)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    finally:
        prober.close()
    click.echo("chess-endgame serve: stopped", err=True)
