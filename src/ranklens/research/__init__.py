"""Research tools over the engine: which documents changed a measure (:mod:`.diff`), how two rankings
overlap (:mod:`.overlap`) and what unjudged documents could do to a value (:mod:`.bounds`)."""

from __future__ import annotations
