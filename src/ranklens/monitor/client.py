"""A Python client for the ranklens monitor API.

>>> from ranklens.monitor.client import MonitorClient
>>> client = MonitorClient("http://127.0.0.1:8000", token="s3cret")   # doctest: +SKIP
>>> res = ranklens.evaluate(qrels, run, ["nDCG@10", "AP"])              # doctest: +SKIP
>>> client.push(res, project="search", system="bm25-v2")               # doctest: +SKIP
{'id': '...', 'created': True, 'rules': [...], ...}

The URL and token default to ``$RANKLENS_URL`` (else ``http://127.0.0.1:8000``) and ``$RANKLENS_TOKEN``.
Every write carries an id (generated once per call when not given), so the client retries a write after a
lost connection or a 5xx without ever storing it twice.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

from ranklens.errors import MissingDependencyError, RanklensError

__all__ = ["DEFAULT_URL", "MonitorAPIError", "MonitorClient", "MonitorConnectionError"]

DEFAULT_URL = "http://127.0.0.1:8000"


class MonitorAPIError(RanklensError):
    """The server answered with an error: ``status``, ``code`` and the server's message."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        super().__init__(f"monitor answered {status} {code}: {message}")


class MonitorConnectionError(RanklensError):
    """The server could not be reached (after retries)."""


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


class MonitorClient:
    """Talks to one monitor server. Use as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingDependencyError("httpx", "monitor", "the monitor client") from None
        self.url = (url or os.environ.get("RANKLENS_URL") or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get("RANKLENS_TOKEN")
        self.retries = retries
        self.backoff = backoff
        headers = {"User-Agent": "ranklens-client", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        self._http = httpx.Client(base_url=self.url, timeout=timeout, headers=headers, trust_env=False)

    def __enter__(self) -> MonitorClient:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- transport ------------------------------------------------------------------------------------
    def request(self, method: str, path: str, *, json_body: Any = None, params: Any = None) -> Any:
        """Send one request, retrying connection failures and 502/503/504; return the decoded JSON."""
        import httpx

        attempt = 0
        while True:
            try:
                resp = self._http.request(method, path, json=json_body, params=params)
            except (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.TimeoutException) as exc:
                if attempt >= self.retries:
                    raise MonitorConnectionError(f"cannot reach the monitor at {self.url}: {exc}") from None
            else:
                if resp.status_code in (502, 503, 504) and attempt < self.retries:
                    pass
                else:
                    return _decode(resp)
            time.sleep(self.backoff * (2**attempt))
            attempt += 1

    # -- writes ---------------------------------------------------------------------------------------
    def create_project(self, name: str, description: str = "") -> dict[str, Any]:
        return self.request("POST", "/api/v1/projects", json_body={"name": name, "description": description})  # type: ignore[no-any-return]

    def push(
        self,
        results: Any,
        *,
        project: str,
        system: str,
        at: dt.datetime | str | None = None,
        id: str | None = None,
        tags: dict[str, str] | None = None,
        run: str | None = None,
        dataset: str | None = None,
        query_segments: dict[str, str] | None = None,
        segments: dict[str, dict[str, float]] | None = None,
        expected_queries: Any = None,
        missing: str | None = None,
    ) -> dict[str, Any]:
        """Store a snapshot: ``results`` is a :class:`ranklens.Results`, the dict or file of
        ``ranklens eval --format json``, or one of its runs. Returns the snapshot with its rule checks and
        ``created`` (false when this id was stored before).

        ``expected_queries`` are the queries the results should cover: the qrels (a :class:`ranklens.Qrels`
        or anything with ``query_ids``) or their ids. Those without a per-query value score 0 unless
        ``missing="skip"`` (then the values are shown "on 35 of 50 queries"); the snapshot's coverage is
        stored either way. Results of ``ranklens eval --format json`` carry ``skipped_queries`` already."""
        body: dict[str, Any] = {"id": id or f"py-{uuid.uuid4().hex}", "system": system, "results": _results_json(results)}
        _optional(
            body, at=_time(at), tags=tags, run=run, dataset=dataset, query_segments=query_segments, segments=segments,
            expected_queries=_query_ids(expected_queries), missing=missing,
        )
        out = self.request("POST", f"/api/v1/projects/{_q(project)}/snapshots", json_body=body)
        return {**out["snapshot"], "created": out["created"]}

    def push_values(
        self,
        values: dict[str, float],
        *,
        project: str,
        system: str,
        at: dt.datetime | str | None = None,
        id: str | None = None,
        tags: dict[str, str] | None = None,
        segments: dict[str, dict[str, float]] | None = None,
    ) -> dict[str, Any]:
        """Store a snapshot given as plain ``{measure: value}``."""
        body: dict[str, Any] = {"id": id or f"py-{uuid.uuid4().hex}", "system": system, "values": values}
        _optional(body, at=_time(at), tags=tags, segments=segments)
        out = self.request("POST", f"/api/v1/projects/{_q(project)}/snapshots", json_body=body)
        return {**out["snapshot"], "created": out["created"]}

    def ingest(self, project: str, *, impressions: list[dict[str, Any]] | None = None,
               events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Send one batch of production events (each with an ``id``; see :mod:`ranklens.production.events`).
        Returns what was stored, repeated and refused (``rejected``: kind, index, id, field, reason)."""
        body: dict[str, Any] = {}
        if impressions:
            body["impressions"] = impressions
        if events:
            body["events"] = events
        return self.request("POST", f"/api/v1/projects/{_q(project)}/ingest", json_body=body)  # type: ignore[no-any-return]

    def ingest_status(self, project: str) -> dict[str, Any]:
        """Totals of the project's production logs: pending, orphan and clock-skew events, throughput."""
        return self.request("GET", f"/api/v1/projects/{_q(project)}/ingest")  # type: ignore[no-any-return]

    def refresh_windows(self, project: str, **settings: Any) -> dict[str, Any]:
        """Recompute the per-window series; ``settings`` (labels, window, label_delay, measures,
        reference_window, position_bias) update the project's production settings first."""
        return self.request("POST", f"/api/v1/projects/{_q(project)}/windows/refresh", json_body=settings)  # type: ignore[no-any-return]

    def production(self, project: str) -> dict[str, Any]:
        """The live page's data: the current series, drift, alerts of the series and ingestion status."""
        return self.request("GET", f"/api/v1/projects/{_q(project)}/production")  # type: ignore[no-any-return]

    def windows(self, project: str, *, history: bool = False, **filters: str) -> dict[str, Any]:
        """The stored series (``history``: every revision)."""
        params = {"history": "true" if history else "false", **filters}
        return self.request("GET", f"/api/v1/projects/{_q(project)}/windows", params=params)  # type: ignore[no-any-return]

    def add_dataset(self, project: str, name: str, version: str, qrels: Any) -> dict[str, Any]:
        """Upload a qrels version (a dict, :class:`ranklens.Qrels`, frame or file path)."""
        from ranklens.data.io import read_qrels

        data = qrels if isinstance(qrels, dict) else read_qrels(qrels).to_dict()
        out = self.request(
            "POST", f"/api/v1/projects/{_q(project)}/datasets", json_body={"name": name, "version": version, "qrels": data}
        )
        return {**out["dataset"], "created": out["created"]}

    def evaluate_run(
        self,
        run: Any,
        *,
        project: str,
        system: str,
        dataset: str,
        measures: list[str],
        version: str | None = None,
        at: dt.datetime | str | None = None,
        id: str | None = None,
        tags: dict[str, str] | None = None,
        query_segments: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Have the server evaluate ``run`` (dict, :class:`ranklens.Run`, frame or path) against a stored
        dataset and store the result as a snapshot."""
        from ranklens.data.io import read_run

        data = run if isinstance(run, dict) else read_run(run).to_dict()
        body: dict[str, Any] = {
            "id": id or f"py-{uuid.uuid4().hex}",
            "system": system,
            "dataset": dataset,
            "measures": list(measures),
            "run": data,
        }
        _optional(body, version=version, at=_time(at), tags=tags, query_segments=query_segments)
        out = self.request("POST", f"/api/v1/projects/{_q(project)}/runs", json_body=body)
        return {**out["snapshot"], "created": out["created"]}

    def add_rule(self, project: str, expr: str | None = None, **fields: Any) -> dict[str, Any]:
        """Add a rule: ``add_rule("search", "nDCG@10 >= 0.85", segment="books")``, or
        ``add_rule("search", kind="window", measure="nDCG@10", window_days=7, max_drop=0.02)``."""
        body = dict(fields)
        if expr is not None:
            body["expr"] = expr
        return self.request("POST", f"/api/v1/projects/{_q(project)}/rules", json_body=body)["rule"]  # type: ignore[no-any-return]

    def add_rules_file(self, project: str, path: str) -> list[dict[str, Any]]:
        """Add every rule of a TOML rules file, the one ``ranklens gate --rules`` reads; the file is read
        and checked here, before anything is sent."""
        from ranklens.monitor.schemas import rules_from_file

        bodies = [b.model_dump(mode="json", exclude_none=True) for b in rules_from_file(path)]
        return [self.request("POST", f"/api/v1/projects/{_q(project)}/rules", json_body=b)["rule"] for b in bodies]

    def set_headline_measure(self, project: str, measure: str | None) -> dict[str, Any]:
        """Set the measure the project's pages open on (``None``: the default, nDCG@10 when present)."""
        return self.request("PATCH", f"/api/v1/projects/{_q(project)}", json_body={"headline_measure": measure})["project"]  # type: ignore[no-any-return]

    def rules(self, project: str) -> list[dict[str, Any]]:
        """The project's rules (enabled and disabled), oldest first."""
        return self.request("GET", f"/api/v1/projects/{_q(project)}/rules")["rules"]  # type: ignore[no-any-return]

    def edit_rule(self, project: str, rule_id: int, expr: str | None = None, **fields: Any) -> dict[str, Any]:
        """Change a rule in place (same id): ``edit_rule("search", 3, "nDCG@10 >= 0.8")``,
        ``edit_rule("search", 3, segment="books")``, ``edit_rule("search", 3, enabled=True)``."""
        body = dict(fields)
        if expr is not None:
            body["expr"] = expr
        return self.request("PATCH", f"/api/v1/projects/{_q(project)}/rules/{int(rule_id)}", json_body=body)["rule"]  # type: ignore[no-any-return]

    def enable_rule(self, project: str, rule_id: int) -> dict[str, Any]:
        return self.edit_rule(project, rule_id, enabled=True)

    def disable_rule(self, project: str, rule_id: int) -> dict[str, Any]:
        return self.request("DELETE", f"/api/v1/projects/{_q(project)}/rules/{int(rule_id)}")["rule"]  # type: ignore[no-any-return]

    def add_webhook(self, url: str, *, project: str | None = None, secret: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"url": url}
        _optional(body, project=project, secret=secret)
        return self.request("POST", "/api/v1/webhooks", json_body=body)["webhook"]  # type: ignore[no-any-return]

    # -- reads ----------------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self.request("GET", "/api/v1/health")  # type: ignore[no-any-return]

    def projects(self) -> list[dict[str, Any]]:
        return self.request("GET", "/api/v1/projects")["projects"]  # type: ignore[no-any-return]

    def overview(self, project: str) -> dict[str, Any]:
        return self.request("GET", f"/api/v1/projects/{_q(project)}")  # type: ignore[no-any-return]

    def series(self, project: str, measure: str, *, systems: list[str] | None = None, segment: str = "") -> dict[str, Any]:
        params: dict[str, Any] = {"measure": measure, "segment": segment}
        if systems:
            params["system"] = systems
        return self.request("GET", f"/api/v1/projects/{_q(project)}/series", params=params)  # type: ignore[no-any-return]

    def snapshots(self, project: str, *, system: str | None = None, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if system is not None:
            params["system"] = system
        return self.request("GET", f"/api/v1/projects/{_q(project)}/snapshots", params=params)  # type: ignore[no-any-return]

    def snapshot(self, project: str, id: str, *, measure: str | None = None, compare: str | None = None) -> dict[str, Any]:
        params = {k: v for k, v in {"measure": measure, "compare": compare}.items() if v is not None}
        return self.request("GET", f"/api/v1/projects/{_q(project)}/snapshots/{_q(id)}", params=params)  # type: ignore[no-any-return]

    def alerts(self, project: str, *, state: str | None = None) -> list[dict[str, Any]]:
        params = {"state": state} if state else None
        return self.request("GET", f"/api/v1/projects/{_q(project)}/alerts", params=params)["alerts"]  # type: ignore[no-any-return]

    def ab(self, project: str, a: str, b: str, measure: str, *, segment: str = "", test: str = "t") -> dict[str, Any]:
        """The A/B page's data: ``a`` is the candidate, ``b`` the baseline; every difference is
        candidate − baseline (positive: the candidate is better)."""
        params = {"candidate": a, "baseline": b, "measure": measure, "segment": segment, "test": test}
        return self.request("GET", f"/api/v1/projects/{_q(project)}/ab", params=params)  # type: ignore[no-any-return]

    def webhooks(self) -> dict[str, Any]:
        return self.request("GET", "/api/v1/webhooks")  # type: ignore[no-any-return]


def _decode(resp: Any) -> Any:
    try:
        body = resp.json()
    except ValueError:
        body = None
    if resp.status_code >= 400:
        err = (body or {}).get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):
            raise MonitorAPIError(resp.status_code, str(err.get("code")), str(err.get("message")), err.get("details"))
        raise MonitorAPIError(resp.status_code, "http_error", resp.text[:500])
    return body


def _optional(body: dict[str, Any], **fields: Any) -> None:
    body.update({k: v for k, v in fields.items() if v is not None})


def _time(at: dt.datetime | str | None) -> str | None:
    if at is None:
        return None
    if isinstance(at, str):
        return at
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.timezone.utc)
    return at.isoformat()


def _query_ids(expected: Any) -> list[str] | None:
    """Query ids from a Qrels (its ``query_ids``: an Arrow array or a list) or an iterable of ids."""
    if expected is None:
        return None
    ids = getattr(expected, "query_ids", expected)
    if hasattr(ids, "to_pylist"):
        ids = ids.to_pylist()
    if isinstance(ids, (str, bytes)):
        raise TypeError("expected_queries must be the qrels or a list of query ids, not one string")
    return [str(q) for q in ids]


def _results_json(results: Any) -> dict[str, Any]:
    from ranklens.results.core import Results

    if isinstance(results, Results):
        return results.to_json_dict()
    if isinstance(results, (str, Path)):
        return json.loads(Path(results).read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    if isinstance(results, dict):
        return results
    raise TypeError(f"results must be a ranklens.Results, a dict or a JSON file path; got {type(results).__name__}")
