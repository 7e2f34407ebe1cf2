"""The grading scale, its rubric and the prompt version: the fixed contract with the model (docs/judges.md).

The default is our own 0–3 rubric. A TOML or JSON file may set another scale and rubric::

    version = "my-1-5/v2"
    min = 1
    max = 5
    rubric = '''
    5 = ...
    1 = ...
    '''
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ranklens.errors import FormatError
from ranklens.judges._files import read_table

DEFAULT_RUBRIC = """\
3 = perfectly relevant: the passage is about the query and fully answers it, or is exactly the item sought.
2 = highly relevant: the passage answers the query, but the answer is partial, mixed with other material or needs a small inference.
1 = related: the passage is on the query's topic but does not answer it.
0 = irrelevant: the passage has nothing to do with the query."""

DEFAULT_VERSION = "ranklens-graded-0-3/v1"


@dataclass(frozen=True)
class Scale:
    """An integer grade scale ``low..high`` with its rubric text and a prompt version string.

    The version names the prompt: change the rubric or the wording and change the version, so cached verdicts of
    the old prompt are not reused.

    >>> s = Scale()
    >>> s.low, s.high, s.version, s.contains(3), s.contains(4)
    (0, 3, 'ranklens-graded-0-3/v1', True, False)
    """

    low: int = 0
    high: int = 3
    rubric: str = DEFAULT_RUBRIC
    version: str = DEFAULT_VERSION

    def contains(self, grade: object) -> bool:
        """Whether ``grade`` is an integer (not a bool, not a float) on the scale."""
        return isinstance(grade, int) and not isinstance(grade, bool) and self.low <= grade <= self.high


def load_scale(path: str | Path) -> Scale:
    """Read a scale from a TOML or JSON file with keys ``version``, ``min``, ``max`` and ``rubric``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
    >>> _ = p.write_text('version = "five/v1"\\nmin = 1\\nmax = 5\\nrubric = "5 = perfect ... 1 = off topic"\\n')
    >>> load_scale(p).high
    5
    """
    display = str(path)
    data = read_table(path)
    if not isinstance(data, dict):
        raise FormatError(display, "expected a table with version, min, max and rubric")
    unknown = set(data) - {"version", "min", "max", "rubric"}
    if unknown:
        raise FormatError(display, f"unknown key {sorted(unknown)[0]!r}; expected version, min, max, rubric")
    for key in ("version", "min", "max", "rubric"):
        if key not in data:
            raise FormatError(display, f"missing key {key!r}")
    low, high = data["min"], data["max"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or low >= high:
        raise FormatError(display, f"min and max must be integers with min < max, got {low!r} and {high!r}")
    if not isinstance(data["rubric"], str) or not data["rubric"].strip():
        raise FormatError(display, "rubric must be a non-empty string")
    if not isinstance(data["version"], str) or not data["version"].strip():
        raise FormatError(display, "version must be a non-empty string")
    return Scale(low, high, data["rubric"].strip(), data["version"].strip())
