"""Intent-level relevance judgements: :class:`~ranklens.data.intents.IntentQrels` and
:func:`~ranklens.data.intents.read_intent_qrels` live in :mod:`ranklens.data.intents` (the engine reads them
for the intent-aware measures); re-exported here where they were first defined."""

from __future__ import annotations

from ranklens.data.intents import IntentQrels, read_intent_qrels

__all__ = ["IntentQrels", "read_intent_qrels"]
