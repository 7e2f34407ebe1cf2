"""Issue 29: drops on the per-window series are tested with an always-valid p (mSPRT), so looking at a window
at every refresh while its data arrives does not inflate false alarms; a z-test at every look does."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, norm

from ranklens.monitor.production_alerts import drop_p

WINDOWS = 300
LOOKS = 20
ALPHA = 0.05


def test_300_unchanged_windows_looked_at_20_times() -> None:
    rng = np.random.default_rng(2026)
    reference, sd = 0.5, 0.25  # the true mean of every window: nothing changed
    msprt_alarms = z_alarms = 0
    for _ in range(WINDOWS):
        values = rng.normal(reference, sd, size=50 * LOOKS)  # requests arriving; look j sees the first 50·j
        running_p = 1.0
        z_fired = False
        for j in range(1, LOOKS + 1):
            seen = values[: 50 * j]
            mean, se = float(seen.mean()), float(seen.std(ddof=1) / np.sqrt(seen.size))
            running_p = min(running_p, drop_p(mean, se, reference, 0.0, max_drop=0.0, tau=0.1 * reference, alpha=ALPHA))
            z_fired |= bool(norm.cdf((mean - reference) / se) < ALPHA)  # one-sided z-test "is it lower?" at this look
        msprt_alarms += running_p < ALPHA
        z_alarms += z_fired
    # mSPRT: each window's chance of a false alarm is at most α however often it is looked at, so the count is
    # at most Binomial(300, 0.05): below its 99.9th percentile (28)
    assert msprt_alarms <= binom.ppf(0.999, WINDOWS, ALPHA)
    # the z-test at every look: each look alone is an α-level test, together they fire far more often
    assert z_alarms > 2 * binom.ppf(0.999, WINDOWS, ALPHA) and z_alarms > 3 * max(msprt_alarms, 1)
    print(f"\n300 unchanged windows × 20 looks: mSPRT {msprt_alarms} alarms, z-test at every look {z_alarms}")


def test_a_real_drop_is_found() -> None:
    rng = np.random.default_rng(5)
    found = 0
    for _ in range(50):
        values = rng.normal(0.40, 0.25, size=500)  # 0.1 below the reference of 0.5
        mean, se = float(values.mean()), float(values.std(ddof=1) / np.sqrt(values.size))
        found += drop_p(mean, se, 0.5, 0.0, max_drop=0.0, tau=0.05) < ALPHA
    assert found == 50
    # beyond the allowed drop only: 0.40 is within a 0.15 drop of 0.5, never an alarm
    assert drop_p(0.40, 0.01, 0.5, 0.0, max_drop=0.15, tau=0.05) == 1.0


@pytest.mark.parametrize("value", [0.5, 0.6])
def test_no_drop_no_alarm(value: float) -> None:
    assert drop_p(value, 0.001, 0.5, 0.0, max_drop=0.0, tau=0.05) == 1.0
