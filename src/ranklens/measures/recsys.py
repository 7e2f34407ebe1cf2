"""Recommender measures: beyond-accuracy (novelty, popularity, diversity, serendipity), F1, fall-out, AUC
and the system-level catalogue measures (coverage, entropy coverage, Gini, personalization).

Definitions only; kernels are :mod:`ranklens.engine.kernels.recsys`. A query is a user and a document an
item; the test split is the qrels, the recommendations are the run, and the side inputs are the training
interactions (``train=`` / ``--train``) and the item catalog (``items=`` / ``--items``), read by
:mod:`ranklens.data.interactions`. A family's ``needs`` names the side inputs it reads:

* ``train``: the training interactions;
* ``items``: the item catalog with a category or numeric features (kept for plugins; ILD falls back to
  the training co-occurrence without it);
* ``catalog``: the set of catalogue items: the items of ``--items`` when given, else the distinct items of
  ``--train``.

Per-list measures have a value per user; the aggregate over users is chosen with ``agg=`` (``mean``
default, ``median``, ``p90`` …) or ``--aggregate``. System-level measures (``Coverage``,
``EntropyCoverage``, ``Gini``, ``Personalization``, ``AUC(pooled=true)``) have one value per run and no
value per user: :class:`~ranklens.Results` lists them in :attr:`~ranklens.Results.system` and leaves their
per-query column NaN, and ``compare`` shows them without a p-value.
"""

from __future__ import annotations

from ranklens.errors import MeasureError
from ranklens.measures.base import AGG, AGGREGATES, Family, Measure, Param

__all__ = ["AGGREGATES", "LABEL_FREE", "RECSYS_FAMILIES", "agg_param"]

REL = Param("rel", "level", 1, "relevance threshold: a test item is relevant when its label is ≥ rel")
#: per-list families whose values do not read the test labels (empty=zero|one leaves them alone)
LABEL_FREE = ("Novelty", "ARP", "ILD")


def agg_param(m: Measure) -> str:
    """The aggregate ``m`` asks for (``mean`` for families without ``agg``)."""
    return str(m.get("agg")) if any(p.name == "agg" for p in m.family.params) else "mean"


def _always(m: Measure) -> bool:
    return True


def _pooled(m: Measure) -> bool:
    return bool(m.get("pooled"))


def _check_auc(m: Measure) -> None:
    if m.get("pooled") and m.get("agg") != "mean":
        raise MeasureError(f"{m}: the pooled AUC is one value per run; agg= applies to the per-user AUC")


_TRAIN_BY = "train= (Python: Evaluator(..., train=PATH)) or --train FILE"
_ITEMS_BY = "items= (Python: Evaluator(..., items=PATH)) or --items FILE"

RECSYS_FAMILIES: tuple[Family, ...] = (
    Family(
        "Novelty",
        "Mean over the user's top-k items of −log2(n_i / U): n_i = distinct training users who interacted "
        "with item i, U = distinct training users. Items absent from the training data are left out of the "
        "mean (a note counts them); a user none of whose top-k items is in it is NA. Needs --train.",
        params=(AGG,),
        cutoff="required",
        aggregate="nanmean",
        reference="Vargas & Castells, RecSys 2011; Microsoft Recommenders historical_item_novelty",
        example="Novelty@10, Novelty(agg=median)@10",
        reads="top",
        needs=("train",),
        computed_by=_TRAIN_BY,
    ),
    Family(
        "ARP",
        "Average recommendation popularity: mean over the user's top-k items of n_i, the number of distinct "
        "training users of item i (0 for items absent from the training data). Needs --train.",
        params=(AGG,),
        cutoff="required",
        aggregate="nanmean",
        aliases=("avgpop",),
        reference="Abdollahpouri et al., FLAIRS 2019",
        example="ARP@10",
        reads="top",
        needs=("train",),
        computed_by=_TRAIN_BY,
    ),
    Family(
        "ILD",
        "Intra-list diversity: mean over the C(k,2) pairs of the top-k items of 1 − cosine(f_i, f_j) over the "
        "catalog's numeric features, or with a category 1 if the categories differ else 0, or (without "
        "--items: Microsoft Recommenders' default) 1 − the co-occurrence cosine |users of i ∩ users of j| / "
        "√(n_i·n_j) of --train. on=auto: features, else category, else co-occurrence. Items absent from what "
        "is compared on are left out; a user with fewer than 2 such items in the top k is NA.",
        params=(
            AGG,
            Param(
                "on", "choice", "auto", "what items are compared on: auto, features, category or cooccurrence (--train)",
                choices=("auto", "features", "category", "cooccurrence"),
            ),
        ),
        cutoff="required",
        aggregate="nanmean",
        aliases=("intralistdiversity",),
        reference="Ziegler et al., WWW 2005; Microsoft Recommenders diversity (1 − mean pairwise similarity)",
        example="ILD@10, ILD(on=category)@10",
        reads="top",
        needs=("catalog",),
        computed_by=_ITEMS_BY + ", or " + _TRAIN_BY,
    ),
    Family(
        "Serendipity",
        "Microsoft Recommenders' serendipity (after Ge et al.): per user, the mean over the top-k items i of "
        "(1 − mean_{j ∈ H_u} sim(i, j)) · rel(i), where H_u is the user's training items, rel(i) = 1 when i "
        "is relevant in the test split (label ≥ rel) else 0, and sim = item co-occurrence cosine "
        "|users of i ∩ users of j| / √(n_i·n_j) over the training data (sim=features: cosine of the "
        "catalogue features). A user without training items is NA. Needs --train.",
        params=(
            AGG,
            REL,
            Param("sim", "choice", "cooccurrence", "item similarity: cooccurrence (training users) or features (--items)", choices=("cooccurrence", "features")),
        ),
        cutoff="required",
        aggregate="nanmean",
        reference="Ge et al., RecSys 2010; Microsoft Recommenders serendipity",
        example="Serendipity@10",
        reads="top",
        needs=("train",),
        computed_by=_TRAIN_BY,
    ),
    Family(
        "F1",
        "Harmonic mean of P@k and R@k: 2·P·R/(P + R), 0 when both are 0. Without a cutoff, `f1` is SetF "
        "(ranx's f1 over the retrieved set).",
        params=(AGG, REL),
        cutoff="required",
        example="F1@10",
        reads="top",
    ),
    Family(
        "FallOut",
        "Fall-out: judged non-relevant items (0 ≤ label < rel) in the top k divided by the user's judged "
        "non-relevant items (0 when there is none).",
        params=(AGG, REL),
        cutoff="required",
        aliases=("fall_out",),
        example="FallOut@10",
        reads="top",
    ),
    Family(
        "AUC",
        "ROC AUC of relevant (label ≥ rel) against judged non-relevant items: per user, the fraction of "
        "(relevant, non-relevant) pairs ranked in the right order, judged items the run does not list ranked "
        "below every listed one (ties among them count ½); NA when the user lacks either kind; the mean over "
        "users is GAUC. AUC(pooled=true): one AUC over all users' pairs by the run's scores (listed items "
        "above unlisted ones, ties ½, as scikit-learn roc_auc_score): system-level.",
        params=(AGG, REL, Param("pooled", "bool", False, "one global AUC over all users (system-level) instead of one per user")),
        cutoff="none",
        aggregate="nanmean",
        aliases=("gauc",),
        reference="Fawcett 2006; Zhou et al., KDD 2018 (GAUC)",
        example="AUC, AUC(pooled=true)",
        check=_check_auc,
        system=_pooled,
    ),
    Family(
        "Coverage",
        "Catalog coverage: |⋃ over users of the top-k items ∩ catalog| / |catalog|, catalog = the items of "
        "--items when given, else the distinct items of --train (recommended items outside it are counted "
        "in a note). System-level.",
        cutoff="required",
        aliases=("catalogcoverage", "catalog_coverage"),
        reference="Ge et al., RecSys 2010; Microsoft Recommenders catalog_coverage",
        example="Coverage@10",
        reads="top",
        needs=("catalog",),
        computed_by=_TRAIN_BY + ", or " + _ITEMS_BY,
        system=_always,
    ),
    Family(
        "EntropyCoverage",
        "Distributional coverage: −Σ_i p_i log2 p_i over the recommended items, p_i = exposures of i in the "
        "top-k lists / all exposures. System-level.",
        cutoff="required",
        aliases=("distributionalcoverage", "distributional_coverage"),
        reference="Shani & Gunawardana 2011; Microsoft Recommenders distributional_coverage",
        example="EntropyCoverage@10",
        reads="top",
        system=_always,
    ),
    Family(
        "Gini",
        "Gini coefficient of the exposure counts over the whole catalog (items never recommended count 0): "
        "G = Σ_j (2j − n − 1)·x_(j) / (n·Σx), x sorted ascending, j = 1…n, n = catalog size (catalog as for "
        "Coverage). 0 = equal exposure, → 1 = all on one item. System-level.",
        cutoff="required",
        aliases=("giniindex", "gini_index"),
        reference="Fleder & Hosanagar 2009; Evidently Popularity Bias",
        example="Gini@10",
        reads="top",
        needs=("catalog",),
        computed_by=_TRAIN_BY + ", or " + _ITEMS_BY,
        system=_always,
    ),
    Family(
        "Personalization",
        "1 − the mean cosine similarity of the binary top-k vectors over all pairs of users (with at least "
        "one item), computed from exposure counts without forming the pairs: with w_i = Σ_{u: i ∈ top-k(u)} "
        "1/√k_u, Σ_{u<v} cos(u,v) = (Σ_i w_i² − N)/2 over N users. System-level.",
        cutoff="required",
        reference="Evidently Personalization; Microsoft Recommenders-style pairwise list overlap",
        example="Personalization@10",
        reads="top",
        system=_always,
    ),
)
