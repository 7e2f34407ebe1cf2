"""``ranklens.judges.__all__`` is sorted and complete, and exporting ``agreement`` as ``judge_agreement`` leaves the
submodules ``ranklens.judges.agreement`` and ``ranklens.judges.ppi`` unshadowed."""

from __future__ import annotations

import types

import ranklens.judges as judges


def test_all_is_sorted_and_complete() -> None:
    assert judges.__all__ == sorted(judges.__all__)
    public = {n for n in dir(judges) if not n.startswith("_") and not isinstance(getattr(judges, n), types.ModuleType)}
    assert public == set(judges.__all__)


def test_agreement_and_ppi_are_exported_without_shadowing_their_modules() -> None:
    from ranklens.judges.agreement import agreement
    from ranklens.judges.ppi import ppi_evaluate

    assert isinstance(judges.agreement, types.ModuleType) and isinstance(judges.ppi, types.ModuleType)
    assert judges.judge_agreement is agreement and judges.ppi_evaluate is ppi_evaluate
    assert {"JudgeAgreement", "SystemOrdering", "system_ordering", "PPIReport"} <= set(judges.__all__)
    assert "agreement" not in judges.__all__
