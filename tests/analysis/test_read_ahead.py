"""``read_ahead``: a file's next block read on a second thread, nothing else changed."""

import threading

import pytest

from retrieval_eval.analysis.evaluation.blocks import read_ahead


class Source:
    """A generator's stand-in that records how far it was read, on which thread, and closing."""

    def __init__(self, n, fail_at=None):
        self.n, self.fail_at = n, fail_at
        self.read, self.threads, self.closed = 0, set(), False

    def __iter__(self):
        return self

    def __next__(self):
        self.threads.add(threading.get_ident())
        if self.read == self.fail_at:
            raise ValueError(f"bad block {self.read}")
        if self.read == self.n:
            raise StopIteration
        self.read += 1
        return self.read - 1

    def close(self):
        self.closed = True


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_every_item_in_order_read_on_another_thread(n):
    source = Source(n)
    assert list(read_ahead(source)) == list(range(n))
    assert threading.get_ident() not in source.threads
    assert source.closed


def test_reads_one_block_ahead_no_more():
    source = Source(10)
    ahead = read_ahead(source)
    for i in range(4):
        assert next(ahead) == i
        # the caller holds block i; block i + 1 is read (or being read), block i + 2 is not
        threading.Event().wait(0.01)
        assert source.read <= i + 2
    ahead.close()
    assert source.closed and source.read <= 5


def test_error_raised_where_its_block_is_asked_for():
    source = Source(10, fail_at=3)
    ahead = read_ahead(source)
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="bad block 3"):
        next(ahead)
    assert source.closed


def test_caller_error_closes_the_source():
    source = Source(10)

    def consume():
        for i in read_ahead(source):
            if i == 2:
                raise RuntimeError("the caller's own")

    with pytest.raises(RuntimeError):
        consume()
    assert source.closed and source.read <= 4


def test_streamed_file_equals_in_memory_with_many_blocks(tmp_path):
    import pandas as pd

    from retrieval_eval import evaluate

    lines, qrels = [], []
    for q in range(40):
        for r in range(1, 16):
            lines.append(f"q{q} Q0 d{(q * 7 + r * 3) % 50} {r} {100 - r - (q % 3) / 10} sys")
        qrels += [f"q{q} 0 d{(q * 7 + 3) % 50} 1", f"q{q} 0 d{(q * 5) % 50} 2"]
    run, judgments = tmp_path / "run.trec", tmp_path / "qrels.trec"
    run.write_text("\n".join(lines) + "\n")
    judgments.write_text("\n".join(qrels) + "\n")
    streamed = evaluate(str(judgments), str(run), k=(5, 10), chunk_rows=31)
    memory = evaluate(str(judgments), str(run), k=(5, 10))
    pd.testing.assert_frame_equal(streamed.per_query, memory.per_query)
    pd.testing.assert_frame_equal(streamed.summary, memory.summary)
