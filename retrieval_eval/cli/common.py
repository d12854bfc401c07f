"""What every verb of the command line shares: the usage error, exit codes, option types, file
reading and writing, and the JSON rendering of results.

Its own module so that the verbs (:mod:`.score`, :mod:`.commands`, :mod:`.trust`,
:mod:`.trec_eval`), the readers (:mod:`.inputs`) and the parser import it, and none of them
imports another's private names.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import FormatError

__all__ = [
    "BOM",
    "CLIError",
    "EXIT_FINDING",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_CHUNK_ROWS",
    "PROG",
    "atomic_write_text",
    "check_file_options",
    "check_out_not_input",
    "decode_text",
    "dumps",
    "finite_float",
    "frame_records",
    "from_a_library",
    "jsonable",
    "load_json",
    "naming",
    "one_line",
    "out_of_memory",
    "positive_int",
    "read_text",
]

PROG = "retrieval-eval"
#: The largest ``--chunk-rows`` (67,108,864): 33 times the automatic block of 2,000,000 rows,
#: past the point where reading in blocks saves memory; the bound keeps the first block's read
#: (rows times bytes per line) within what a machine can hand out.
MAX_CHUNK_ROWS = 1 << 26
#: Options whose largest value is below the largest int64, with why (:func:`positive_int`).
MAXIMA = {"--chunk-rows": (MAX_CHUNK_ROWS, " (rows in one block)")}
EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

#: The UTF-8 byte-order mark, accepted and dropped at the start of a file.
BOM = b"\xef\xbb\xbf"


class CLIError(Exception):
    """A usage error or unreadable input: printed as one line on stderr, exit code 2."""


# -----------------------------------------------------------------------------------------------
# Option types: the text of an option converted to the library's type
# -----------------------------------------------------------------------------------------------


def positive_int(flag: str, high: int | None = None, why: str = "") -> Callable[[str], int]:
    """An argparse ``type`` reading a positive integer that fits the engine's int64 (at most
    ``high`` when given).

    Parameters
    ----------
    flag : str
        The option, named in the error (``--threshold``).
    high : int, optional
        A lower maximum than the largest int64; by default the flag's entry of :data:`MAXIMA`
        (``--chunk-rows``: :data:`MAX_CHUNK_ROWS`), if any.
    why : str
        Said after the maximum in the refusal.

    Returns
    -------
    callable
        ``parse(text) -> int``, raising :class:`CLIError` for anything else.

    Examples
    --------
    >>> positive_int("--bins")("10")
    10
    """
    from ..engine.metrics import MAX_K

    if high is None and flag in MAXIMA:
        high, why = MAXIMA[flag]

    def parse(text: str) -> int:
        if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
            raise CLIError(f"{flag} expects a positive integer, got '{text}'")
        if int(text) > MAX_K:
            raise CLIError(f"{flag} is at most {MAX_K} (the largest int64), got '{text}'")
        if high is not None and int(text) > high:
            raise CLIError(f"{flag} is at most {high}{why}, got '{text}'")
        return int(text)

    return parse


def finite_float(flag: str, low: float | None = None, high: float | None = None) -> Callable[[str], float]:
    """An argparse ``type`` reading a finite number, strictly between ``low`` and ``high``
    when they are given.

    Parameters
    ----------
    flag : str
        The option, named in the error (``--quantile``).
    low, high : float, optional
        Exclusive bounds.

    Returns
    -------
    callable
        ``parse(text) -> float``, raising :class:`CLIError` for anything else.

    Examples
    --------
    >>> finite_float("--quantile", 0.0, 1.0)("0.1")
    0.1
    """

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise CLIError(f"{flag} expects a finite number, got '{text}'")
        if (low is not None and value <= low) or (high is not None and value >= high):
            raise CLIError(f"{flag} expects a number strictly between {low:g} and {high:g}, got '{text}'")
        return value

    return parse


# -----------------------------------------------------------------------------------------------
# File options
# -----------------------------------------------------------------------------------------------

#: The options that name a file (or, for demo's --out, a folder), by argparse dest.
FILE_OPTIONS = {
    "judgments": "--judgments",
    "qrels": "--qrels",
    "run": "--run",
    "corpus": "--corpus",
    "queries": "--queries",
    "baseline": "--baseline",
    "out": "--out",
    "run_before": "--run-before",
    "run_after": "--run-after",
    "other": "--other",
}
#: The options a command reads (``-`` is stdin), as opposed to ``--out``, which it writes.
INPUT_OPTIONS = ("judgments", "qrels", "run", "corpus", "queries", "baseline", "run_before", "run_after", "other")
#: The files a BEIR folder given as input is read from (:func:`retrieval_eval.io.beir.read_beir`).
BEIR_FILES = ("queries.jsonl", "corpus.jsonl")


def _named_paths(args: argparse.Namespace, dests) -> list[tuple[str, str]]:
    """(option, value) for every file option of ``dests`` that was given, repeats included."""
    found = []
    for dest in dests:
        value = getattr(args, dest, None)
        for v in value if isinstance(value, list) else [value]:
            if v is not None:
                found.append((FILE_OPTIONS[dest], v))
    return found


def check_file_options(args: argparse.Namespace) -> None:
    """Refuse an empty file name and stdin (``-``) given for two inputs, naming the options.

    An empty name reaches the OS as "no such file" or, worse, as the current folder; stdin can
    be read once, so the second input would silently be empty.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Raises
    ------
    CLIError
        One line naming the option.
    """
    for flag, value in _named_paths(args, FILE_OPTIONS):
        if value == "":
            what = (
                "a system name"
                if args.command == "compare" and flag == "--baseline"
                else "a folder name"
                if args.command == "demo"
                else "a file name"
            )
            raise CLIError(f"{flag} is empty; give {what}")
    if args.command == "compare":  # its --baseline names a system, not a file
        stdin = [f for f, v in _named_paths(args, [d for d in INPUT_OPTIONS if d != "baseline"]) if v == "-"]
    else:
        stdin = [f for f, v in _named_paths(args, INPUT_OPTIONS) if v == "-"]
    if len(stdin) > 1:
        raise CLIError(f"'-' (stdin) given for {' and '.join(stdin)}; stdin can be read only once")
    if args.command != "demo":  # demo's --out is a folder it fills, and it reads no file
        check_out_not_input(args, keep=("baseline",) if args.command in ("score", "compare") else ())


def check_out_not_input(args: argparse.Namespace, keep: tuple[str, ...] = ()) -> None:
    """Refuse an ``--out`` that resolves to one of the command's inputs (links followed).

    ``score --out mine.jsonl --judgments mine.jsonl`` would replace the labels with a report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    keep : tuple of str
        Inputs (argparse dests) a command may roll forward in place (score's ``baseline``:
        writing this run's report where the last one was read is how a CI job keeps its
        baseline).

    Raises
    ------
    CLIError
        One line naming ``--out`` and the input it would destroy.
    """
    out = getattr(args, "out", None)
    if not out or out == "-":
        return
    target = os.path.realpath(out)
    for flag, value in _named_paths(args, [d for d in INPUT_OPTIONS if d not in keep]):
        if value == "-" or not isinstance(value, str):
            continue
        if os.path.isdir(value):
            if _read_from_folder(value, target):
                raise CLIError(
                    f"--out {out} is a file of the BEIR folder {flag} {value}; writing it would "
                    "destroy that input (choose another output file)"
                )
            continue
        same = os.path.realpath(value) == target
        if not same:
            with contextlib.suppress(OSError):
                same = os.path.samefile(value, out)
        if same:
            raise CLIError(
                f"--out {out} is the {flag} input; writing it would destroy that input (choose another output file)"
            )


def _read_from_folder(folder: str, target: str) -> bool:
    """True when ``target`` (a real path) is a file a BEIR folder is read from: any file of its
    ``qrels/`` (whichever split), its ``queries.jsonl`` or its ``corpus.jsonl``."""
    root = os.path.realpath(folder)
    parent = os.path.dirname(target)
    return parent == os.path.join(root, "qrels") or target in (os.path.join(root, n) for n in BEIR_FILES)


# -----------------------------------------------------------------------------------------------
# Reading and writing files
# -----------------------------------------------------------------------------------------------


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        if Path(path).is_char_device() or Path(path).is_block_device():  # /dev/zero would never end
            from ..io.text import read_bytes

            return read_bytes(path)  # refuses a device (not /dev/null) in one line
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise CLIError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"{path}: is a directory, expected a file") from None
    except PermissionError:
        raise CLIError(f"{path}: permission denied") from None
    except OSError as err:
        raise CLIError(f"{path}: cannot read ({err.strerror or err})") from None


def read_text(path: str) -> str:
    """The text of ``path`` (``-`` is stdin), decoded as UTF-8.

    A leading UTF-8 byte-order mark is accepted and dropped: editors on Windows write one, it
    carries no meaning in UTF-8, and refusing it would make a file that looks right fail.
    Invalid UTF-8 is refused with the line it is on; guessing an encoding would silently change
    ids.

    Parameters
    ----------
    path : str
        A file, or ``-`` for stdin.

    Returns
    -------
    str

    Raises
    ------
    CLIError
        A missing or unreadable file, or invalid UTF-8 (with its line).
    """
    return decode_text(_read_bytes(path), path)


def decode_text(data: bytes, path: str) -> str:
    """``data`` decoded as UTF-8, a leading byte-order mark dropped (see :func:`read_text`).

    Parameters
    ----------
    data : bytes
    path : str
        Named in the error.

    Returns
    -------
    str

    Examples
    --------
    >>> decode_text(b"\\xef\\xbb\\xbfq1", "f")
    'q1'
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise CLIError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[err.start]:02x}); save the file as UTF-8"
        ) from None


