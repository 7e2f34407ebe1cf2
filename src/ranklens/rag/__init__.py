"""RAG evaluation: RA-nWG@K context sets, and retrieval evaluation of RAG sample files.

The measures themselves (``RAnWG@10``, ``PROC@10``, …) are defined in :mod:`ranklens.measures.rag` and
computed by :mod:`ranklens.engine.kernels.rag`, so ``ranklens eval`` and :func:`ranklens.evaluate` know them.
This feature adds:

* :func:`evaluate_rag` — the paper's report for one run: every measure at each K, with PROC and %PROC over
  a separate candidate-pool run when given (``ranklens rag QRELS RUN --pool POOL -k 10``);
* :func:`read_rag` — a RAG sample file (``{"query", "retrieved", "reference"}``, RAGAS samples, LlamaIndex
  retrieval rows) as ``(Qrels, Run, notes)``, references matched to retrieved chunks by id or normalised
  text (:mod:`ranklens.rag.inputs`, :mod:`ranklens.rag.matching`, :mod:`ranklens.rag.convert`);
* :func:`evaluate_rag_file` — any measures of such a file plus RAGAS's non-LLM context precision and
  recall (:mod:`ranklens.rag.context`; ``ranklens rag samples.jsonl -m P@5 nDCG@10``).
"""

from __future__ import annotations

from ranklens.rag.convert import read_rag
from ranklens.rag.evaluate import evaluate_rag
from ranklens.rag.report import evaluate_rag_file

__all__ = ["evaluate_rag", "evaluate_rag_file", "read_rag"]
