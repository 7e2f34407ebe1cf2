"""What the ingest API accepts: pydantic models with limits, finite numbers and checked names.

Names (projects, systems, segments, tags) may hold any printable text — they are escaped wherever they are
shown — but no control characters, no leading or trailing space, and a project name no ``/`` (it is a path
segment). Measure names are checked with the ranklens measure language and stored in canonical form, so
``ndcg_cut.10`` and ``nDCG@10`` are the same series.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from ranklens.errors import InputError, MeasureError

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "LIMITS",
    "MAX_PAGE",
    "DatasetIn",
    "DbId",
    "Offset",
    "PageLimit",
    "ProjectIn",
    "RuleIn",
    "RulePatch",
    "RunIn",
    "SnapshotIn",
    "WebhookIn",
    "canonical_measure",
    "check_name",
    "check_project_name",
    "rules_from_file",
]

#: Size limits of one request (the body size itself is limited by the server, ``--max-body``).
LIMITS = {
    "measures": 100,
    "queries": 200_000,
    "segments": 1_000,
    "tags": 50,
    "runs": 100,
    "name": 200,
    "project": 100,
    "tag_value": 500,
}

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")  # and lone surrogates: not storable text
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")  # no database text column takes these (PostgreSQL: no NUL)
CLIENT_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,127}$"


def check_name(value: str, *, what: str = "name", limit: int = LIMITS["name"]) -> str:
    """``value`` if it is a usable name; else :class:`InputError` saying why.

    >>> check_name("<b>bm25</b> & co")
    '<b>bm25</b> & co'
    >>> check_name(" x")
    Traceback (most recent call last):
    ...
    ranklens.errors.InputError: name must not start or end with white space; got ' x'
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string; got {type(value).__name__}")
    if not value:
        raise InputError(f"{what} must not be empty")
    if len(value) > limit:
        raise InputError(f"{what} is longer than {limit} characters")
    if _CONTROL.search(value):
        raise InputError(f"{what} must not contain control characters; got {value!r}")
    if value != value.strip():
        raise InputError(f"{what} must not start or end with white space; got {value!r}")
    return value


def check_project_name(value: str) -> str:
    """A project name: a name of at most 100 characters without ``/``, and not ``.`` or ``..``, in Unicode
    NFKC form (so look-alikes such as full-width ``ｄｅｍｏ`` cannot name a second ``demo``; refused rather
    than silently renamed, so a name is stored, shown and looked up exactly as sent)."""
    check_name(value, what="project name", limit=LIMITS["project"])
    if "/" in value or "\\" in value or value in {".", ".."}:
        raise InputError(f"project name must not contain '/' or '\\' nor be '.' or '..'; got {value!r}")
    if not unicodedata.is_normalized("NFKC", value):
        raise InputError(f"project name must be in Unicode NFKC form: {value!r} would be {unicodedata.normalize('NFKC', value)!r}")
    return value


@lru_cache(maxsize=4096)
def canonical_measure(name: str) -> str:
    """The canonical name of one measure (``ndcg_cut.10`` → ``nDCG@10``); :class:`MeasureError` if unknown."""
    from ranklens.gates.model import COVERAGE
    from ranklens.measures import parse_many

    if name == COVERAGE:  # the monitor's series of answered / expected queries
        return name
    if not isinstance(name, str) or not name.strip() or len(name) > LIMITS["name"]:
        raise MeasureError(f"'{name}' is not a measure name; examples: nDCG@10, P(rel=2)@5, AP")
    found = parse_many([name])
    if len(found) != 1:
        raise MeasureError(f"'{name}' names {len(found)} measures; give one per key")
    return str(found[0].validate())


def _name(v: str) -> str:
    return _as_value_error(check_name, v)


def _storable(v: str) -> str:
    """Free text (a description, a secret, a version): anything but NUL and lone surrogates."""
    if _UNSTORABLE.search(v):
        raise ValueError("text must not contain NUL characters or lone surrogates")
    return v


def _project(v: str) -> str:
    return _as_value_error(check_project_name, v)


def _measure(v: str) -> str:
    return _as_value_error(canonical_measure, v)


