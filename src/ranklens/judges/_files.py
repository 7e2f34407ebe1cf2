"""Reading the small TOML/JSON configuration files of the judges (scale, prices, thresholds) with one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ranklens.errors import FormatError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def read_table(path: str | Path) -> dict[str, Any]:
    """A TOML file (or JSON, by a ``.json`` extension) as a dict; a missing or malformed file is a FormatError.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.toml"
    >>> _ = p.write_text('a = 1\\n')
    >>> read_table(p)
    {'a': 1}
    """
    display = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(display, "no such file") from None
    except (OSError, UnicodeError) as exc:
        raise FormatError(display, f"cannot read the file: {exc}") from None
    try:
        data = json.loads(text) if display.endswith(".json") else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(display, f"not valid JSON: {exc.msg}", exc.lineno) from None
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(display, f"not valid TOML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise FormatError(display, "expected an object (a table) at the top level")
    return data
