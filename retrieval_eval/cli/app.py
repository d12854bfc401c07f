"""The ``retrieval-eval`` command line: a thin face on the library (SPEC A6).

Exit codes are the contract a CI job reads:

- ``0``: ok (the verdict is PASS, the labels are all VALID, the judgment set is sound);
- ``1``: a finding: a gate failed, the verdict is INDETERMINATE, labels decayed, ``validate``
  found an error;
- ``2``: the command could not run as asked: a usage error, or input that is missing,
  unreadable or malformed. Exactly one line goes to stderr, naming the file and, where there
  is one, the line, and never a traceback: a CI log should say what to fix, not where the
  tool's stack was.
- ``3``: an internal error (a bug in this tool), also one line; set ``RETRIEVAL_EVAL_DEBUG=1``
  for the traceback.

Nothing here computes a metric. The command line is layered like the package:

- :mod:`.parser`: the verbs, their options and help (choices from the library's constants);
- :mod:`.inputs`: every file option read through the io layer's one detection rule;
- :mod:`.score`, :mod:`.commands`, :mod:`.trust`, :mod:`.trec_eval`: one ``cmd_*`` per verb,
  calling the library once;
- :mod:`.render` and :mod:`.term`: what a result looks like in a terminal;
- :mod:`.common`: what they share (the usage error, exit codes, option types, JSON output);
- this module: :func:`main`, which turns every expected failure into one line and an exit
  code.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..analysis.decisions.gates import GateError
from ..errors import FormatError
from . import inputs
from .common import (
    EXIT_FINDING,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CLIError,
    atomic_write_text,
    check_file_options,
    from_a_library,
    one_line,
    out_of_memory,
    read_text,
)
from .parser import (
    COMMANDS,
    build_parser,
    check_command,
    check_options,
    help_argv,
    join_negative_numbers,
    version,
    wants_version,
)
from .render import Out
from .term import color_enabled, escape
from .trec_eval import getopt_argv

__all__ = ["CLIError", "COMMANDS", "atomic_write_text", "build_parser", "main", "read_text"]


def _check_options_beside_version(argv: list[str]) -> None:
    """Refuse an unknown option on a ``--version`` line: it is a usage error whatever else is
    given (SPEC: exit 2), while a missing argument is not, since the version is all that runs."""
    top = ("-h", "--help", "-v", "--version")
    for token in argv:
        if token == "--" or token in COMMANDS:
            break
        if token.startswith("-") and token.split("=", 1)[0] not in top:
            raise CLIError(f"unknown option '{token.split('=', 1)[0]}'; see '{PROG} --help'")
    head = argv[: argv.index("--")] if "--" in argv else argv
    if any(token in COMMANDS for token in head):
        check_options(build_parser(), argv)


def _run(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """Parse ``argv`` and run its verb; a failure raises, and :func:`main` words it."""
    if wants_version(argv):
        _check_options_beside_version(argv)
        stdout.write(f"{PROG} {version()}\n")
        stdout.flush()
        return EXIT_OK
    argv = help_argv(argv)
    check_command(argv)
    if "trec_eval" in argv:  # trec_eval's getopt syntax (-M100, -qc, --measure=map), one option a token
        at = argv.index("trec_eval") + 1
        argv = [*argv[:at], *getopt_argv(argv[at:])]
    parser = build_parser()
    check_options(parser, argv)
    try:
        with contextlib.redirect_stdout(stdout):  # argparse prints help to sys.stdout
            args = parser.parse_args(join_negative_numbers(argv))
    except SystemExit as done:  # --help and --version print, then exit 0
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    check_file_options(args)
    color = color_enabled(getattr(args, "color", "auto"), stdout)
    out = Out(stdout, color)
    args.warn = lambda text: stderr.write(f"{PROG}: warning: {one_line(text)}\n")
    inputs.check_output_flags(args)
    code = args.handler(args, out)
    stdout.flush()
    return code


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it).

    Every expected failure (usage errors, unreadable or malformed files, malformed gates) is
    reported as one ``retrieval-eval: error: ...`` line on stderr with exit code 2.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default ``sys.argv[1:]``).
    stdout, stderr : text stream, optional
        Where output and the error line go (default the process's own).

    Returns
    -------
    int
        0 ok, 1 a finding, 2 a usage error or malformed input, 3 an internal error.

    Examples
    --------
    >>> import io
    >>> main(["--version"], stdout=io.StringIO())
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr

    def fail(message: str, code: int = EXIT_USAGE) -> int:
        stderr.write(f"{PROG}: error: {escape(one_line(message))}\n")
        stderr.flush()
        return code

    internal: BaseException | None = None
    try:
        return _run(argv, stdout, stderr)
    except (CLIError, FormatError, GateError) as err:
        return fail(str(err))
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_FINDING
    except UnicodeDecodeError as err:
        return fail(f"not valid UTF-8: {err}")
    except OSError as err:
        if err.filename is not None:
            return fail(f"{err.filename}: {err.strerror or err}")
        return fail(str(err))
    except ValueError as err:
        if not from_a_library(err):  # the library's own refusal of an input: a usage error
            return fail(str(err))
        internal = err
    except KeyboardInterrupt:
        return 130
    except MemoryError:  # one line, exit 2: the input (or an option) asks for more than there is
        return fail(out_of_memory(argv))
    except Exception as err:  # a bug in this tool, not in the input
        internal = err
    assert internal is not None
    if os.environ.get("RETRIEVAL_EVAL_DEBUG"):
        raise internal
    return fail(
        f"internal error: {type(internal).__name__}: {internal} "
        "(this is a bug; set RETRIEVAL_EVAL_DEBUG=1 for the traceback)",
        EXIT_INTERNAL,
    )