def _as_value_error(fn: Any, v: Any) -> Any:
    try:
        return fn(v)
    except InputError as exc:  # pydantic reports ValueError; InputError is one, keep its message
        raise ValueError(str(exc)) from None


#: The largest page a read returns (``limit``), the largest row id (the id columns are 32-bit integers on
#: PostgreSQL) and the largest offset: a parameter beyond them is a 422, not a database error.
MAX_PAGE = 1000
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
DbId = Annotated[int, Field(ge=1, le=INT32_MAX)]
PageLimit = Annotated[int, Field(ge=1, le=MAX_PAGE)]
Offset = Annotated[int, Field(ge=0, le=INT32_MAX)]

Name = Annotated[str, AfterValidator(_name)]
ProjectName = Annotated[str, AfterValidator(_project)]
MeasureName = Annotated[str, AfterValidator(_measure)]
ClientId = Annotated[str, StringConstraints(pattern=CLIENT_ID)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
Label = Annotated[int, Field(ge=-INT32_MAX - 1, le=INT32_MAX)]  # a relevance grade (the engine's labels are 32-bit)
Text = AfterValidator(_storable)
TagValue = Annotated[str, StringConstraints(max_length=LIMITS["tag_value"]), Text]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class RunResults(BaseModel):
    """One entry of ``runs`` in ``ranklens eval --format json`` (other keys are ignored)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    run: str | None = None
    aggregate: dict[MeasureName, Finite | None] = Field(max_length=LIMITS["measures"])
    num_queries: int | None = Field(default=None, ge=0, le=INT32_MAX)
    per_query: dict[Annotated[str, StringConstraints(min_length=1, max_length=200)], dict[MeasureName, Finite | None]] | None = (
        Field(default=None, max_length=LIMITS["queries"])
    )
    #: the qrels queries the evaluation had (``ranklens eval --format json`` writes both)
    expected_queries: int | None = Field(default=None, ge=0)
    #: the qrels queries the run did not answer, left out of ``per_query`` (``--missing skip``, the default)
    skipped_queries: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] | None = Field(
        default=None, max_length=LIMITS["queries"]
    )
    #: the notes as data (``ranklens eval --format json`` writes them: kind, count and fields); each is checked
    #: to be a note (:meth:`ranklens.errors.Note.from_data`) or a text note (kind ``text``), and handed back as data
    note_data: list[dict[str, Any]] | None = Field(default=None, max_length=64)

    @field_validator("note_data")
    @classmethod
    def _notes_are_notes(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        from ranklens.errors import Note

        for item in value or []:
            if item.get("kind") == "text":
                if set(item) != {"kind", "text"} or not isinstance(item["text"], str) or len(item["text"]) > 2000:
                    raise ValueError("a text note is {'kind': 'text', 'text': '…'} (at most 2000 characters)")
            elif len(str(item)) > 2000:
                raise ValueError("a note's data is at most 2000 characters")
            else:
                Note.from_data(item)
        return value


class EvalDocument(BaseModel):
    """The whole ``ranklens eval --format json`` document."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    ranklens_version: str | None = None
    runs: list[RunResults] = Field(min_length=1, max_length=LIMITS["runs"])


class SnapshotIn(_Strict):
    """``POST /api/v1/projects/{project}/snapshots``: one evaluation of one system.

    Give the values as ``results`` (what ``ranklens eval --format json`` prints, or one of its ``runs``;
    pick the run with ``run`` when there are several) or as plain ``values`` ``{measure: value}``.
    ``query_segments`` maps query ids to segments (categories); the server then stores the mean of
    every segment. ``segments`` gives segment values directly.

    ``expected_queries`` lists the queries the snapshot was expected to answer (the qrels' queries; a run
    of ``ranklens eval --format json`` says it with ``skipped_queries``). Expected queries without a
    per-query value score 0 unless ``missing`` is ``"skip"`` (then the values are over the answered
    queries, shown "on 35 of 50 queries"); either way the snapshot stores its coverage, answered / expected,
    as the series ``query_coverage``.
    """

    id: ClientId | None = None
    system: Name
    at: dt.datetime | None = None
    dataset: Name | None = None
    tags: dict[Annotated[str, AfterValidator(_name)], TagValue] | list[Name] = Field(
        default_factory=dict, max_length=LIMITS["tags"]
    )
    results: EvalDocument | RunResults | None = None
    run: Name | None = None
    values: dict[MeasureName, Finite] | None = Field(default=None, max_length=LIMITS["measures"])
    query_segments: dict[str, Name] | None = Field(default=None, max_length=LIMITS["queries"])
    segments: dict[Name, dict[MeasureName, Finite]] | None = Field(default=None, max_length=LIMITS["segments"])
    expected_queries: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] | None = Field(
        default=None, max_length=LIMITS["queries"]
    )
    missing: Literal["zero", "skip"] | None = None

    @field_validator("at")
    @classmethod
    def _at(cls, v: dt.datetime | None) -> dt.datetime | None:
        return check_time(v)


