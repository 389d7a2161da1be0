"""``chess-endgame tablebases info|verify|compare|download``."""

from __future__ import annotations

import os
import sys
import textwrap

import click
from chess_endgame_tablebases import CHECKSUM_LISTS
from tqdm import tqdm

from chess_endgame.tablebase import downloads
from chess_endgame.tablebase import files as tables
from chess_endgame.tablebase.lichess import check_url
from chess_endgame.tablebase.paths import HOW_TO_GET_TABLES, default_directory, embedded_directory, resolve_path, scan
from chess_endgame.text import plural

from .common import FiniteFloatRange, fail, interrupted, user_errors, writable_directory
from .outputs import echo_json


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


def _size(size: int) -> str:
    """Bytes in the unit a person reads best (decimal, as the published set sizes are)."""
    if size >= 1e10:
        return f"{size / 1e9:.0f} GB"
    if size < 1000:
        return f"{size} B"
    return f"{size / 1e6:.0f} MB" if size >= 1e7 else f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"


@click.group()
def tablebases() -> None:
    """Inspect, verify and download Syzygy table files."""


@tablebases.command()
@click.argument("path", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@user_errors
def info(path: str | None, as_json: bool) -> None:
    """Which tables every command reads, per piece count, and which directory answers for each.

    The lookup: PATH (or --syzygy-path, UCI SyzygyPath), else $SYZYGY_PATH, else the per-user
    directory; the embedded 3-4-piece set beneath them answers for what they lack. Lists the official
    3-4-5-piece tables that are missing and the total size.
    """
    path = resolve_path(path)
    report = tables.info(path)
    answering = report.answering()
    user_dir, embedded = default_directory(), embedded_directory()
    if as_json:
        echo_json({
            "path": path, "directories": report.directories, "bad_directories": report.bad_directories,
            "user_directory": user_dir, "embedded_directory": embedded,
            "summary": report.summary, "complete_pieces": report.complete_pieces, "total_size": report.total_size,
            "pieces": [{"pieces": c.pieces, "wdl": c.wdl, "dtz": c.dtz, "missing": c.missing,
                        "size": c.size} for c in report.counts],
            "sources": report.sources,
        })
        return
    click.echo(f"Syzygy path: {path}")
    click.echo("  (the first directory that has a table's file answers for it)")
    for directory, problem in report.bad_directories.items():
        click.echo(f"  {directory}: {problem}")
    missing = "" if os.path.isdir(user_dir) else " (not created yet: `chess-endgame tablebases download` fills it)"
    click.echo(f"per-user directory: {user_dir}{missing}")
    click.echo(f"embedded 3-4-piece tables: {embedded}")
    click.echo(report.summary)
    click.echo(f"complete: every table up to {report.complete_pieces} pieces" if report.complete_pieces
               else "complete: not even the 3-piece set")
    click.echo(f"{'pieces':>6}  {'WDL':>4}  {'DTZ':>4}  {'missing':>7}  {'size':>11}")
    for c in report.counts:
        click.echo(f"{c.pieces:>6}  {len(c.wdl):>4}  {len(c.dtz):>4}  {len(c.missing):>7}  {_mib(c.size):>11}")
    click.echo(f"total size: {_mib(report.total_size)}")
    click.echo("which directory answers, per material:")
    for directory, names in answering.items():
        label = f"{directory} (embedded)" if directory == embedded else directory
        if not names:
            held = bool(tables.table_paths(directory))
            click.echo(f"  {label}: none" + (" (every table it holds is answered from above)" if held
                                             else " (it holds no tables)"))
            continue
        click.echo(f"  {label}: {plural(len(names), 'table')}:")
        click.echo(textwrap.fill(" ".join(names), width=100, initial_indent="    ", subsequent_indent="    "))
    for c in report.counts:
        if c.missing and c.pieces <= 5:
            shown = ", ".join(c.missing[:12]) + (f", ... ({len(c.missing)} in all)" if len(c.missing) > 12 else "")
            click.echo(f"missing {c.pieces}-piece tables (WDL or DTZ): {shown}")
    if not any(c.wdl or c.dtz for c in report.counts):
        click.echo(f"chess-endgame: no Syzygy tables in {path}; {HOW_TO_GET_TABLES}", err=True)
        sys.exit(1)


@tablebases.command()
@click.argument("path", required=False)
@click.option("--checksums", "checksum_files", multiple=True, type=click.Path(dir_okay=False),
              help="More official checksum lists (NAME.rtbw: <32 hex>), beside the 3-4-5-piece lists shipped "
                   "with the package; repeatable. The embedded checksum (last 16 bytes) of each listed file "
                   "must match.")
@click.option("--deep", is_flag=True,
              help="Also probe seeded random positions of every table and check them against a "
                   "1-ply search of their children.")
@click.option("--samples", default=32, show_default=True, type=click.IntRange(1, 100000), metavar="POSITIONS",
              help="Positions per table with --deep.")
@click.option("--seed", default=1, show_default=True, type=int, help="Seed of the --deep sample (same seed, "
                                                                        "same positions).")
@user_errors
def verify(path: str | None, checksum_files: tuple[str, ...], deep: bool, samples: int, seed: int) -> None:
    """Check every table file in PATH: header, size, opens in python-chess, checksums, --deep.

    Exits 1 when any file is bad. Without PATH: every directory the commands read (the embedded set
    included).
    """
    path = path or resolve_path(None)
    checksums = tables.read_checksums([*CHECKSUM_LISTS, *checksum_files])
    problems = scan(path).bad_directories
    files = tables.table_paths(path)
    total = len(files)
    if not total:
        fail("; ".join(f"{directory}: {why}" for directory, why in problems.items()) if problems
             else f"no Syzygy tables in {path}; {HOW_TO_GET_TABLES}")
    for directory, why in problems.items():
        click.echo(f"chess-endgame: warning: {directory}: {why}", err=True)
    bad: list[tables.FileReport] = []
    counts = {"ok": 0, "mismatch": 0, "unlisted": 0, "-": 0}
    checked = 0
    reports: list[tables.FileReport] = []
    stopped = False
    with tqdm(total=total, unit="file", desc="verify", file=sys.stderr, dynamic_ncols=True, disable=None) as bar:
        def on_file(report: tables.FileReport) -> None:
            nonlocal checked
            reports.append(report)
            counts[report.checksum] += 1
            checked += report.deep_checked
            if not report.ok:
                bad.append(report)
            bar.set_postfix(bad=len(bad))
            bar.update(1)

        try:
            tables.verify(path, checksums=checksums, deep=deep, samples=samples, seed=seed, files=files,
                          on_file=on_file)
        except KeyboardInterrupt:  # Ctrl-C: report the files checked
            stopped = True
    click.echo(f"{'files':<22}{len(reports)}" + (f" of {total}" if stopped else ""))
    click.echo(f"{'sound':<22}{len(reports) - len(bad)}")
    click.echo(f"{'bad':<22}{len(bad)}")
    if checksums is not None:
        click.echo(f"{'checksum ok':<22}{counts['ok']}")
        click.echo(f"{'checksum mismatch':<22}{counts['mismatch']}")
        click.echo(f"{'not in the list':<22}{counts['unlisted']}")
    if deep:
        click.echo(f"{'positions checked':<22}{checked} ({samples} sampled per file, seed {seed})")
    for report in bad:
        for problem in report.problems:
            click.echo(f"BAD {report.path}: {problem}")
    if stopped:
        interrupted(f"the {len(reports)} files checked are reported above")
    sys.exit(1 if bad else 0)


@tablebases.command()
@click.argument("path", required=False)
@click.option("--positions", default=200, show_default=True, type=click.IntRange(0, 10**8),
              help="Random positions per table (either side to move, half mirrored, plus en passant positions "
                   "where both sides have pawns).")
@click.option("--every", "every_pieces", type=click.IntRange(3, 4), default=None, metavar="PIECES",
              help="Instead: every legal position of each table of PIECES pieces (3: about 2 million in all).")
@click.option("--table", "only", multiple=True, metavar="NAME", help="Only this table (KRPvKR); repeatable.")
@click.option("--seed", default=1, show_default=True, type=int, help="Seed of the random positions (same seed, "
                                                                        "same positions).")
@user_errors
def compare(path: str | None, positions: int, every_pieces: int | None, only: tuple[str, ...], seed: int) -> None:
    """Probe the same positions with the compiled prober and python-chess's reference prober: WDL and DTZ
    must be equal. Prints each table's positions, mismatches and both probers' time; exits 1 on a mismatch.
    Without PATH: every directory the commands read (the embedded set included)."""
    import random

    from chess_endgame.tablebase.compare import compare as run_compare
    from chess_endgame.tablebase.compare import every_board, random_boards, tables_of
    from chess_endgame.tablebase.prober import Prober

    path = path or resolve_path(None)
    probe = Prober(path)
    names = tables_of(probe, every_pieces)
    probe.close()
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            fail(f"no table {', '.join(unknown)} (WDL and DTZ) in {path}")
        names = [n for n in names if n in only]
    if not names:
        fail(f"no Syzygy tables{f' of {every_pieces} pieces' if every_pieces else ''} in {path}; {HOW_TO_GET_TABLES}")
    rng = random.Random(seed)
    boards = every_board if every_pieces else (lambda table: random_boards(table, positions, rng))
    results = []
    with tqdm(total=len(names), unit="table", desc="compare", file=sys.stderr, dynamic_ncols=True,
              disable=None) as bar:
        try:
            run_compare(path, names, boards, on_table=lambda r: (results.append(r), bar.update(1)))
        except KeyboardInterrupt:
            pass
    click.echo(f"{'table':<10}{'positions':>11}{'en passant':>12}{'mismatches':>12}{'python-chess s':>16}"
               f"{'compiled s':>12}")
    for r in results:
        click.echo(f"{r.table:<10}{r.positions:>11}{r.en_passant:>12}{len(r.mismatches):>12}"
                   f"{r.reference_seconds:>16.2f}{r.compiled_seconds:>12.2f}")
    total = sum(r.positions for r in results)
    wrong = [m for r in results for m in r.mismatches]
    ref, ours = sum(r.reference_seconds for r in results), sum(r.compiled_seconds for r in results)
    click.echo(f"{'total':<10}{total:>11}{sum(r.en_passant for r in results):>12}{len(wrong):>12}{ref:>16.2f}"
               f"{ours:>12.2f}")
    for fen, expected, found in wrong[:20]:
        click.echo(f"MISMATCH {fen}: python-chess {expected}, compiled {found}")
    failed = [f for r in results for f in r.failures]
    for fen, expected, found in failed[:20]:
        click.echo(f"FAILED {fen}: python-chess {expected}, compiled {found}")
    if len(results) < len(names):
        interrupted(f"{len(results)} of {len(names)} tables compared")
    verdict = "all equal" if not wrong and not failed else "; ".join(
        part for part in (f"{len(wrong)} differ" if wrong else "", f"{len(failed)} not answered" if failed else "")
        if part)
    click.echo(f"{'every position' if every_pieces else f'{positions} random positions a table (seed {seed})'}: "
               f"{verdict}")
    sys.exit(1 if wrong or failed else 0)


@tablebases.command()
@click.option("--pieces", type=click.Choice(["3", "4", "5", "6"]), default="5", show_default=True,
              help="Download the official tables of this many pieces (3 and 4 are embedded in the package; "
                   "6 is about 150 GB and is asked for first).")
@click.option("--wdl-only", is_flag=True, help="Only the WDL files (.rtbw): enough for search, not "
                                                "for perfect play at the root.")
@click.option("--dest", type=click.Path(file_okay=False), default=None,
              help="Directory to write to (default: the per-user directory that every command reads; "
                   "`chess-endgame tablebases info` names it).")
@click.option("--mirror", default=downloads.DEFAULT_MIRROR, show_default=True,
              help="Base URL of a Syzygy 3-4-5 mirror (another: " + downloads.OTHER_MIRRORS[0] + ").")
@click.option("--checksums", "checksum_files", multiple=True, type=click.Path(dir_okay=False),
              help="Official checksum list; every downloaded file listed there must match it (default: the "
                   "3-4-5-piece lists shipped with the package).")
@click.option("--timeout", default=30.0, show_default=True, type=FiniteFloatRange(0, 3600, min_open=True),
              metavar="SECONDS", help="Network timeout in seconds (per connection and per read).")
@click.option("--yes", is_flag=True, help="Do not ask before a 6-piece download.")
@user_errors
def download(pieces: str, wdl_only: bool, dest: str | None, mirror: str,
             checksum_files: tuple[str, ...], timeout: float, yes: bool) -> None:
    """Download the official Syzygy files of one piece count into the per-user directory (the 5-piece
    set by default: the 3-4-piece set is embedded), resuming partial ones, checking each file."""
    try:
        check_url(mirror, "--mirror")
    except ValueError as exc:
        fail(str(exc))
    dest = dest or default_directory()
    checksums = tables.read_checksums(checksum_files or CHECKSUM_LISTS)
    if (problem := writable_directory(dest)) is not None:  # checked before any download, by writing there
        fail(f"cannot write into {dest}: {problem}")
    size = tables.set_size(int(pieces), wdl_only=wdl_only)
    if pieces == "6" and not yes:
        try:
            confirmed = click.confirm(f"The 6-piece set is about {_size(size)}. Download it into {dest}?",
                                      default=False, err=True)
        except click.Abort:  # no answer (end of input)
            click.echo(err=True)
            confirmed = False
        if not confirmed:
            fail("6-piece download not confirmed; nothing downloaded (pass --yes to skip the question)")
    files = tables.table_files(int(pieces), wdl_only=wdl_only, smallest=int(pieces))
    click.echo(f"{pieces}-piece set: {plural(len(files), 'file')}, about {_size(size)}, from {mirror} into {dest}",
               err=True)
    overall = tqdm(total=len(files), unit="file", desc="tables", file=sys.stderr, dynamic_ncols=True, disable=None)
    current: dict[str, tqdm] = {}

    def on_start(name: str) -> None:
        current["bar"] = tqdm(unit="B", unit_scale=True, unit_divisor=1024, desc=name, leave=False,
                              file=sys.stderr, dynamic_ncols=True, disable=None)

    def on_bytes(n: int, total: int | None) -> None:
        bar = current.get("bar")
        if bar is not None:
            if total is not None and bar.total != total:
                bar.total = total
            bar.update(n)

    def on_done(name: str, status: str) -> None:
        bar = current.pop("bar", None)
        if bar is not None:
            bar.close()
        overall.update(1)

    result = downloads.download(files, dest, mirror=mirror, checksums=checksums, timeout=timeout,
                             on_start=on_start, on_bytes=on_bytes, on_done=on_done)
    for bar in current.values():
        bar.close()
    overall.close()
    if result.stopped and not (result.downloaded or result.present or result.failed or result.unavailable):
        click.echo(f"chess-endgame: download failed: {result.stopped}", err=True)  # nothing done: the reason alone
        sys.exit(1)
    click.echo(f"downloaded {plural(len(result.downloaded), 'file')} ({_size(result.bytes)}), "
               f"{len(result.present)} already present, {len(result.failed)} bad, "
               f"{len(result.unavailable)} not on the mirror")
    for name, problem in result.replaced.items():
        click.echo(f"fetched again {name}: the file present was bad ({problem})")
    for name, problem in result.failed.items():
        click.echo(f"BAD {name}: {problem}")
    for name, problem in result.unavailable.items():
        click.echo(f"NOT ON THE MIRROR {name}: {problem}")
    if result.interrupted:
        interrupted("the files listed as downloaded are in place; run the command again to resume")
    if result.stopped:
        click.echo(f"chess-endgame: download failed: {result.stopped}", err=True)
        sys.exit(1)
    click.echo(f"use them with: SYZYGY_PATH={dest} (or --syzygy-path / UCI SyzygyPath)")
    sys.exit(1 if result.failed or result.unavailable else 0)
