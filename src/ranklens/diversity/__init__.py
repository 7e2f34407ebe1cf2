"""Diversity evaluation with intent-level judgements: α-nDCG@k (Clarke et al., SIGIR 2008; spec §7.10).

The standard :class:`~ranklens.Qrels` hold one label per (query, document); α-nDCG needs to know *which*
intents (subtopics, nuggets) a document covers, so it reads its own qrels (``qid intent docid rel``, the
TREC diversity format) and has its own entry points:

* :func:`read_intent_qrels` — TREC text (optionally gzipped), a DataFrame/Arrow table with columns
  ``query_id, intent, doc_id, relevance``, or a dict ``{qid: {intent: {doc: rel}}}``;
* :func:`evaluate_diversity` — several α-nDCG measures (``alpha-nDCG@10``,
  ``alpha-nDCG(alpha=0.3)@20``) over one run, returning :class:`~ranklens.Results`;
* :func:`alpha_ndcg` — the one-measure shortcut.

The command line is ``ranklens diversity QRELS RUN [RUN...] -m alpha-nDCG@10``. ``ranklens eval`` knows the
measure name but cannot compute it from document-level qrels, and says so.
"""

from __future__ import annotations

from ranklens._lazy import lazy_names

__all__ = ["IntentQrels", "alpha_ndcg", "evaluate_diversity", "read_intent_qrels"]


_WHERE = {
    "IntentQrels": "ranklens.data.intents",
    "read_intent_qrels": "ranklens.data.intents",
    "alpha_ndcg": "ranklens.diversity.alpha",
    "evaluate_diversity": "ranklens.diversity.alpha",
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())  # `import ranklens.diversity` stays light