def check_time(v: dt.datetime | None) -> dt.datetime | None:
    """An aware UTC time between 1970 and 2200 (naive times are taken as UTC)."""
    if v is None:
        return None
    if v.tzinfo is None:
        v = v.replace(tzinfo=dt.timezone.utc)
    try:
        v = v.astimezone(dt.timezone.utc)
    except OverflowError:  # 0001-01-01T00:00:00+05:00 is before year 1 in UTC; pydantic reports ValueError only
        raise ValueError(f"time must be between 1970 and 2200; got {v.isoformat()}") from None
    if not (1970 <= v.year < 2200):
        raise ValueError(f"time must be between 1970 and 2200; got {v.isoformat()}")
    return v


class ProjectIn(_Strict):
    name: ProjectName
    description: Annotated[str, StringConstraints(max_length=5000), Text] = ""


class DatasetIn(_Strict):
    """A qrels version: ``qrels`` as ``{qid: {docid: label}}``."""

    name: Name
    version: Annotated[str, StringConstraints(min_length=1, max_length=100), Text]
    qrels: dict[Annotated[str, StringConstraints(min_length=1, max_length=200)], dict[Annotated[str, StringConstraints(min_length=1, max_length=500)], Label]] = Field(
        min_length=1, max_length=LIMITS["queries"]
    )


class RunIn(_Strict):
    """``POST /api/v1/projects/{project}/runs``: a run the server evaluates against a stored dataset."""

    id: ClientId | None = None
    system: Name
    dataset: Name
    version: Annotated[str, StringConstraints(min_length=1, max_length=100), Text] | None = None
    measures: list[MeasureName] = Field(min_length=1, max_length=LIMITS["measures"])
    run: dict[Annotated[str, StringConstraints(min_length=1, max_length=200)], dict[Annotated[str, StringConstraints(min_length=1, max_length=500)], Finite]] = Field(
        min_length=1, max_length=LIMITS["queries"]
    )
    at: dt.datetime | None = None
    tags: dict[Annotated[str, AfterValidator(_name)], TagValue] | list[Name] = Field(
        default_factory=dict, max_length=LIMITS["tags"]
    )
    query_segments: dict[str, Name] | None = Field(default=None, max_length=LIMITS["queries"])
    #: qrels queries the run does not answer: scored 0 (default) or left out (shown "on 35 of 50 queries")
    missing: Literal["zero", "skip"] | None = None

    @field_validator("at")
    @classmethod
    def _at(cls, v: dt.datetime | None) -> dt.datetime | None:
        return check_time(v)


_OPS = Literal[">=", ">", "<=", "<"]