def load_json(path: str) -> Any:
    """The JSON document in ``path`` by the readers' rule (:func:`retrieval_eval.io.jsontext.parse_json`:
    no NaN, no duplicate key, nesting at most ``MAX_JSON_DEPTH`` deep).

    Parameters
    ----------
    path : str
        A file, or ``-`` for stdin.

    Returns
    -------
    object
        The parsed document.
    """
    from ..io import parse_json

    return parse_json(read_text(path), label=path)


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`retrieval_eval.io.safewrite.atomic_write_text`:
    a temporary file in the same folder, then a rename), so a crash never leaves half a file.

    Parameters
    ----------
    path : str
    text : str

    Raises
    ------
    CLIError
        Naming the path when the folder is missing or not writable.
    """
    from ..io.safewrite import atomic_write_text as write

    try:
        write(path, text)
    except OSError as err:
        raise CLIError(f"{path}: cannot write ({err.strerror or err})") from None


# -----------------------------------------------------------------------------------------------
# JSON output
# -----------------------------------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, NaN and missing values as null.

    Parameters
    ----------
    value : object
        A dict, list, scalar, numpy or pandas value.

    Returns
    -------
    object
        Built from dict, list, str, bool, int, float (finite) and None only.

    Examples
    --------
    >>> jsonable({"a": float("nan"), "b": (1, 2)})
    {'a': None, 'b': [1, 2]}
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return jsonable(item())
        except (TypeError, ValueError):
            pass
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return jsonable(tolist())
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    return str(value)


def dumps(data: Any) -> str:
    """``data`` as indented JSON text ending in a newline (see :func:`jsonable`).

    Examples
    --------
    >>> dumps({"n": 1})
    '{\\n  "n": 1\\n}\\n'
    """
    return json.dumps(jsonable(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def frame_records(frame) -> list[dict[str, Any]]:
    """A DataFrame (index included when it is named) as JSON-ready records.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    list of dict
    """
    if frame.index.name is not None or any(n is not None for n in frame.index.names):
        frame = frame.reset_index()
    return [jsonable(r) for r in frame.to_dict(orient="records")]


# -----------------------------------------------------------------------------------------------
# Errors: one line naming the file
# -----------------------------------------------------------------------------------------------

#: The generic labels a library message uses when it does not know the file.
GENERIC_LABELS = ("judgments", "run", "queries", "corpus", "qrels")


def out_of_memory(argv: list[str]) -> str:
    """The one line said when the process runs out of memory (a ``MemoryError``): which inputs
    were being read and what can help, instead of a chain of tracebacks and exit 1.

    Parameters
    ----------
    argv : list of str
        The command line, whose file options are named.

    Returns
    -------
    str
    """
    files = [
        argv[i + 1]
        for i, a in enumerate(argv[:-1])
        if a in ("--judgments", "--qrels", "--run", "--corpus", "--queries", "--run-before", "--run-after", "--other")
    ]
    what = f" reading {', '.join(files)}" if files else ""
    return (
        f"out of memory{what}: the input expands to more than this machine holds (a parquet file "
        "is decompressed whole; --chunk-rows sets the block a large run is read in)"
    )


def one_line(text: str) -> str:
    """``text`` with its whitespace runs (newlines included) as single spaces."""
    return " ".join(str(text).split())


def from_a_library(err: BaseException) -> bool:
    """True for a ValueError raised by pandas, numpy or pyarrow themselves (``ArrowInvalid``...):
    that is this tool mishandling data, a bug to report, not input to blame the user for."""
    module = type(err).__module__ or ""
    return module.split(".")[0] in ("pyarrow", "pandas", "numpy")


@contextlib.contextmanager
def naming(path: str):
    """Name ``path`` in a library refusal that does not (a ``ValueError`` about the data, or a
    :class:`FormatError` labelled with a generic ``judgments``/``run``): every error line names
    the file it is about."""
    try:
        yield
    except FormatError as err:
        if err.label in GENERIC_LABELS:
            raise FormatError(path, err.line, err.detail) from None
        raise
    except ValueError as err:
        if from_a_library(err):
            raise
        raise CLIError(f"{path}: {err}") from None
