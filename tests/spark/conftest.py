"""One SparkSession for tests/spark (local[2], 4 shuffle partitions, UI off): Spark's start-up is paid
once, and only when these tests run."""

from __future__ import annotations

import os
import shutil

import pytest


def _expected_pyspark() -> None:
    """``RANKLENS_EXPECT_PYSPARK=3.5`` (``make test-spark35``): fail, not skip, unless that pyspark is imported."""
    want = os.environ.get("RANKLENS_EXPECT_PYSPARK")
    if not want:
        return
    try:
        import pyspark
    except ImportError:
        pytest.fail(f"RANKLENS_EXPECT_PYSPARK={want}: pyspark is not importable")
    if not (pyspark.__version__ + ".").startswith(want + "."):
        pytest.fail(f"RANKLENS_EXPECT_PYSPARK={want}: pyspark {pyspark.__version__} was imported ({pyspark.__file__})")
    if shutil.which("java") is None:
        pytest.fail(f"RANKLENS_EXPECT_PYSPARK={want}: no Java runtime")


@pytest.fixture(scope="session")
def spark():
    _expected_pyspark()
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'ranklens[spark]'")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime on this machine (Spark needs one: apt-get install openjdk-17-jre-headless)")
    from ranklens.spark import session

    s = session("local[2]", shuffle_partitions=4)
    yield s
    s.stop()


def pytest_collection_modifyitems(items):
    # py4j leaves its gateway sockets to the garbage collector (ResourceWarning): not ranklens' to fix
    for item in items:
        if "tests/spark" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("ignore::ResourceWarning"))
            item.add_marker(pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"))