class RuleIn(_Strict):
    """A rule. ``kind``:

    * ``threshold``: ``measure op value`` (``nDCG@10 >= 0.85``);
    * ``window``: breach when the value falls more than ``max_drop`` below the mean of the same system over
      the previous ``window_days`` days (at least ``min_points`` earlier snapshots);
    * ``significance``: breach when the system is worse than ``reference`` with paired-test p < ``alpha``
      on the per-query values (at least ``min_queries`` common queries).

    ``system`` limits the rule to one system (default: every system); ``segment`` checks a segment's value.
    ``expr`` is a rule in the text syntax of :mod:`ranklens.gates` (``nDCG@10 >= 0.85``,
    ``nDCG@10 drop <= 0.02 window=7``, ``nDCG@10 drop <= 0 vs=bm25 alpha=0.05``), the one shared with
    ``ranklens gate``; :meth:`from_rule` turns a :class:`ranklens.gates.Rule` into a monitor rule.
    """

    name: Name | None = None
    kind: Literal["threshold", "window", "significance"] = "threshold"
    expr: Annotated[str, StringConstraints(max_length=300), Text] | None = None
    measure: MeasureName | None = None
    op: _OPS | None = None
    value: Finite | None = None
    system: Name | None = None
    segment: Name | None = None
    window_days: Annotated[float, Field(gt=0, le=366, allow_inf_nan=False)] = 7.0
    max_drop: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.02
    min_points: Annotated[int, Field(ge=1, le=10_000)] = 3
    reference: Name | None = None
    alpha: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] = 0.05
    test: Literal["t", "randomisation", "bootstrap", "wilcoxon", "sign"] = "t"
    min_queries: Annotated[int, Field(ge=2, le=1_000_000)] = 5
    enabled: bool = True

    def resolved(self) -> RuleIn:
        """This rule with ``expr`` expanded and required fields checked."""
        from ranklens.gates import parse_rule

        data = self.model_dump()
        if self.expr is not None:
            data.update(_rule_fields(parse_rule(self.expr), None))
        data["expr"] = None
        if data["measure"] is None:
            raise InputError("rule needs a measure (or an expr such as 'nDCG@10 >= 0.85')")
        if data["kind"] == "threshold" and (data["op"] is None or data["value"] is None):
            raise InputError("threshold rule needs op and value (or an expr such as 'nDCG@10 >= 0.85')")
        if data["kind"] == "significance" and not data["reference"]:
            raise InputError("significance rule needs a reference system")
        if data["kind"] == "significance" and data["system"] is not None and data["system"] == data["reference"]:
            raise InputError("significance rule compares a system with another; system and reference are the same")
        return RuleIn.model_validate(data)

    @classmethod
    def from_rule(cls, rule: Any, settings: Any = None, **fields: Any) -> RuleIn:
        """The monitor rule of a :class:`ranklens.gates.Rule` (``settings``: the rules file's
        :class:`~ranklens.gates.GateSettings`, for its default ``alpha``, ``test`` and ``window``)."""
        return cls.model_validate({**fields, **_rule_fields(rule, settings)}).resolved()


def rules_from_file(path: str) -> list[RuleIn]:
    """The monitor rules of a TOML rules file shared with ``ranklens gate --rules`` (see :mod:`ranklens.gates.files`)."""
    from ranklens.gates import read_rules

    rules, settings = read_rules(path)
    return [RuleIn.from_rule(rule, settings) for rule in rules]


def _rule_fields(rule: Any, settings: Any) -> dict[str, Any]:
    """A gates Rule as RuleIn fields: a bound is a ``threshold`` rule; a drop is a ``window`` rule
    (trailing ``window`` days, default 7) or, with a reference system, a ``significance`` rule (allowed
    drop 0: the monitor's significance rule breaches on any significant drop)."""
    out: dict[str, Any] = {"measure": canonical_measure(rule.measure)}
    if rule.segment is not None:
        out["segment"] = rule.segment
    if rule.kind != "max_drop":
        return {**out, "kind": "threshold", "op": rule.op, "value": rule.threshold}
    alpha = rule.alpha if rule.alpha is not None else getattr(settings, "alpha", None)
    if rule.reference is not None:
        if rule.threshold != 0:
            raise InputError(
                f"rule {str(rule)!r}: a drop vs a reference system is a significance test; the monitor "
                "checks it with an allowed drop of 0 (write 'drop <= 0')"
            )
        out.update(kind="significance", reference=rule.reference, test=getattr(settings, "test", None) or "t")
        return {**out, **({"alpha": alpha} if alpha is not None else {})}
    if rule.alpha is not None:
        raise InputError(
            f"rule {str(rule)!r}: the monitor's trailing-window rule has no significance test; drop alpha= "
            "or compare with a reference system (vs=SYSTEM)"
        )
    window = rule.window if rule.window is not None else getattr(settings, "window", None)
    return {**out, "kind": "window", "max_drop": rule.threshold, "window_days": window if window is not None else 7.0}


