"""The offline judge with its real packaged model (WordLlama l2_supercat, inside the wordllama wheel)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

pytest.importorskip("wordllama", reason="the offline judge's model ships in the wordllama package (judges-embed extra)")

from ranklens.errors import FormatError, InputError  # noqa: E402
from ranklens.judges import EmbeddingJudge, Pair, Thresholds, WordLlamaEmbedder, best_cuts, calibrate, judge_pairs  # noqa: E402

TOPICS = {
    "q1": "how do vaccines train the immune system",
    "q2": "best way to store fresh basil",
    "q3": "causes of the french revolution",
}
DOCS = {
    ("q1", "a"): (3, "Vaccines expose the immune system to a harmless piece of a pathogen, so immune cells learn to "
                     "recognise it and respond quickly on a real infection."),
    ("q1", "b"): (1, "The immune system consists of white blood cells, antibodies and the lymphatic system."),
    ("q1", "c"): (0, "The stock market fell sharply on Tuesday as bond yields rose."),
    ("q2", "a"): (3, "Keep fresh basil like a bouquet: trim the stems, stand them in a glass of water at room "
                     "temperature and loosely cover the leaves."),
    ("q2", "b"): (1, "Basil is a fragrant herb used in Italian cooking, for example in pesto."),
    ("q2", "c"): (0, "The french revolution began in 1789 with the storming of the Bastille."),
    ("q3", "a"): (3, "Causes of the French Revolution include royal debt, food shortages, high taxes on commoners "
                     "and Enlightenment ideas."),
    ("q3", "b"): (1, "Paris is the capital of France and its largest city."),
    ("q3", "c"): (0, "Basil leaves turn black when stored in the refrigerator."),
}


def _pairs() -> list[Pair]:
    return [Pair(q, TOPICS[q], d, text) for (q, d), (_, text) in DOCS.items()]


def _human() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (q, d), (grade, _) in DOCS.items():
        out.setdefault(q, {})[d] = grade
    return out


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


def test_the_model_loads_from_the_package_without_the_network(embedder, monkeypatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the offline judge tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    vectors = WordLlamaEmbedder().embed(["relevance judgments", "ndcg"])
    assert vectors.shape == (2, 256)
    assert abs(float((vectors * vectors).sum(axis=1)[0]) - 1) < 1e-5


def test_similarity_orders_relevant_above_unrelated(embedder) -> None:
    from ranklens.judges.embedding import similarities

    for q in TOPICS:
        sims = similarities(embedder, TOPICS[q], [DOCS[(q, d)][1] for d in "abc"])
        assert sims[0] > sims[2], q


def test_calibrated_thresholds_agree_with_the_humans(embedder, tmp_path: Path) -> None:
    found = calibrate(_human(), _pairs(), embedder)
    assert found.model == "wordllama-l2_supercat-256" and found.pairs == 9
    assert found.cuts == sorted(found.cuts) and len(found.cuts) == 3
    assert found.agreement is not None and found.agreement >= 0.8
    found.save(tmp_path / "t.json")
    assert Thresholds.load(tmp_path / "t.json") == found

    judge = EmbeddingJudge(found, embedder)
    res = judge_pairs(_pairs(), judge)
    labels = res.labels()
    assert res.summary()["judged"] == 9
    for q in TOPICS:
        assert labels[q]["a"] > labels[q]["c"], q
    # the verdicts the judge gives are the ones the calibration scored: same agreement
    agree = [1 - abs(labels[q][d] - g) / 3 for (q, d), (g, _) in DOCS.items()]
    assert sum(agree) / len(agree) == pytest.approx(found.agreement, abs=1e-6)


def test_thresholds_of_another_model_are_refused(embedder, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="calibrated for 'other'"):
        EmbeddingJudge(Thresholds("other", 0, 3, [0.1, 0.2, 0.3]), embedder)
    (tmp_path / "bad.json").write_text(json.dumps({"model": "m", "low": 0, "high": 3, "cuts": [0.3, 0.2, 0.1]}))
    with pytest.raises(FormatError, match="ascending"):
        Thresholds.load(tmp_path / "bad.json")


def test_best_cuts_is_exact_on_separable_data() -> None:
    cuts, agreement = best_cuts([0.9, 0.1, 0.5, 0.7, 0.3], [3, 0, 1, 2, 0], 0, 3)
    assert agreement == 1.0 and cuts == [0.4, 0.6, 0.8]
    assert Thresholds("m", 0, 3, cuts).grade(0.55) == 1
