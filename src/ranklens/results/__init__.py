"""Evaluation results: :class:`Results` (one run's values per query and in aggregate, :mod:`.core`), saved
results files (:func:`write_results`, :func:`read_results`, :mod:`.io`) and their text forms (:func:`render`,
:mod:`.rendering`).

Everything but the renderers is imported on first use (PEP 562), so ``import ranklens.results`` loads no
numeric library. No public name is also the name of a submodule, so ``import ranklens.results.rendering``
and ``ranklens.results.render`` always mean the module and the function.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing: `ranklens eval`'s express path stays light)

from ranklens._lazy import lazy_names
from ranklens.results.rendering import FORMATS, render

if TYPE_CHECKING:
    from ranklens.results.core import Results, aggregate, assemble
    from ranklens.results.io import looks_like_results, read_results, write_results

#: public name → the module that defines it (imported when the name is first used)
_LAZY = {
    "Results": "ranklens.results.core",
    "aggregate": "ranklens.results.core",
    "assemble": "ranklens.results.core",
    "looks_like_results": "ranklens.results.io",
    "read_results": "ranklens.results.io",
    "write_results": "ranklens.results.io",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "FORMATS",
    "Results",
    "aggregate",
    "assemble",
    "looks_like_results",
    "read_results",
    "render",
    "write_results",
]
