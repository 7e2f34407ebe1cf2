"""The ranklens benchmark harness: synthetic data (``generate``), timed runs against the peers (``run``).

Run from the repository root: ``python -m bench.generate --shapes S`` and ``python -m bench.run --shapes S``.
"""
