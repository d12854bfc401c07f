"""Helpers the io tests share: the refusal message of a call, the contract's dtypes, the careful pass."""

from __future__ import annotations

import pandas as pd
import pytest

from retrieval_eval.errors import FormatError


def refused(fn, *args, **kwargs) -> str:
    with pytest.raises(FormatError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def assert_dtypes(df: pd.DataFrame, columns: dict) -> None:
    assert list(df.columns[: len(columns)]) == list(columns)
    for name, dtype in columns.items():
        assert df[name].dtype == dtype, (name, df[name].dtype)
        if dtype == "string":
            assert isinstance(df[name].dtype, pd.StringDtype) and df[name].dtype.na_value is pd.NA


J = '{"query_id":"q1","doc_uri":"d1","relevance":1}'


def same_outcome(read, parse, path, text, **kwargs):
    """``read(path)`` returns what ``parse(text)`` returns, or raises its message (label aside)."""
    try:
        expected = parse(text, **kwargs)
    except FormatError as err:
        message = str(err)
        assert refused(read, path, **kwargs) == str(path) + message[message.index(":") :]
        return None
    got = read(path, **kwargs)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got.attrs == expected.attrs
    return got


JUDGMENT_FILES = [
    J + "\n" + '{"query_id":"q1","doc_uri":"d2","relevance":0,"chunk_id":"c","stratum":null}\n',
    J,
    J + "\r\n" + J + "\r\n",
    '{"query_id":"q1","doc_uri":"d1","relevance":1,"labeled_by":"human:a","notes":"x\\u00e9\\ud83d\\ude00"}\n',
    J + "\n\n" + J + "\n",  # a blank line shifts line numbers
    J + "\n// a comment\n" + J + "\n",
    J + "\n  " + J + "\n",  # indented
    J + " " + J + "\n",  # two objects on one line
    J + " " + J + "\n\n",
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":1,"zz":1.50}\n',  # an unknown field
    '{"query_id":"q1","doc_uri":"d1","relevance":1,"zz":[1]}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":-1}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":1.0}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":"1"}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1"}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"","relevance":1}\n',
    J + "\n" + '{"query_id":null,"doc_uri":"d","relevance":1}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":1,"query":5}\n',
    J + "\n" + '{"query_id":"q1","query_id":"q2","doc_uri":"d1","relevance":1}\n',
    J + "\n" + '{"query_id":"\\ud800","doc_uri":"d1","relevance":1}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":99999999999999999999}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":NaN}\n',
    J + "\n" + "[1]\n",
    "\ufeff" + J + "\n",
    '{"query_id":"q\u00e9","doc_uri":"d1","relevance":2}\n',
    "",
    "\n",
]
