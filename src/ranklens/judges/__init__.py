"""Relevance labels from judges: an LLM behind any OpenAI-compatible endpoint, or an offline embedding model.

>>> from ranklens.judges import Judgment, Pair, judge_pairs
>>> class Short:
...     identity = ("local:short", "short", "v1")
...     def judge(self, query, documents):
...         return [Judgment(1 if len(d) < 10 else 0, "length rule", d) for d in documents]
>>> judge_pairs([Pair("q1", "ndcg", "d1", "short")], Short()).labels()
{'q1': {'d1': 1}}

The contract, the rubric and what to trust are in docs/judges.md. The function
:func:`ranklens.judges.agreement.agreement` is exported as ``judge_agreement`` so that ``ranklens.judges.agreement``
stays the module.
"""

from ranklens.judges.accounting import Price, Usage, load_prices
from ranklens.judges.agreement import JudgeAgreement, SystemOrdering, system_ordering
from ranklens.judges.agreement import agreement as judge_agreement
from ranklens.judges.cache import JudgeCache, doc_hash
from ranklens.judges.calibration import best_cuts, calibrate
from ranklens.judges.embedding import Embedder, EmbeddingJudge, Thresholds, WordLlamaEmbedder
from ranklens.judges.limits import RateLimiter
from ranklens.judges.openai_compat import EndpointError, OpenAIJudge
from ranklens.judges.pairs import Pair, build_pairs, pool, read_corpus, read_pairs, read_topics, write_pairs
from ranklens.judges.ppi import PPIReport, ppi_evaluate
from ranklens.judges.prompt import MalformedVerdict
from ranklens.judges.rag_hook import RagJudge
from ranklens.judges.runner import JudgeRun, judge_pairs
from ranklens.judges.scale import Scale, load_scale
from ranklens.judges.synth import SynthQuery, SynthResult, synthesize
from ranklens.judges.types import Judge, Judgment

__all__ = [
    "Embedder", "EmbeddingJudge", "EndpointError", "Judge", "JudgeAgreement", "JudgeCache", "JudgeRun", "Judgment",
    "MalformedVerdict", "OpenAIJudge", "PPIReport", "Pair", "Price", "RagJudge", "RateLimiter", "Scale",
    "SynthQuery", "SynthResult", "SystemOrdering", "Thresholds", "Usage", "WordLlamaEmbedder", "best_cuts",
    "build_pairs", "calibrate", "doc_hash", "judge_agreement", "judge_pairs", "load_prices", "load_scale", "pool",
    "ppi_evaluate", "read_corpus", "read_pairs", "read_topics", "synthesize", "system_ordering", "write_pairs",
]
