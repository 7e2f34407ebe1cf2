"""The monitor's A/B page states its design (issue 25 §4): two snapshots over the same queries are compared
pair by pair; two over different users (a between-subjects A/B test) as two groups, by Welch's test — the
library's implementation, checked here against scipy."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.stats as st

from .conftest import TOKEN, eval_json

AUTH = {"Authorization": f"Bearer {TOKEN}"}
P = "abdesign"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient

    from ranklens.monitor.app import Settings, create_app

    db = tmp_path_factory.mktemp("abdesign") / "ab.db"
    application = create_app(Settings(db_url=f"sqlite:///{db}", token=TOKEN, run_worker=False))
    rng = np.random.default_rng(3)
    values = {
        "control": {f"c{i}": float(v) for i, v in enumerate(rng.beta(2, 2, 40))},
        "treatment": {f"t{i}": float(v) for i, v in enumerate(rng.beta(3, 2, 50))},  # other users
        "offline": {f"c{i}": float(v) for i, v in enumerate(rng.beta(2, 2, 40))},  # control's users
    }
    with TestClient(application, headers=AUTH) as c:
        for system, vals in values.items():
            pq = {u: {"nDCG@4": v} for u, v in vals.items()}
            body = {"id": system, "system": system, "at": "2026-08-01T00:00:00Z", "results": eval_json(pq)}
            r = c.post(f"/api/v1/projects/{P}/snapshots", json=body, headers=AUTH)
            assert r.status_code == 201, r.text
        yield c, values


def test_users_split_between_systems_are_compared_unpaired(app: Any) -> None:
    c, values = app
    r = c.get(f"/api/v1/projects/{P}/ab", params={"baseline": "control", "candidate": "treatment", "measure": "nDCG@4"})
    assert r.status_code == 200, r.text
    comp = r.json()["comparison"]
    xt, xc = list(values["treatment"].values()), list(values["control"].values())
    ref = st.ttest_ind(xt, xc, equal_var=False)
    assert comp["design"] == "unpaired" and comp["test"] == "welch"
    assert comp["n_candidate"] == 50 and comp["n_baseline"] == 40 and comp["wins"] is None
    assert comp["mean_difference"] == pytest.approx(np.mean(xt) - np.mean(xc), abs=1e-12)
    assert comp["p_value"] == pytest.approx(float(ref.pvalue), abs=1e-12)
    assert [comp["ci_low"], comp["ci_high"]] == pytest.approx(list(map(float, ref.confidence_interval())), abs=1e-12)
    page = c.get(f"/projects/{P}/ab", params={"baseline": "control", "candidate": "treatment", "measure": "nDCG@4"})
    assert page.status_code == 200 and "Unpaired design" in page.text and "Welch" in page.text


def test_the_same_queries_are_compared_paired(app: Any) -> None:
    c, _ = app
    r = c.get(f"/api/v1/projects/{P}/ab", params={"baseline": "control", "candidate": "offline", "measure": "nDCG@4"})
    comp = r.json()["comparison"]
    assert comp["design"] == "paired" and comp["n"] == 40 and comp["wins"] is not None
