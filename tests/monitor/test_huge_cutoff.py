"""Issue 22 item 17 on the monitor: a measure with a cutoff beyond the bound is refused by the measure parser
when the request is read, so server-side evaluation answers 4xx with the parser's message (it was a 500:
numpy overflowed while evaluating)."""

from __future__ import annotations

from typing import Any

import pytest

from ranklens.monitor.client import MonitorAPIError


@pytest.mark.parametrize("measure", ["nDCG@99999999999999999999", "P@9223372036854775808", "ndcg_cut.2147483648"])
def test_server_side_evaluation_refuses_a_huge_cutoff_with_a_4xx(client: Any, project: str, measure: str) -> None:
    client.add_dataset(project, "ds", "v1", {"q1": {"d1": 1}})
    with pytest.raises(MonitorAPIError) as info:
        client.evaluate_run({"q1": {"d1": 1.0}}, project=project, system="s", dataset="ds", measures=[measure])
    assert 400 <= info.value.status < 500, info.value
    assert "cutoff must be at most 2147483647" in str(info.value) + str(info.value.details)
    ok = client.evaluate_run({"q1": {"d1": 1.0}}, project=project, system="s", dataset="ds", measures=["nDCG@2147483647"])
    assert ok["values"]["nDCG@2147483647"] == 1.0