def _webhook_url(v: str) -> str:
    """A URL the server can send to: no control characters, a host that is a valid (IDNA) name or address,
    a port in range; anything else is a 422 here, not an error while resolving it."""
    import urllib.parse

    if _CONTROL.search(v):
        raise ValueError("webhook url must not contain control characters")
    try:
        parts = urllib.parse.urlsplit(v)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError when out of range
        if not host:
            raise ValueError("webhook url has no host")
        host.encode("idna")
    except (ValueError, UnicodeError) as exc:
        raise ValueError(f"webhook url is not usable: {exc}") from None
    return v


class WebhookIn(_Strict):
    url: Annotated[
        str, StringConstraints(min_length=8, max_length=2000, pattern=r"^https?://[^\s]+$"), AfterValidator(_webhook_url)
    ]
    project: ProjectName | None = None
    secret: Annotated[str, StringConstraints(max_length=200), Text] | None = None
    enabled: bool = True


# ---------------------------------------------------------------------------------------------------------
# what the write routes answer (declared in the OpenAPI document; extra keys are kept, not dropped)


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Health(_Out):
    status: Literal["ok"]
    version: str
    database: str


class ProjectOut(_Out):
    name: str
    description: str
    created_at: str | None


class ProjectCreated(_Out):
    project: ProjectOut
    created: bool


class RulePatch(_Strict):
    """The body of ``PATCH /api/v1/projects/{p}/rules/{id}``: any :class:`RuleIn`
    field, with the same bounds (out of range is a 422); absent fields keep their value. ``{"enabled": false}``
    disables the rule."""

    name: Name | None = None
    expr: Annotated[str, StringConstraints(max_length=300), Text] | None = None
    kind: Literal["threshold", "window", "significance"] | None = None
    measure: MeasureName | None = None
    op: _OPS | None = None
    value: Finite | None = None
    system: Name | None = None
    segment: Name | None = None
    window_days: Annotated[float, Field(gt=0, le=366, allow_inf_nan=False)] | None = None
    max_drop: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    min_points: Annotated[int, Field(ge=1, le=10_000)] | None = None
    reference: Name | None = None
    alpha: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] | None = None
    test: Literal["t", "randomisation", "bootstrap", "wilcoxon", "sign"] | None = None
    min_queries: Annotated[int, Field(ge=2, le=1_000_000)] | None = None
    enabled: bool | None = None


class RuleCheckOut(_Out):
    rule_id: int
    rule: str
    status: str
    value: float | None = None
    detail: str | None = None
    alert: dict[str, Any] | None = None


class SnapshotOut(_Out):
    id: str
    project: str
    system: str
    at: str | None
    created_at: str | None
    measures: list[str]
    values: dict[str, float]
    segments: dict[str, dict[str, float]]
    tags: dict[str, str]
    num_queries: int | None
    has_per_query: bool
    source: str
    rules: list[RuleCheckOut] = []
    notes: list[Any] | None = None
    note_data: list[dict[str, Any]] | None = None  # (the notes as data: kind, count and fields; a page words them)


class SnapshotCreated(_Out):
    snapshot: SnapshotOut
    created: bool


class DatasetOut(_Out):
    name: str
    version: str
    num_queries: int
    num_judgements: int
    created_at: str | None


class DatasetCreated(_Out):
    dataset: DatasetOut
    created: bool


class RuleOut(_Out):
    id: int
    name: str
    kind: Literal["threshold", "window", "significance"]
    measure: str
    segment: str | None
    system: str | None
    enabled: bool
    description: str
    op: str | None = None
    value: float | None = None
    window_days: float | None = None
    max_drop: float | None = None
    min_points: int | None = None
    reference: str | None = None
    alpha: float | None = None
    test: str | None = None
    min_queries: int | None = None


class RuleResponse(_Out):
    rule: RuleOut


class WebhookOut(_Out):
    id: int
    url: str
    project: str | None
    enabled: bool
    has_secret: bool


class WebhookCreated(_Out):
    webhook: WebhookOut


class ErrorInfo(BaseModel):
    status: int
    code: str
    message: str
    details: list[dict[str, Any]] | None = None


class Error(BaseModel):
    """The one error shape of every 4xx and 5xx answer."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorInfo
