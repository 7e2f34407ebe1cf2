"""Build the trec_eval C program from its public source tree (usnistgov/trec_eval) for the benchmarks.

    python -m bench.run --trec-eval-src ~/src/trec_eval ...

The source files the upstream ``Makefile`` compiles (``*.c``, ``*.h`` and the ``Makefile`` itself) are
copied to a build directory under ``bench/out/trec_eval/`` (git-ignored), and the upstream ``trec_eval``
target is made there with optimisation (``make CFLAGS="-O3 ..."``): the whole program, every measure.
Nothing is written into the source tree. The build directory is named after a hash of the sources and
flags, so a second run reuses the binary, and a later run without ``--trec-eval-src`` finds it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CACHE_DIR", "CFLAGS", "build", "cached_binary"]

CACHE_DIR = Path(__file__).resolve().parent / "out" / "trec_eval"
#: Upstream's own flags (``-I$(H)``, the version define) with -O3; ``-w`` because upstream's warning
#: switches are clang's. ``$(H)`` and ``$(VERSIONID)`` are expanded by make from the upstream Makefile.
CFLAGS = r"-O3 -I$(H) -w -DVERSIONID=\"$(VERSIONID)\""
_NEEDED = ("Makefile", "trec_eval.c", "m_ndcg_cut.c")


def _sources(src: Path) -> list[Path]:
    return sorted(p for p in src.iterdir() if p.is_file() and (p.suffix in {".c", ".h"} or p.name == "Makefile"))


def _key(files: list[Path]) -> str:
    digest = hashlib.sha256(CFLAGS.encode())
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cached_binary(cache_dir: Path | None = None) -> str | None:
    """The most recently built binary in the cache (default ``CACHE_DIR``), if any."""
    cache_dir = CACHE_DIR if cache_dir is None else cache_dir
    if not cache_dir.is_dir():
        return None
    built = [p / "trec_eval" for p in cache_dir.iterdir() if os.access(p / "trec_eval", os.X_OK)]
    return str(max(built, key=lambda p: p.stat().st_mtime)) if built else None


def build(src: str | Path, cache_dir: Path | None = None, *, log: bool = True) -> str:
    """The path of a trec_eval binary built from the source tree ``src`` (reused when already built)."""
    cache_dir = CACHE_DIR if cache_dir is None else cache_dir
    src = Path(src).expanduser().resolve()
    missing = [name for name in _NEEDED if not (src / name).is_file()]
    if missing:
        raise SystemExit(f"--trec-eval-src {src}: not a trec_eval source tree (no {', '.join(missing)})")
    files = _sources(src)
    target = cache_dir / _key(files)
    exe = target / "trec_eval"
    if os.access(exe, os.X_OK):
        if log:
            print(f"trec_eval: using {exe} (built earlier from {src})", file=sys.stderr, flush=True)
        return str(exe)
    if shutil.which("make") is None or shutil.which("gcc") is None and shutil.which("cc") is None:
        raise SystemExit("--trec-eval-src needs make and a C compiler (gcc) to build trec_eval")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache_dir) as tmp:
        for path in files:
            shutil.copy2(path, tmp)
        command = ["make", "-C", tmp, f"CFLAGS={CFLAGS}", "trec_eval"]
        if shutil.which("gcc") is None:
            command.insert(3, "CC=cc")
        if log:
            print(f"trec_eval: building from {src} in {target} (make CFLAGS='{CFLAGS}')", file=sys.stderr, flush=True)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not os.access(Path(tmp) / "trec_eval", os.X_OK):
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise SystemExit(f"building trec_eval from {src} failed (exit {done.returncode}):\n{tail}")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
        os.makedirs(tmp)  # so that TemporaryDirectory's clean-up finds something to remove
    return str(exe)
