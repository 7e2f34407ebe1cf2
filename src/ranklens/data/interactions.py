"""The side tables of recommender evaluation: training interactions (``train=``) and the item catalog
(``items=``), each read once, with ids interned to sorted vocabularies.

Training interactions are ``user, item[, weight, timestamp]`` rows in any format the engine reads (CSV/TSV
with a header, JSON Lines, Parquet, TREC qrels ``user 0 item weight``, frames, dicts). Columns are found by
the same names as qrels columns (``user``/``user_id``/``userId`` …, ``item``/``item_id``/``movieId`` …) or
named with ``columns=`` (``{"member": "query_id", "sku": "doc_id", "clicks": "weight"}``); the weight column
is optional (every interaction weighs 1) and other columns (a timestamp) are ignored. A user–item pair
given twice is one interaction (weights add up).

The catalog is ``item[, category][, numeric features…]``: the item column is found by the document names,
the category by ``category``/``genre``/``genres``/``class`` (or ``columns={"col": "category"}``), and every
other column whose values are all numbers is a feature (or ``columns={"col": "feature"}``).

>>> t = read_interactions({"user": ["u1", "u1", "u2"], "item": ["a", "b", "a"]})
>>> t.num_users, t.items.to_pylist(), t.item_users().tolist()
(2, ['a', 'b'], [2, 1])
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ranklens.data._arrow import to_numpy
from ranklens.data._hashing import string_hash
from ranklens.data._intern import intern_sorted, lookup
from ranklens.data.readers import DOC_ALIASES, QUERY_ALIASES, Kind, column_roles, resolve_columns
from ranklens.data.run import Run
from ranklens.errors import FormatError, InputError

__all__ = ["Catalog", "Interactions", "drop_seen", "read_catalog", "read_interactions"]

#: what is read: the value column of training interactions is an optional weight
INTERACTIONS = Kind(
    "train interactions",
    "weight",
    ("weight", "rating", "relevance", "rel", "label", "count", "clicks", "value"),
    ("weight", "relevance", "label", "rel", "rating"),
    "weight",
    real_values=True,
)
CATEGORY_ALIASES = ("category", "genre", "genres", "class", "type")
_NO_WEIGHT = "__ranklens_weight__"


@dataclass(frozen=True, eq=False)
class Interactions:
    """Training interactions as distinct (user, item) pairs with codes into sorted vocabularies.

    Attributes:
        users, items: the vocabularies (Arrow strings, bytewise sorted).
        user, item: int32 codes of every distinct pair, sorted by (user, item).
        weight: float64 weight of every pair (the sum over repeated rows).
        source: where they came from, for messages.
        notes: what the reader assumed (no weight column, repeated pairs merged).
    """

    users: pa.Array
    items: pa.Array
    user: np.ndarray
    item: np.ndarray
    weight: np.ndarray
    source: str = "<train>"
    notes: tuple[str, ...] = ()
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.user.shape[0])

    def __repr__(self) -> str:
        return f"Interactions({self.num_users:,} users, {len(self.items):,} items, {len(self):,} pairs, source={self.source!r})"

    @property
    def num_users(self) -> int:
        """U: the number of distinct training users."""
        return len(self.users)

    def item_users(self) -> np.ndarray:
        """n_i: distinct training users per item code (int64)."""
        if "n_i" not in self._cache:
            self._cache["n_i"] = np.bincount(self.item, minlength=len(self.items)).astype(np.int64)
        return self._cache["n_i"]  # type: ignore[no-any-return]

    def user_codes(self, ids: pa.Array) -> np.ndarray:
        """The code in :attr:`users` of every id (int32, -1 when absent). A few ids against many users (a
        block of a streamed run) are found by their hash in the users' sorted hashes (made once), then
        checked string by string, instead of hashing every user again at each call.

        >>> t = Interactions.from_arrays(["u1", "u2", "u3"], ["a", "a", "b"])
        >>> t.user_codes(pa.array(["u3", "x", "u1"])).tolist()
        [2, -1, 0]
        """
        n = len(ids)
        if n == 0 or n * 16 >= len(self.users):
            return lookup(ids, self.users)
        if "user_hash" not in self._cache:
            h = string_hash(self.users)
            order = np.argsort(h, kind="stable")
            self._cache["user_hash"] = (h[order], order)
        sorted_hash, order = self._cache["user_hash"]
        h = string_hash(ids)
        pos = np.minimum(np.searchsorted(sorted_hash, h), sorted_hash.size - 1)
        cand = order[pos]
        same_hash = sorted_hash[pos] == h
        same_id = to_numpy(pc.fill_null(pc.equal(ids, self.users.take(pa.array(cand))), False))
        if np.any(same_hash & ~same_id):  # (two ids share a hash: the exact lookup)
            return lookup(ids, self.users)
        return np.where(same_hash & same_id, cand, -1).astype(np.int32)

    def pair_keys(self) -> np.ndarray:
        """Sorted int64 keys ``user * |items| + item`` of every pair."""
        if "keys" not in self._cache:
            self._cache["keys"] = self.user.astype(np.int64) * max(len(self.items), 1) + self.item
        return self._cache["keys"]  # type: ignore[no-any-return]

    @classmethod
    def from_arrays(cls, users: object, items: object, weights: object | None = None, *, source: str = "<train>") -> Interactions:
        """Build from parallel columns (weights default to 1)."""
        columns = [users, items]
        del users, items
        return cls._build(columns, weights, source)

    @classmethod
    def _build(cls, columns: list[Any], weights: object | None, source: str) -> Interactions:
        """:meth:`from_arrays` taking its id columns in a list it empties (each released once interned)."""
        i = _ids(columns.pop(), source, "item")
        u = _ids(columns.pop(), source, "user")
        if len(u) != len(i):
            raise FormatError(source, "user and item columns differ in length")
        if len(u) == 0:
            raise FormatError(source, "no interaction")
        w = None if weights is None else _numbers(weights, source, "weight")
        ucode, uvocab = intern_sorted(u)  # type: ignore[arg-type]
        del u
        icode, ivocab = intern_sorted(i)  # type: ignore[arg-type]
        del i
        n = max(len(ivocab), 1)
        # one int64 key per row, sorted in place; no inverse index or argsort unless weights are given
        key = ucode.astype(np.int64)
        del ucode
        key *= n
        key += icode
        del icode
        rows = key.size
        if w is not None:
            order = np.argsort(key, kind="stable")
            key, w = key[order], w[order]
            del order
        else:
            key.sort()
        first = np.empty(rows, dtype=bool)
        first[:1] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        uniq = key[first] if rows and not first.all() else key
        notes: list[str] = []
        if uniq.size < rows:
            notes.append(f"{rows - uniq.size} repeated user–item row(s) merged (weights added)")
        if w is not None:
            weight = np.add.reduceat(w, np.flatnonzero(first)) if rows else np.zeros(0)
        elif uniq.size < rows:
            weight = np.diff(np.append(np.flatnonzero(first), rows)).astype(np.float64)
        else:  # every pair once, no weight column: weight 1 each, without an array of ones per pair
            weight = np.broadcast_to(np.float64(1.0), (rows,))
        del first
        out = cls(uvocab, ivocab, (uniq // n).astype(np.int32), (uniq % n).astype(np.int32), weight, source, tuple(notes))
        out._cache["keys"] = uniq  # (the pair keys exclude-seen searches: already made)
        return out


@dataclass(frozen=True, eq=False)
class Catalog:
    """The item catalog: its items, and optionally a category or numeric features per item.

    Attributes:
        items: the vocabulary (sorted).
        category: int32 category code per item (-1: none), or None.
        categories: the category names.
        features: float64 matrix (items × features), or None.
        feature_names: the feature columns.
    """

    items: pa.Array
    category: np.ndarray | None = None
    categories: tuple[str, ...] = ()
    features: np.ndarray | None = None
    feature_names: tuple[str, ...] = ()
    source: str = "<items>"

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        what = []
        if self.category is not None:
            what.append(f"{len(self.categories)} categories")
        if self.features is not None:
            what.append(f"{len(self.feature_names)} features")
        return f"Catalog({len(self):,} items{', ' if what else ''}{', '.join(what)}, source={self.source!r})"


# ------------------------------------------------------------------------------------------- reading


def read_interactions(source: Any, *, format: str | None = None, columns: Mapping[str, str] | None = None) -> Interactions:
    """Read training interactions (see the module docs); an :class:`Interactions` is returned as it is.

    >>> read_interactions({"u1": ["a", "b"], "u2": {"a": 2.0}}).weight.tolist()
    [1.0, 1.0, 2.0]
    """
    if isinstance(source, Interactions):
        return source
    parquet = _parquet_path(source, format)
    if parquet is not None:  # (its columns are read one at a time, when they are interned: not a whole table)
        import pyarrow.parquet as pq

        table, display = None, parquet
        names = [str(n) for n in pq.read_schema(parquet).names]
    else:
        table, display = _table(source, format, "train")
        names = [str(n) for n in table.column_names]
    mapping = column_roles(columns, INTERACTIONS, display)
    notes: list[str] = []
    has_value = (mapping is not None and "value" in mapping) or any(n.strip().lower() in INTERACTIONS.value_aliases for n in names)
    if not has_value:  # (the name only: no column of ones is made, every pair weighs 1)
        mapping = {**(mapping or {}), "value": _NO_WEIGHT}
        names.append(_NO_WEIGHT)
    q, d, v = resolve_columns(names, INTERACTIONS, display, mapping=mapping)
    path = display

    def column(at: int) -> Any:  # (resolve_columns gives positions)
        return table.column(at) if table is not None else _parquet_column(path, names[at])

    weights = column(v) if has_value else None
    ids = [functools.partial(column, q), functools.partial(column, d)]
    out = Interactions._build(ids, weights, display)
    if not has_value:
        notes.append("no weight column: every interaction weighs 1")
    return dataclasses.replace(out, notes=(*notes, *out.notes)) if notes else out


def read_catalog(source: Any, *, format: str | None = None, columns: Mapping[str, str] | None = None) -> Catalog:
    """Read the item catalog (see the module docs); a :class:`Catalog` is returned as it is.

    >>> c = read_catalog({"item": ["a", "b"], "genre": ["x", "y"], "year": [1990, 2000]})
    >>> c.categories, c.feature_names, c.features.tolist()
    (('x', 'y'), ('year',), [[1990.0], [2000.0]])
    """
    if isinstance(source, Catalog):
        return source
    table, display = _table(source, format, "items")
    names = [str(n) for n in table.column_names]
    lowered = [n.strip().lower() for n in names]
    roles: dict[str, str] = {}
    for col, role in (columns or {}).items():
        r = str(role).strip().lower()
        r = {"doc_id": "item", "doc": "item", "item_id": "item", "features": "feature"}.get(r, r)
        if r not in ("item", "category", "feature"):
            raise FormatError(display, f"columns=: unknown role {role!r} for column {col!r}; expected item, category or feature")
        if col not in names:
            raise FormatError(display, f"column {col!r} (mapped to {r}) not found; found: {', '.join(names)}")
        roles[col] = r
    item_col = next((c for c, r in roles.items() if r == "item"), None)
    if item_col is None:
        item_col = next((names[lowered.index(a)] for a in (*DOC_ALIASES, "id") if a in lowered), None)
    if item_col is None:
        raise FormatError(display, f"missing the item column (item, item_id, movieId, doc_id …); found: {', '.join(names)}")
    cat_col = next((c for c, r in roles.items() if r == "category"), None)
    if cat_col is None and not any(r == "category" for r in roles.values()):
        cat_col = next((names[lowered.index(a)] for a in CATEGORY_ALIASES if a in lowered and names[lowered.index(a)] != item_col), None)
    feature_cols = [c for c, r in roles.items() if r == "feature"]
    if not feature_cols and not any(r == "feature" for r in roles.values()):
        for c in names:
            if c in (item_col, cat_col) or c.strip().lower() in QUERY_ALIASES:
                continue
            try:
                _numbers(table.column(c), display, c)
            except FormatError:
                continue
            feature_cols.append(c)
    codes, vocab = intern_sorted(_ids(table.column(item_col), display, "item"))
    if len(vocab) < len(codes):
        raise FormatError(display, f"{len(codes) - len(vocab)} item(s) listed twice in the catalog")
    order = np.argsort(codes)  # rows in vocabulary order
    category = categories = None
    if cat_col is not None:
        cats = pc.cast(table.column(cat_col), pa.string())
        cats = cats.combine_chunks() if isinstance(cats, pa.ChunkedArray) else cats
        ccode, cvocab = intern_sorted(pc.fill_null(cats, ""))
        ccode = np.where(to_numpy(cats.is_null()), -1, ccode).astype(np.int32)
        category, categories = ccode[order], tuple(cvocab.to_pylist())
    features = None
    if feature_cols:
        features = np.column_stack([_numbers(table.column(c), display, c) for c in feature_cols])[order]
    return Catalog(vocab, category, categories or (), features, tuple(feature_cols), display)


def _table(source: Any, format: str | None, what: str) -> tuple[pa.Table, str]:
    """Any supported input as an Arrow table, and its name for messages."""
    if isinstance(source, pa.RecordBatch):
        return pa.Table.from_batches([source]), f"<{what}>"
    if isinstance(source, pa.Table):
        return source, f"<{what}>"
    library = type(source).__module__.split(".")[0]
    if library == "polars":
        if type(source).__name__ == "LazyFrame":
            source = source.collect()
        return source.to_arrow(), f"<{what} DataFrame>"
    if library == "pandas":
        return pa.Table.from_pandas(source, preserve_index=False), f"<{what} DataFrame>"
    if isinstance(source, Mapping):
        values = list(source.values())
        if values and all(isinstance(v, (Mapping, list, tuple, set)) for v in values) and not _columnar(source):
            users, items, weights = [], [], []
            for u, row in source.items():
                pairs = row.items() if isinstance(row, Mapping) else ((i, 1.0) for i in row)
                for i, w in pairs:
                    users.append(str(u))
                    items.append(str(i))
                    weights.append(float(w))
            return pa.table({"user": users, "item": items, "weight": weights}), f"<{what} dict>"
        try:
            return pa.table({str(k): pa.array(list(v)) for k, v in source.items()}), f"<{what} dict>"
        except (pa.ArrowException, TypeError) as e:
            raise FormatError(f"<{what} dict>", f"expected equal-length columns: {e}") from None
    from ranklens.data.io import format_of, read_qrels, read_text_bytes

    path = str(source)
    fmt, _ = format_of(path, format)
    if fmt in ("csv", "tsv"):
        display, data = read_text_bytes(path)
        return _read_delimited(data, display, "," if fmt == "csv" else "\t"), display
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path), path
    if fmt == "jsonl":
        import pyarrow.json as pj

        from ranklens.data._arrow import read_lent

        display, data = read_text_bytes(path)
        return read_lent(data, pj.read_json), display  # type: ignore[return-value]
    q = read_qrels(path, format=fmt, labels="float")  # TREC qrels: user 0 item weight
    t = q.to_arrow()
    return t.rename_columns(["user", "item", "weight"][: t.num_columns]), path


def _columnar(source: Mapping[Any, Any]) -> bool:
    """A ``{column: values}`` dict (its keys name columns, not users)."""
    keys = [str(k).strip().lower() for k in source]
    return any(k in DOC_ALIASES for k in keys) and any(k in (*QUERY_ALIASES, *DOC_ALIASES) for k in keys)


def _read_delimited(data: bytes, display: str, delimiter: str) -> pa.Table:
    import pyarrow.csv as pacsv

    from ranklens.data._arrow import read_lent

    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text_head = data[: data.find(b"\n") if b"\n" in data else len(data)].decode("utf-8", "replace").rstrip("\r")
    names = next(csv.reader([text_head], delimiter=delimiter), [])
    if not names or not any(n.strip() for n in names):
        raise FormatError(display, "expected a header line naming the columns")
    try:
        return read_lent(  # type: ignore[return-value]
            data,
            lambda source: pacsv.read_csv(
                source,
                parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char='"' if delimiter == "," else False),
                convert_options=pacsv.ConvertOptions(
                    column_types={n: pa.string() for n in names}, strings_can_be_null=False
                ),
            ),
        )
    except pa.ArrowInvalid as e:
        raise FormatError(display, f"cannot read the table: {e}") from None


def _parquet_path(source: Any, format: str | None) -> str | None:
    """``source`` as a path when it names a Parquet file, else None."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    from ranklens.data.io import format_of

    try:
        fmt, compressed = format_of(str(source), format)
    except Exception:
        return None
    return str(source) if fmt == "parquet" and not compressed and os.path.isfile(source) else None


