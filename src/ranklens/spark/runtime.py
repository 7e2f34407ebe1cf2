"""The Spark engine's SparkSession, and Spark's failures as one line saying what is missing (issue 22 item 12).

Spark reports a missing Hadoop configuration, a missing file-system connector or a Java runtime it cannot
start as a Py4J/Java stack trace; :func:`spark_errors` turns every such failure into one :class:`InputError`
(exit 2 on the command line) that names what is missing and how to provide it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from ranklens.errors import InputError, MissingDependencyError, RanklensError

__all__ = ["arrow_frame", "check_master", "is_connect", "pandas_checks_quiet", "require_pyspark", "session", "spark_errors"]


@contextlib.contextmanager
def pandas_checks_quiet() -> Iterator[None]:
    """pyspark's checks of the pandas version, quiet: 3.5 compares versions with distutils' LooseVersion (a
    DeprecationWarning), 4.x warns that it does not fully support pandas 3 (a FutureWarning on every pandas
    call; what ranklens uses of it is tested on pandas 3: tests/spark). The one line of an error and the
    byte-for-byte output of ``--engine spark`` stay free of them."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
        yield


def require_pyspark() -> Any:
    """The pyspark module, or :class:`MissingDependencyError` with the install hint."""
    try:
        import pyspark
    except ImportError:
        raise MissingDependencyError("pyspark", "spark", "the Spark engine") from None
    return pyspark


def arrow_frame(spark: Any, table: Any) -> Any:
    """A DataFrame of an Arrow table (pyspark 4 takes the table; 3.5 takes it through pandas)."""
    import pyarrow as pa

    schema = ", ".join(
        f"{f.name} {'string' if pa.types.is_string(f.type) or pa.types.is_large_string(f.type) else 'int' if pa.types.is_int32(f.type) else 'double'}"
        for f in table.schema
    )
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        with pandas_checks_quiet():
            return spark.createDataFrame(table, schema=schema)
    import warnings

    with warnings.catch_warnings():  # pyspark 3.5 calls pandas and distutils functions that warn of their removal
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        import pandas as pd  # (numpy columns: pyspark 3.5's Arrow conversion does not take pandas 3's string dtype)

        frame = pd.DataFrame({
            c: pd.Series(a.to_numpy(zero_copy_only=False), dtype=object if a.type in (pa.string(), pa.large_string()) else None)
            for c, a in zip(table.column_names, table.columns)
        })
        return spark.createDataFrame(frame, schema=schema)


def is_connect(master: str) -> bool:
    """A Spark Connect URL (``sc://host:port``): the session is a Connect client, nothing else changes."""
    return master.startswith("sc://")


def check_master(master: str, environ: Any = None) -> None:
    """What a master needs from the environment before Spark starts: YARN reads its ResourceManager's
    address from the Hadoop configuration (``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR``), and every master but a
    Connect URL starts a local JVM (``java`` on the PATH, or ``JAVA_HOME``).

    >>> check_master("yarn", environ={})
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: --spark-master yarn needs the Hadoop configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR) to the directory holding the cluster's core-site.xml and yarn-site.xml
    """
    env = os.environ if environ is None else environ
    if master.split(":", 1)[0] == "yarn" and not (env.get("HADOOP_CONF_DIR") or env.get("YARN_CONF_DIR")):
        raise InputError(
            f"--spark-master {master} needs the Hadoop configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR) to the "
            "directory holding the cluster's core-site.xml and yarn-site.xml"
        )
    if not is_connect(master) and not env.get("JAVA_HOME") and shutil.which("java", path=env.get("PATH")) is None:
        raise InputError(
            f"--engine spark needs a Java runtime (Spark {_needed_java()}): none on the PATH and JAVA_HOME is not "
            "set; install one (apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        )


def session(master: str = "local[2]", *, shuffle_partitions: int = 4, app_name: str = "ranklens") -> Any:
    """A SparkSession (``getOrCreate``: an active one is reused) with the UI off and quiet logs; a master
    ``sc://host:port`` connects to a Spark Connect server instead of starting a driver.

    >>> spark = session("local[2]")  # doctest: +SKIP
    """
    require_pyspark()
    check_master(master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with spark_errors(f"--spark-master {master}"), pandas_checks_quiet():  # (the Connect client checks pandas)
        if is_connect(master):
            builder = SparkSession.builder.remote(master)
        else:
            builder = (
                SparkSession.builder.master(master).appName(app_name)
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_quiet_logging()}")
            )
        spark = (
            builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate()
        )
        if not is_connect(master):
            spark.sparkContext.setLogLevel("ERROR")
    return spark


_LOG4J2 = """# ranklens: Spark's own log lines at ERROR only, so a command's output and its one-line errors stay clean
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""


def _quiet_logging() -> str:
    """The path of a log4j2 configuration that logs errors only (written once to the temporary directory):
    without one, Spark announces its default profile and logs warnings about the host on every start."""
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"ranklens-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}.properties")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == _LOG4J2:
                return path
    except OSError:
        pass
    temporary = f"{path}.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(_LOG4J2)
    os.replace(temporary, path)
    return path


def _needed_java() -> str:
    try:
        import pyspark

        major = int(pyspark.__version__.split(".")[0])
    except (ImportError, ValueError):
        major = 4
    return "4 runs on Java 17 or 21" if major >= 4 else "3.5 runs on Java 8, 11 or 17"


def _java_version() -> str | None:
    """The version ``java -version`` reports (JAVA_HOME's first), or None."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
    return found.group(1) if found else None


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "Caused by", "...")) and "Traceback" not in line:
            return line[:300]
    return "unknown error"


