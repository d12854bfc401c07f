"""The CLI's small conventions (issue 12, rule 9): ``help`` and ``help VERB`` print what
``--help`` prints; ``-v``/``--version`` work before or after a verb and win over missing
arguments; an unknown option is reported (exit 2, one line naming it) before any "missing
argument" message."""

from __future__ import annotations

import io

import pytest

from retrieval_eval.cli import app as cli


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


VERBS = list(cli.COMMANDS)


def test_help_verb_prints_the_same_text_as_help_option():
    assert run("help") == run("--help")
    code, out, err = run("help")
    assert code == 0 and out.startswith("usage: retrieval-eval") and err == ""


@pytest.mark.parametrize("verb", VERBS)
def test_help_verb_of_a_verb_prints_the_same_text_as_its_help_option(verb):
    code, out, err = run("help", verb)
    assert (code, out, err) == run(verb, "--help")
    assert code == 0 and out.startswith(f"usage: retrieval-eval {verb}")


def test_help_of_an_unknown_verb_is_a_usage_error():
    code, out, err = run("help", "scroe")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "unknown command 'scroe'" in err and "did you mean 'score'" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["-v"],
        ["--version"],
        ["-v", "score"],
        ["score", "-v"],
        ["score", "--version"],
        ["drift", "--judgments", "j.jsonl", "-v"],  # --corpus missing: the version wins
        ["help", "-v"],  # (an unknown option beside -v is a usage error: tests/cli/test_issue28_cli.py)
    ]
    + [[verb, "-v"] for verb in VERBS],
)
def test_version_before_or_after_a_verb_wins_over_missing_arguments(argv):
    code, out, err = run(*argv)
    assert (code, err) == (0, "")
    assert out == f"retrieval-eval {cli.version()}\n"


def test_version_after_double_dash_is_not_an_option():
    code, out, err = run("score", "--", "-v")
    assert code == 2 and out == "" and err.startswith("retrieval-eval: error:")


@pytest.mark.parametrize(
    "argv, name",
    [
        (["score", "--bogus"], "--bogus"),  # every required argument missing too
        (["score", "--judgments", "j.jsonl", "--bogus"], "--bogus"),
        (["score", "--judgmnets", "j.jsonl", "--run", "r.jsonl"], "--judgmnets"),
        (["drift", "--fixx"], "--fixx"),
        (["compare", "--judgments", "j", "--run", "r", "--metrics=ndcg"], "--metrics"),
        (["validate", "-x"], "-x"),
    ],
)
def test_unknown_option_is_reported_before_missing_arguments(argv, name):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert f"unknown option '{name}' for '{argv[0]}'" in err
    assert "required" not in err


def test_unknown_option_suggests_the_nearest():
    _, _, err = run("score", "--judgmnets", "j.jsonl")
    assert "did you mean '--judgments'?" in err


def test_values_that_look_like_options_are_not_refused(tmp_path):
    # A negative number and stdin's '-' are values, not options: argparse decides them.
    code, _, err = run("score", "--judgments", "-", "--run", str(tmp_path / "none.jsonl"), "-k", "-1")
    assert code == 2 and "unknown option" not in err
