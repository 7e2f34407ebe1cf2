"""The one SQL formulation of nDCG, DCG (linear and exp gain), P, R, AP, RR, Success, Rprec and Judged
(issue 30): written once in DuckDB's dialect (:mod:`ranklens.sql.formulation`), printed in others by sqlglot
(:mod:`ranklens.sql.dialects`), executed by the DuckDB engine (:mod:`ranklens.duckdb`) and by
``ranklens sql``. It declares what it expresses (:data:`SQL_MEASURES`, :data:`POLICY`) and says why it
declines the rest, as every provider of :mod:`ranklens.backends` does.
"""

from __future__ import annotations

from ranklens.sql.dialects import DIALECTS, check_dialect, to_dialect
from ranklens.sql.formulation import POLICY, SQL_MEASURES, measures_declined, per_query_sql, policy_declined, values_sql

__all__ = [
    "DIALECTS", "POLICY", "SQL_MEASURES", "check_dialect", "measures_declined", "per_query_sql", "policy_declined",
    "to_dialect", "values_sql",
]
