"""summarize's interval uses the Student-t quantile correct to the last bit (issue 28, item 9).

Oracles: the closed forms for df = 1 (the Cauchy quantile, tan) and df = 2, evaluated in 50-digit
decimals here, and scipy.stats.t.ppf, whose own float CDF leaves it within a few dozen units in
the last place.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import stats

from retrieval_eval.analysis.evaluation.measurement import summarize, t_half_width

P = Decimal(0.975)  # noqa: RUF032 (the float 0.975 exactly, as every float implementation takes it)


def _exact_df1() -> float:
    with localcontext() as ctx:
        ctx.prec = 50
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582")
        x = pi * (1 - P)  # t = tan(pi (p - 1/2)) = cos(x) / sin(x)
        sin = cos = Decimal(0)
        term = Decimal(1)
        for k in range(40):  # Taylor terms x^k / k!
            if k % 4 == 0:
                cos += term
            elif k % 4 == 1:
                sin += term
            elif k % 4 == 2:
                cos -= term
            else:
                sin -= term
            term = term * x / (k + 1)
        return float(cos / sin)


def _exact_df2() -> float:
    with localcontext() as ctx:
        ctx.prec = 50
        return float((2 * P - 1) / (2 * P * (1 - P)).sqrt())


def test_t_quantile_is_exact_for_the_closed_forms():
    assert float(t_half_width(1.0, 2)) == _exact_df1() / np.sqrt(2.0)
    assert float(t_half_width(1.0, 3)) == _exact_df2() / np.sqrt(3.0)


@pytest.mark.parametrize("df", range(1, 121))
def test_t_quantile_within_scipys_own_error(df):
    ours = float(t_half_width(1.0, df + 1)) * np.sqrt(df + 1.0)
    ref = float(stats.t.ppf(0.975, df))
    assert abs(ours - ref) <= 32 * np.spacing(ref)


def test_summarize_interval_is_the_student_t_interval():
    rng = np.random.default_rng(28)
    for n in (2, 3, 5, 7, 30, 121, 400):
        x = rng.random(n)
        m = summarize(x)
        df = min(n - 1, 120)
        half = stats.t.ppf(0.975, df) * x.std(ddof=1) / np.sqrt(n)
        assert m.ci[0] == pytest.approx(x.mean() - half, abs=1.5e-12)
        assert m.ci[1] == pytest.approx(x.mean() + half, abs=1.5e-12)