_NO_FS = re.compile(r'No FileSystem for scheme "?([A-Za-z0-9+.-]+)"?|Class (org\.apache\.hadoop\.fs\.[\w.]+) not found')
_S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem"


def _hadoop_version(spark: Any) -> str | None:
    try:
        return str(spark.sparkContext._jvm.org.apache.hadoop.util.VersionInfo.getVersion())
    except Exception:  # (a Connect session has no JVM here)
        return None


def explain(error: BaseException, what: str, spark: Any = None) -> str:
    """One line for a Spark failure while doing ``what`` (a path, or ``--spark-master URL``): what is
    missing and how to provide it, else Spark's own first line."""
    text = str(error)
    found = _NO_FS.search(text)
    if found:
        scheme = found.group(1) or ("s3a" if found.group(2) == _S3A else None)
        if scheme in ("s3a", "s3", "s3n") or found.group(2) == _S3A:
            version = _hadoop_version(spark) or "<Spark's Hadoop version>"
            return (
                f"{what}: Spark has no S3 connector (the hadoop-aws jar, class {_S3A}); start it with the jar matching "
                f"its Hadoop {version}: export PYSPARK_SUBMIT_ARGS='--packages org.apache.hadoop:hadoop-aws:{version} "
                "pyspark-shell' (or spark.jars.packages in spark-defaults.conf), and use s3a:// paths"
            )
        name = scheme or found.group(2)
        return (
            f"{what}: Spark has no file system for {name}:// paths; add its connector jar "
            "(spark.jars.packages in spark-defaults.conf, or PYSPARK_SUBMIT_ARGS='--packages … pyspark-shell')"
        )
    if "HADOOP_CONF_DIR" in text or "YARN_CONF_DIR" in text:
        return f"{what}: YARN needs the Hadoop configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR)"
    if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
        return f"{what}: no such file or directory"
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text or "UnsupportedClassVersionError" in text:
        found_java = _java_version()
        return (
            f"{what}: Spark's Java process did not start (Spark {_needed_java()}; found Java {found_java or 'none'}); "
            "set JAVA_HOME to a supported Java runtime (apt-get install openjdk-17-jre-headless)"
        )
    return f"{what}: Spark failed: {_first_line(text)}"


def _from_spark(error: BaseException) -> bool:
    module = type(error).__module__ or ""
    return module.startswith(("py4j", "pyspark")) or "Java gateway process exited" in str(error)


@contextlib.contextmanager
def spark_errors(what: str, spark: Any = None) -> Iterator[None]:
    """Turn a failure of Spark (a Py4J or PySpark exception, a Java stack trace) while doing ``what`` into
    one :class:`InputError` line (:func:`explain`); ranklens' own errors pass through."""
    try:
        yield
    except RanklensError:
        raise
    except Exception as e:
        if not _from_spark(e):
            raise
        raise InputError(explain(e, what, spark)) from None
