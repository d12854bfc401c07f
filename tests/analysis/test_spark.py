"""The Spark recipe of docs/scale.md, run on a local Spark session: equal to in-memory evaluate.

Skipped when pyspark (or a Java runtime for it) is not installed: CI installs neither (see
docs/scale.md). The same per-group functions are tested without Spark in test_streaming.py.
"""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install pyspark)")
if shutil.which("java") is None:
    pytest.skip("no Java runtime for Spark (apt-get install default-jre-headless)", allow_module_level=True)

from test_streaming import assert_same, make_case, one_stratum_per_query

import retrieval_eval as re_
from retrieval_eval.analysis.evaluation.streaming import Plan


@pytest.fixture(scope="module")
def spark():
    import os

    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # Spark's Python workers: this environment

    session = (
        SparkSession.builder.master("local[2]")
        .appName("retrieval-eval-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_spark_recipe_equals_in_memory(spark):
    from pyspark.sql import functions as F

    judgments, run = make_case(15, n_queries=200)
    judgments = one_stratum_per_query(judgments)
    # The recipe, as docs/scale.md writes it.
    plan = Plan(judgments, k=(1, 5, 10))
    sdf = spark.createDataFrame(run.astype({"system": str, "query_id": str, "doc_id": str}))
    keyed = sdf.withColumn("_key", F.monotonically_increasing_id()).repartition(6)

    def score(group):  # a plain function: Spark reads a bound method's arity as (key, frame)
        return plan.score_rows(group)

    rows = keyed.groupBy("query_id").applyInPandas(score, schema=plan.schema()).toPandas()
    first = {r["system"]: r["first"] for r in keyed.groupBy("system").agg(F.min("_key").alias("first")).collect()}
    ev = plan.finish_rows(rows, first)
    assert_same(re_.evaluate(judgments, run), ev)
    assert np.isfinite(ev.summary["ndcg@10"]).all()
