"""RAG context-set evaluation: RA-nWG@K and its companions (Dallaire, arXiv:2511.09545; spec §6).

The measures themselves (``RAnWG@10``, ``PROC@10``, …) are defined in :mod:`ranklens.measures.rag` and
computed by :mod:`ranklens.engine.kernels.rag`, so ``ranklens eval`` and :func:`ranklens.evaluate` know them.
This feature adds the paper's report for one run:

* :func:`evaluate_rag` — every measure at each K, with PROC and %PROC over a separate candidate-pool run
  when given (``ranklens rag QRELS RUN --pool POOL -k 10``).
"""

from __future__ import annotations

from ranklens.rag.evaluate import evaluate_rag

__all__ = ["evaluate_rag"]
