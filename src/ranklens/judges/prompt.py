"""The messages sent to the model, the JSON schema of its answer, and the strict check of that answer.

One document per request by default: the answer is exactly ``{"grade": <int on the scale>, "reason": <str>}``.
With batching, the documents are numbered and the answer is ``{"judgments": [{"grade": …, "reason": …}, …]}``
with one entry per document, in order. Anything else is malformed: no guessing, no repair.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ranklens.judges.scale import Scale

SYSTEM = """\
You are a careful relevance assessor for a search engine. Given a query and a passage, decide how relevant the \
passage is to the query using this scale:

{rubric}

Judge only the passage's content against the query's information need. Do not reward length or style. \
Answer with a single JSON object and nothing else: {shape}"""

_ONE = '{{"grade": <integer from {low} to {high}>, "reason": "<one short sentence>"}}'
_MANY = ('{{"judgments": [{{"grade": <integer from {low} to {high}>, "reason": "<one short sentence>"}}, ...]}} '
         "with exactly one entry per passage, in the order of the passages")


class MalformedVerdict(ValueError):
    """The model's answer does not follow the contract (the message says how)."""


def messages(scale: Scale, query: str, documents: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages for one request.

    >>> m = messages(Scale(), "what is ndcg", ["NDCG normalises DCG by the ideal DCG."])
    >>> [x["role"] for x in m], "Passage:" in m[1]["content"]
    (['system', 'user'], True)
    """
    shape = (_ONE if len(documents) == 1 else _MANY).format(low=scale.low, high=scale.high)
    system = SYSTEM.format(rubric=scale.rubric, shape=shape)
    if len(documents) == 1:
        user = f"Query: {query}\n\nPassage:\n{documents[0]}"
    else:
        parts = [f"Passage {i}:\n{text}" for i, text in enumerate(documents, 1)]
        user = f"Query: {query}\n\n" + "\n\n".join(parts)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _verdict_schema(scale: Scale) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "grade": {"type": "integer", "minimum": scale.low, "maximum": scale.high},
            "reason": {"type": "string"},
        },
        "required": ["grade", "reason"],
        "additionalProperties": False,
    }


def response_format(scale: Scale, n_documents: int) -> dict[str, Any]:
    """The ``response_format`` asking an OpenAI-compatible server for output constrained by a JSON schema.

    >>> response_format(Scale(), 1)["json_schema"]["schema"]["required"]
    ['grade', 'reason']
    """
    schema = _verdict_schema(scale)
    if n_documents > 1:
        schema = {
            "type": "object",
            "properties": {"judgments": {"type": "array", "items": schema, "minItems": n_documents,
                                         "maxItems": n_documents}},
            "required": ["judgments"],
            "additionalProperties": False,
        }
    return {"type": "json_schema", "json_schema": {"name": "relevance_judgment", "strict": True, "schema": schema}}


def _check_verdict(obj: object, scale: Scale) -> tuple[int, str]:
    if not isinstance(obj, dict):
        raise MalformedVerdict(f"expected a JSON object, got {type(obj).__name__}")
    if set(obj) != {"grade", "reason"}:
        missing = sorted({"grade", "reason"} - set(obj))
        extra = sorted(set(obj) - {"grade", "reason"})
        raise MalformedVerdict(f"missing field {missing[0]!r}" if missing else f"unexpected field {extra[0]!r}")
    grade, reason = obj["grade"], obj["reason"]
    if not isinstance(grade, int) or isinstance(grade, bool):
        raise MalformedVerdict(f"grade must be an integer, got {grade!r}")
    if not scale.contains(grade):
        raise MalformedVerdict(f"grade {grade} is off the scale {scale.low}..{scale.high}")
    if not isinstance(reason, str):
        raise MalformedVerdict(f"reason must be a string, got {type(reason).__name__}")
    return grade, reason


def parse(content: str, scale: Scale, n_documents: int = 1) -> list[tuple[int, str]]:
    """The ``(grade, reason)`` of each document from the message content; :class:`MalformedVerdict` otherwise.

    >>> parse('{"grade": 2, "reason": "partly answers"}', Scale())
    [(2, 'partly answers')]
    >>> parse('{"grade": 7, "reason": "x"}', Scale())
    Traceback (most recent call last):
    ...
    ranklens.judges.prompt.MalformedVerdict: grade 7 is off the scale 0..3
    """
    try:
        obj = json.loads(content)
    except (ValueError, TypeError) as exc:  # also an integer of more than 4,300 digits
        raise MalformedVerdict(f"not JSON: {str(exc)[:120]}") from None
    except RecursionError:
        raise MalformedVerdict("not JSON: nested too deeply") from None
    if n_documents == 1:
        return [_check_verdict(obj, scale)]
    if not isinstance(obj, dict) or set(obj) != {"judgments"} or not isinstance(obj["judgments"], list):
        raise MalformedVerdict('expected {"judgments": [...]}')
    if len(obj["judgments"]) != n_documents:
        raise MalformedVerdict(f"expected {n_documents} judgments, got {len(obj['judgments'])}")
    return [_check_verdict(item, scale) for item in obj["judgments"]]
