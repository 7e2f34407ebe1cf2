"""The monitoring service's write side: projects, datasets, snapshots (ingest), server-side evaluation,
rules and webhooks. The HTTP API, the demo seeder and the tests all go through :class:`Monitor`.

Ingestion is one transaction: the snapshot, its values, its per-query values, the rule checks, alert
changes and the webhook deliveries they cause are committed together or not at all. A snapshot is keyed by
the client's id within its project: sending the same id again with the same content returns the stored
snapshot (``created: false``); the same id with different content is a :class:`Conflict`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from sqlalchemy import Table, bindparam, select
from sqlalchemy.orm import Session

from ranklens.errors import InputError, Note
from ranklens.monitor.coverage import (
    COVERAGE,
    coverage_counts,
    coverage_json,
    fill_unanswered,
    recompute_aggregates,
    stored_coverage,
)
from ranklens.monitor.db import Database
from ranklens.monitor.errors import Conflict, NotFound
from ranklens.monitor.models import (
    Dataset,
    Project,
    Rule,
    RuleCheck,
    Snapshot,
    SnapshotQueries,
    SnapshotValue,
    System,
    Webhook,
    utcnow,
)
from ranklens.monitor.rules import (
    Ref,
    SnapRef,
    SnapshotData,
    describe_rule,
    ensure_coverage_rule,
    evaluate_rules,
    find_same_rule,
    rule_json,  # (re-exported: the views and the routes show rules through it)
)
from ranklens.monitor.schemas import (
    LIMITS,
    DatasetIn,
    EvalDocument,
    ProjectIn,
    RuleIn,
    RunIn,
    RunResults,
    SnapshotIn,
    WebhookIn,
    check_project_name,
    rules_from_file,
)

__all__ = ["Monitor", "iso", "normalise_snapshot"]

def _table(model: Any) -> Table:
    return model.__table__  # type: ignore[no-any-return]


# The ingest path's statements, built once (building a statement costs more than running it on SQLite).
_PROJECT_ID = select(Project.id).where(Project.name == bindparam("name"))
_SYSTEM_ID = select(System.id).where(System.project_id == bindparam("p"), System.name == bindparam("name"))
_INSERT_SYSTEM = _table(System).insert().returning(_table(System).c.id)
_LOCK_SYSTEM = select(System.id).where(System.id == bindparam("id")).with_for_update()
_SNAPSHOT_BY_CLIENT_ID = select(Snapshot.id, Snapshot.digest).where(
    Snapshot.project_id == bindparam("p"), Snapshot.client_id == bindparam("c")
)
_INSERT_SNAPSHOT = _table(Snapshot).insert().returning(_table(Snapshot).c.id)
_INSERT_VALUE = _table(SnapshotValue).insert()
_INSERT_QUERIES = _table(SnapshotQueries).insert()


def iso(t: dt.datetime | None) -> str | None:
    """ISO 8601 UTC with a ``Z``."""
    if t is None:
        return None
    return t.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def _tags(tags: dict[str, str] | list[str]) -> dict[str, str]:
    if isinstance(tags, list):
        return {t: "" for t in tags}
    return dict(tags)


def normalise_snapshot(body: SnapshotIn, *, now: dt.datetime | None = None) -> SnapshotData:
    """Turn a validated request into :class:`SnapshotData`: pick the run, drop missing values, compute
    segment means from per-query values, and fingerprint the content for idempotency checks."""
    if (body.results is None) == (body.values is None):
        raise InputError("give the values either as 'results' (ranklens eval --format json) or as 'values'")
    _refuse_given_coverage(body)
    aggregates: dict[str, float] = {}
    queries: list[str] | None = None
    per_query: dict[str, list[float | None]] | None = None
    num_queries: int | None = None
    run: RunResults | None = None
    if body.results is not None:
        run = _pick_run(body.results, body.run)
        aggregates = {m: v for m, v in run.aggregate.items() if v is not None}
        num_queries = run.num_queries
        if run.per_query:
            queries = sorted(run.per_query)
            names = list(run.aggregate)
            for row in run.per_query.values():
                for m in row:
                    if m not in names:
                        names.append(m)
            per_query = {m: [run.per_query[q].get(m) for q in queries] for m in names}
            if num_queries is None:
                num_queries = len(queries)
    else:
        assert body.values is not None
        aggregates = dict(body.values)
    missing = body.missing or "zero"
    coverage: dict[str, tuple[int, int]] | None = None
    expected = _expected(body, run, queries)
    if expected is not None:
        answered = list(queries or [])
        filled = fill_unanswered(answered, per_query or {}, expected, missing)
        if filled.unanswered and missing == "zero":
            aggregates = recompute_aggregates(aggregates, filled.per_query)
            queries, per_query, num_queries = filled.queries, filled.per_query, len(filled.queries)
        coverage = coverage_counts(answered, expected, body.query_segments)
    elif run is not None and run.skipped_queries and not run.per_query:
        coverage = _aggregate_only_coverage(run, missing)
    measures = [m for m in aggregates if m != COVERAGE]
    if per_query:
        measures += [m for m in per_query if m not in aggregates]
    if not measures:
        raise InputError("the snapshot has no measure values")
    segment_values: dict[str, dict[str, float]] = {}
    query_segments: list[str | None] | None = None
    if body.query_segments:
        if queries is None or per_query is None:
            raise InputError("query_segments needs per-query values (ranklens eval --per-query --format json)")
        query_segments = [body.query_segments.get(q) for q in queries]
        groups: dict[str, list[int]] = {}  # one pass: segment → its query indices
        for i, seg in enumerate(query_segments):
            if seg is not None:
                groups.setdefault(seg, []).append(i)
        _check_segment_count(groups, body.segments)  # before any mean is computed
        for seg in sorted(groups):
            idx = groups[seg]
            for m, col in per_query.items():
                present = [x for x in (col[i] for i in idx) if x is not None]
                if present:
                    segment_values.setdefault(seg, {})[m] = mean(present)
    else:
        _check_segment_count({}, body.segments)
    for seg, given in (body.segments or {}).items():
        segment_values.setdefault(seg, {}).update(given)
    for seg, (a, e) in (coverage or {}).items():
        if e:  # the coverage series: answered / expected
            (segment_values.setdefault(seg, {}) if seg else aggregates)[COVERAGE] = a / e
    if COVERAGE in aggregates and COVERAGE not in measures:
        measures.append(COVERAGE)
    at = body.at or now or utcnow()
    tags = _tags(body.tags)
    if body.dataset is not None:
        tags.setdefault("dataset", body.dataset)
    content: dict[str, Any] = {
        "system": body.system,
        "at": iso(body.at),  # a default time ("now") is not content: a retry without 'at' is the same snapshot
        "tags": tags,
        "aggregates": aggregates,
        "segments": segment_values,
        "queries": queries,
        "per_query": per_query,
        "query_segments": query_segments,
    }
    if coverage is not None:  # (absent otherwise: the digest of a snapshot without coverage is unchanged)
        content["coverage"] = {k: list(v) for k, v in coverage.items()}
        content["missing"] = missing
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return SnapshotData(
        client_id=body.id or f"auto-{uuid.uuid4().hex}",
        system=body.system,
        at=at,
        tags=tags,
        measures=measures,
        aggregates=aggregates,
        segment_values=segment_values,
        num_queries=num_queries,
        queries=queries,
        per_query=per_query,
        query_segments=query_segments,
        digest=digest,
        coverage=coverage,
        missing=missing if coverage is not None else None,
    )


def _refuse_given_coverage(body: SnapshotIn) -> None:
    """``query_coverage`` is computed here from the expected queries, never taken from the request."""
    given = [*(body.values or {}), *(k for v in (body.segments or {}).values() for k in v)]
    if body.results is not None:
        runs = body.results.runs if isinstance(body.results, EvalDocument) else [body.results]
        given += [k for r in runs for k in r.aggregate]
    if COVERAGE in given:
        raise InputError(
            f"{COVERAGE} is computed by the monitor (answered / expected queries); send expected_queries "
            "(or an eval run's skipped_queries) instead of a value"
        )


def _expected(body: SnapshotIn, run: RunResults | None, queries: list[str] | None) -> list[str] | None:
    """The queries the snapshot was expected to answer: ``expected_queries``, else the answered and the
    ``skipped_queries`` of an eval run with per-query values; None when unknown."""
    if body.expected_queries is not None:
        if queries is None:
            raise InputError(
                "expected_queries needs per-query values (ranklens eval --per-query --format json): "
                "without them the monitor cannot tell which queries were answered"
            )
        return list(dict.fromkeys(body.expected_queries))
    if run is not None and run.skipped_queries is not None and queries is not None:
        return sorted(set(queries) | set(run.skipped_queries))
    return None


def _aggregate_only_coverage(run: RunResults, missing: str) -> dict[str, tuple[int, int]]:
    """The coverage of an eval run without per-query values that skipped queries: the values are over
    the answered queries only, so they can be stored only as such (``missing: "skip"``)."""
    skipped = len(run.skipped_queries or [])
    answered = run.num_queries if run.num_queries is not None else 0
    expected = run.expected_queries if run.expected_queries is not None else answered + skipped
    if missing == "zero":
        raise InputError(
            f"the run did not answer {skipped} of its {expected} qrels queries, which score 0 unless the push "
            "says missing='skip' (ranklens push --missing skip); to score them 0 the monitor needs per-query "
            "values: ranklens eval … --per-query --format json"
        )
    return {"": (answered, expected)}


def _check_segment_count(groups: dict[str, list[int]], given: dict[str, Any] | None) -> None:
    n = len(groups.keys() | (given or {}).keys())
    if n > LIMITS["segments"]:
        raise InputError(f"at most {LIMITS['segments']} segments per snapshot; got {n}")


def mean(xs: list[float]) -> float:
    """The mean of finite numbers, finite even when their sum is not (``1.7e308`` twice: ``1.7e308``).

    >>> mean([0.2, 0.4]), mean([1.7e308, 1.7e308])
    (0.30000000000000004, 1.7e+308)
    """
    try:
        total = math.fsum(xs)
    except OverflowError:  # an intermediate sum beyond the float range
        total = math.inf
    if math.isfinite(total):
        return total / len(xs)
    n = len(xs)
    return math.fsum(x / n for x in xs)


def _pick_run(results: EvalDocument | RunResults, name: str | None) -> RunResults:
    if isinstance(results, RunResults):
        return results
    runs = results.runs
    if name is not None:
        for r in runs:
            if r.run == name:
                return r
        raise InputError(f"no run named {name!r} in the results; runs: {', '.join(str(r.run) for r in runs)}")
    if len(runs) > 1:
        raise InputError(
            f"the results hold {len(runs)} runs ({', '.join(str(r.run) for r in runs)}); say which with 'run'"
        )
    return runs[0]


class Monitor:
    """Writes to the monitoring store. ``on_delivery`` is called after a commit that queued webhook
    deliveries (the server wakes its delivery worker with it)."""

    def __init__(self, db: Database, *, on_delivery: Callable[[], None] | None = None) -> None:
        self.db = db
        self.on_delivery = on_delivery
        self._evaluators: OrderedDict[int, Any] = OrderedDict()
        self._evaluators_lock = threading.Lock()
        self._ids: dict[tuple[Any, str], int] = {}  # (kind or project id, name) → id, for the ingest path

    # -- projects -------------------------------------------------------------------------------------
    def create_project(self, body: ProjectIn) -> tuple[dict[str, Any], bool]:
        def fn(s: Session) -> tuple[dict[str, Any], bool]:
            p = s.scalar(select(Project).where(Project.name == body.name))
            created = p is None
            if p is None:
                p = Project(name=body.name, description=body.description)
                s.add(p)
                s.flush()
            return {"name": p.name, "description": p.description, "created_at": iso(p.created_at)}, created

        return self.db.write(fn)

    # -- ingest ---------------------------------------------------------------------------------------
    def ingest(self, project: str, body: SnapshotIn, *, source: str = "push") -> tuple[dict[str, Any], bool]:
        """Store one snapshot and check the rules; returns ``(response, created)``."""
        check_project_name(project)
        data = normalise_snapshot(body)
        response, created = self.ingest_data(project, data, source=source)
        run = _pick_run(body.results, body.run) if body.results is not None else None
        if run is not None and run.note_data is not None:
            response["note_data"] = run.note_data  # (the pushed results' notes, as data: a face words them)
        return response, created

    def ingest_data(self, project: str, data: SnapshotData, *, source: str = "push") -> tuple[dict[str, Any], bool]:
        result = self.db.write(lambda s: self._ingest(s, project, data, source))
        if result[0].get("deliveries_queued") and self.on_delivery is not None:
            self.on_delivery()
        return result

    def _ingest(self, s: Session, project_name: str, data: SnapshotData, source: str) -> tuple[dict[str, Any], bool]:
        try:
            return self._ingest_once(s, project_name, data, source)
        except Exception:
            self._ids.clear()  # a cached id may be stale (a project deleted by another process): look up again
            raise

    def _ingest_once(self, s: Session, project_name: str, data: SnapshotData, source: str) -> tuple[dict[str, Any], bool]:
        project = Ref(self._project_id(s, project_name), project_name)
        system = Ref(self._system_id(s, project.id, data.system), data.system)
        if not self.db.is_sqlite:
            # One ingest per system at a time (a row lock; SQLite writers are serialised already), so rule
            # windows and alert changes see every earlier snapshot of the system.
            s.execute(_LOCK_SYSTEM, {"id": system.id})
        existing = s.execute(_SNAPSHOT_BY_CLIENT_ID, {"p": project.id, "c": data.client_id}).first()
        if existing is not None:
            if existing.digest != data.digest:
                raise Conflict(
                    f"snapshot {data.client_id!r} already exists in project {project_name!r} with different content"
                )
            snap_row = s.get(Snapshot, existing.id)
            assert snap_row is not None
            return self._replay(s, project, snap_row), False
        created = utcnow()
        row = {
            "project_id": project.id,
            "system_id": system.id,
            "dataset_id": data.dataset_id,
            "client_id": data.client_id,
            "digest": data.digest,
            "at": data.at,
            "created_at": created,
            "measures": json.dumps(data.measures),
            "tags": json.dumps(data.tags, ensure_ascii=False),
            "num_queries": data.num_queries,
            "has_per_query": data.per_query is not None,
            "source": source,
            "coverage": None if data.coverage is None else json.dumps({k: list(v) for k, v in data.coverage.items()}, ensure_ascii=False),
            "missing": data.missing,
        }
        snap_id = s.execute(_INSERT_SNAPSHOT, row).scalar_one()
        snap = SnapRef(snap_id, data.client_id, data.at)
        rows = [{"snapshot_id": snap_id, "measure": m, "segment": "", "value": v} for m, v in data.aggregates.items()]
        for seg, vals in data.segment_values.items():
            rows.extend({"snapshot_id": snap_id, "measure": m, "segment": seg, "value": v} for m, v in vals.items())
        if rows:
            s.execute(_INSERT_VALUE, rows)
        if data.per_query is not None:
            doc = {"queries": data.queries, "segments": data.query_segments, "values": data.per_query}
            s.execute(_INSERT_QUERIES, {"snapshot_id": snap_id, "data": json.dumps(doc, ensure_ascii=False)})
        if data.coverage is not None and ("cov", project.name) not in self._ids:
            ensure_coverage_rule(s, project.id)
            self._ids[("cov", project.name)] = 1
        outcomes = evaluate_rules(s, project, system, snap, data)
        response = {
            "id": data.client_id,
            "project": project_name,
            "system": data.system,
            "at": iso(data.at),
            "created_at": iso(created),
            "measures": data.measures,
            "values": data.aggregates,
            "segments": data.segment_values,
            "tags": data.tags,
            "num_queries": data.num_queries,
            "has_per_query": data.per_query is not None,
            "source": source,
            **coverage_json(data.coverage, data.missing),
            "rules": [o.to_dict() for o in outcomes],
            "deliveries_queued": sum(o.deliveries for o in outcomes),
        }
        return response, True

    def _project_id(self, s: Session, name: str) -> int:
        key = ("p", name)
        pid = self._ids.get(key)
        if pid is None:
            pid = s.scalar(_PROJECT_ID, {"name": name})
            if pid is None:
                pid = _get_or_create_project(s, name).id
            self._ids[key] = pid
        return pid

    def _system_id(self, s: Session, project_id: int, name: str) -> int:
        key = (project_id, name)
        sid = self._ids.get(key)
        if sid is None:
            sid = s.scalar(_SYSTEM_ID, {"p": project_id, "name": name})
            if sid is None:
                sid = s.scalar(_INSERT_SYSTEM, {"project_id": project_id, "name": name, "description": "", "created_at": utcnow()})
            self._ids[key] = sid
        return int(sid)

    def _replay(self, s: Session, project: Ref, snap: Snapshot) -> dict[str, Any]:
        system = s.get(System, snap.system_id)
        assert system is not None
        aggregates: dict[str, float] = {}
        segments: dict[str, dict[str, float]] = {}
        for m, seg, v in s.execute(
            select(SnapshotValue.measure, SnapshotValue.segment, SnapshotValue.value).where(
                SnapshotValue.snapshot_id == snap.id
            )
        ):
            if seg:
                segments.setdefault(seg, {})[m] = v
            else:
                aggregates[m] = v
        response = _snapshot_json(project, system, snap, aggregates, segments)
        checks = s.execute(
            select(RuleCheck, Rule).join(Rule, Rule.id == RuleCheck.rule_id).where(RuleCheck.snapshot_id == snap.id)
        ).all()
        names = {system.id: system.name}
        response["rules"] = [
            {"rule_id": r.id, "rule": describe_rule(r, names, c.segment), "segment": c.segment or None, "status": c.status,
             "value": c.value, "detail": c.detail, "alert": None}
            for c, r in checks
        ]
        response["deliveries_queued"] = 0
        return response

    # -- datasets and server-side evaluation ----------------------------------------------------------
    def add_dataset(self, project: str, body: DatasetIn) -> tuple[dict[str, Any], bool]:
        check_project_name(project)
        text = json.dumps(body.qrels, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256(text.encode()).hexdigest()
        n_j = sum(len(d) for d in body.qrels.values())

        def fn(s: Session) -> tuple[dict[str, Any], bool]:
            p = _get_or_create_project(s, project)
            d = s.scalar(
                select(Dataset).where(Dataset.project_id == p.id, Dataset.name == body.name, Dataset.version == body.version)
            )
            if d is not None:
                if d.digest != digest:
                    raise Conflict(f"dataset {body.name!r} version {body.version!r} already exists with other qrels")
                return _dataset_json(d), False
            d = Dataset(
                project_id=p.id,
                name=body.name,
                version=body.version,
                qrels=text,
                num_queries=len(body.qrels),
                num_judgements=n_j,
                digest=digest,
                created_at=utcnow(),
            )
            s.add(d)
            s.flush()
            return _dataset_json(d), True

        return self.db.write(fn)

    def evaluate_run(self, project: str, body: RunIn) -> tuple[dict[str, Any], bool]:
        """Evaluate an uploaded run against a stored qrels version, then ingest it as a snapshot."""
        from ranklens.engine import Evaluator

        check_project_name(project)
        with self.db.read() as s:
            p = s.scalar(select(Project).where(Project.name == project))
            if p is None:
                raise NotFound(f"no project {project!r}")
            q = select(Dataset).where(Dataset.project_id == p.id, Dataset.name == body.dataset)
            if body.version is not None:
                q = q.where(Dataset.version == body.version)
            d = s.scalar(q.order_by(Dataset.created_at.desc(), Dataset.id.desc()).limit(1))
            if d is None:
                raise NotFound(f"no dataset {body.dataset!r}" + (f" version {body.version!r}" if body.version else ""))
            dataset_id, dataset_name, dataset_version = d.id, d.name, d.version
            qrels_text = None
            with self._evaluators_lock:
                cached = self._evaluators.get(dataset_id)
            if cached is None:
                qrels_text = d.qrels
        if cached is None:
            assert qrels_text is not None
            qrels = json.loads(qrels_text)
            from ranklens.data.io import read_qrels

            cached = read_qrels(qrels)
            with self._evaluators_lock:
                self._evaluators[dataset_id] = cached
                while len(self._evaluators) > 8:
                    self._evaluators.popitem(last=False)
        results = Evaluator(body.measures, cached)(body.run, name=body.system, warn=False)  # notes go in the snapshot
        run_json = results.to_json_dict()
        answered = set(results.query_ids)  # the qrels queries the run did not answer count (as 0 by default)
        run_json["skipped_queries"] = [q for q in cached.query_ids.to_pylist() if q not in answered]
        tags = _tags(body.tags)
        tags.setdefault("dataset", f"{dataset_name}@{dataset_version}")
        snapshot = SnapshotIn(
            id=body.id,
            system=body.system,
            at=body.at,
            tags=tags,
            results=RunResults.model_validate(run_json),
            query_segments=body.query_segments,
            missing=body.missing,
        )
        data = normalise_snapshot(snapshot)
        data.dataset_id = dataset_id
        response, created = self.ingest_data(project, data, source="run")
        response["notes"] = run_json.get("notes", [])
        response["note_data"] = [n.data() for n in results.notes if isinstance(n, Note)]  # (data, not words to parse)
        return response, created

    # -- rules and webhooks ---------------------------------------------------------------------------
    def add_rule(self, project: str, body: RuleIn) -> dict[str, Any]:
        check_project_name(project)
        rule_in = body.resolved()

        def fn(s: Session) -> dict[str, Any]:
            p = _get_or_create_project(s, project)
            system_id = _get_or_create_system(s, p, rule_in.system).id if rule_in.system else None
            ref_id = _get_or_create_system(s, p, rule_in.reference).id if rule_in.reference else None
            assert rule_in.measure is not None
            same = find_same_rule(s, p.id, rule_in, system_id, ref_id)
            if same is not None:  # the same rule twice is one rule (one alert per breach)
                if rule_in.enabled and not same.enabled:
                    same.enabled = True
                names = {sid: n for sid, n in s.execute(select(System.id, System.name).where(System.project_id == p.id))}
                return rule_json(same, names)
            rule = Rule(
                project_id=p.id,
                name=rule_in.name or "",
                kind=rule_in.kind,
                measure=rule_in.measure,
                segment=rule_in.segment or "",
                system_id=system_id,
                enabled=rule_in.enabled,
                created_at=utcnow(),
            )
            if rule_in.kind == "threshold":
                rule.op, rule.threshold = rule_in.op, rule_in.value
            elif rule_in.kind == "window":
                rule.window_days, rule.max_drop, rule.min_points = rule_in.window_days, rule_in.max_drop, rule_in.min_points
            else:
                rule.reference_system_id, rule.alpha, rule.test = ref_id, rule_in.alpha, rule_in.test
                rule.min_queries = rule_in.min_queries
            s.add(rule)
            s.flush()
            names = {sid: n for sid, n in s.execute(select(System.id, System.name).where(System.project_id == p.id))}
            if not rule.name:
                rule.name = describe_rule(rule, names)[:200]
            return rule_json(rule, names)

        return self.db.write(fn)

    def add_rules_file(self, project: str, path: str) -> list[dict[str, Any]]:
        """Add every rule of a TOML rules file, the one ``ranklens gate --rules`` reads
        (:func:`ranklens.gates.read_rules`); the whole file is checked before the first rule is stored."""
        bodies = rules_from_file(path)
        return [self.add_rule(project, body) for body in bodies]

    def set_rule_enabled(self, project: str, rule_id: int, enabled: bool) -> dict[str, Any]:
        """Enable or disable a rule; disabling resolves nothing by itself but stops further checks."""

        def fn(s: Session) -> dict[str, Any]:
            p = s.scalar(select(Project).where(Project.name == project))
            rule = s.get(Rule, rule_id)
            if p is None or rule is None or rule.project_id != p.id:
                raise NotFound(f"no rule {rule_id} in project {project!r}")
            rule.enabled = enabled
            names = {sid: n for sid, n in s.execute(select(System.id, System.name).where(System.project_id == p.id))}
            return rule_json(rule, names)

        return self.db.write(fn)

    def add_webhook(self, body: WebhookIn) -> dict[str, Any]:
        def fn(s: Session) -> dict[str, Any]:
            project_id = None
            if body.project is not None:
                project_id = _get_or_create_project(s, body.project).id
            hook = Webhook(project_id=project_id, url=body.url, secret=body.secret, enabled=body.enabled, created_at=utcnow())
            s.add(hook)
            s.flush()
            return {"id": hook.id, "url": hook.url, "project": body.project, "enabled": hook.enabled, "has_secret": bool(hook.secret)}

        return self.db.write(fn)


def _get_or_create_project(s: Session, name: str) -> Project:
    p = s.scalar(select(Project).where(Project.name == name))
    if p is None:
        p = Project(name=name, description="", created_at=utcnow())
        s.add(p)
        s.flush()
    return p


def _get_or_create_system(s: Session, project: Project, name: str) -> System:
    sy = s.scalar(select(System).where(System.project_id == project.id, System.name == name))
    if sy is None:
        sy = System(project_id=project.id, name=name, description="", created_at=utcnow())
        s.add(sy)
        s.flush()
    return sy


def _snapshot_json(
    project: Ref, system: System, snap: Snapshot, aggregates: dict[str, float], segments: dict[str, dict[str, float]]
) -> dict[str, Any]:
    return {
        "id": snap.client_id,
        "project": project.name,
        "system": system.name,
        "at": iso(snap.at),
        "created_at": iso(snap.created_at),
        "measures": json.loads(snap.measures),
        "values": aggregates,
        "segments": segments,
        "tags": json.loads(snap.tags),
        "num_queries": snap.num_queries,
        "has_per_query": snap.has_per_query,
        "source": snap.source,
        **coverage_json(stored_coverage(snap.coverage), snap.missing),
    }


def _dataset_json(d: Dataset) -> dict[str, Any]:
    return {
        "name": d.name,
        "version": d.version,
        "num_queries": d.num_queries,
        "num_judgements": d.num_judgements,
        "created_at": iso(d.created_at),
    }