def _parquet_column(path: str, name: str) -> pa.ChunkedArray:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path, columns=[name]).column(0)
    except (pa.ArrowException, OSError) as e:
        raise FormatError(path, f"cannot read column {name!r} as Parquet: {e}") from None


def _ids(values: Any, source: str, what: str) -> pa.Array:
    if callable(values):  # (a column read when it is needed)
        values = values()
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(list(values))
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = pc.cast(arr, pa.string())
    # chunk by chunk (a Parquet file's row groups are not combined into one copy)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    if arr.null_count or any(len(c) and pc.any(pc.equal(pc.utf8_length(c), 0)).as_py() for c in chunks):
        raise FormatError(source, f"empty {what} id")
    return arr.cast(pa.string())


def _numbers(values: Any, source: str, what: str) -> np.ndarray:
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(list(values))
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    try:
        if pa.types.is_string(arr.type):
            arr = pc.cast(pc.utf8_trim_whitespace(arr), pa.float64())
        out = to_numpy(pc.cast(arr, pa.float64())) if arr.null_count == 0 else None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        out = None
    if out is None or not np.all(np.isfinite(out)):
        raise FormatError(source, f"column {what!r} must hold finite numbers")
    return np.asarray(out, dtype=np.float64)


# ---------------------------------------------------------------------------------------- the protocol


def drop_seen(run: Run, train: Interactions) -> tuple[Run, int]:
    """``run`` without the rows whose (user, item) is in ``train`` (the exclude-seen protocol), and how
    many rows were dropped.

    >>> t = Interactions.from_arrays(["u1"], ["a"])
    >>> r, n = drop_seen(Run.from_dict({"u1": {"a": 2.0, "b": 1.0}, "u2": {"a": 1.0}}), t)
    >>> n, r.to_dict()
    (1, {'u1': {'b': 1.0}, 'u2': {'a': 1.0}})
    """
    if len(run) == 0:
        return run, 0
    ucode = train.user_codes(run.query_ids)  # per vocabulary entry: small
    icode = lookup(run.doc_ids, train.items)
    doc = run.doc
    keys = train.pair_keys()
    n_items = max(len(train.items), 1)
    seen = np.zeros(len(run), dtype=bool)
    # in chunks of rows: the int64 keys and their search positions never exist for the whole run at once
    for lo in range(0, len(run), _CHUNK):
        hi = min(lo + _CHUNK, len(run))
        u = ucode[run.query[lo:hi]]
        i = icode[doc[lo:hi]]
        known = np.flatnonzero((u >= 0) & (i >= 0))
        if not known.size or not keys.size:
            continue
        key = u[known].astype(np.int64) * n_items + i[known]
        pos = np.minimum(np.searchsorted(keys, key), keys.size - 1)
        seen[lo + known[keys[pos] == key]] = True
    dropped = int(np.count_nonzero(seen))
    if not dropped:
        return run, 0
    keep = ~seen
    del seen
    out = Run(
        run.query_ids, run.query[keep], run.docs.filter(pa.array(keep)), run.score[keep], run.name, run.source,
        notes=run.notes,
    )
    # the kept rows' document codes, into the same (sorted) vocabulary: not interned again from the strings
    out._cache["doc"], out._cache["doc_ids"] = doc[keep], run.doc_ids
    if "doc_hash" in run._cache:  # (and their hashes, when the reader made them: not hashed again)
        out._cache["doc_hash"] = run._cache["doc_hash"][keep]
    return out, dropped


#: rows per step of :func:`drop_seen`
_CHUNK = 1 << 22


def check_known(train: Interactions | None, catalog: Catalog | None) -> None:
    """Refuse a catalog that shares no item with the training interactions (a wrong file)."""
    if train is None or catalog is None:
        return
    if not np.any(lookup(train.items, catalog.items) >= 0):
        raise InputError(f"{catalog.source}: the catalog shares no item with the training interactions ({train.source})")
