"""Numbers printed in Csiba & Richtárik, "Coordinate Descent Face-Off: Primal or Dual?".

This module is the single home of the paper's printed values (the long JMLR version,
Section 7 and the appendix), so that tables and reports compare
our measurements against one source. The paper's data matrix ``X`` is ``d x n`` (columns are
examples); ours, ``A``, is ``n x d``, i.e. ``A = X^T``. Hence the paper's ``C_P(X)`` (sum over
features, eq. (16)) is computed on the columns of ``A`` and ``C_D(X)`` on its rows.

Precision
---------
Table 1 prints ``d``, ``n`` and ``||X||_0`` exactly, the density in percent with two
decimals, ``C_P`` and ``C_D`` to **one significant digit** (``3×10^7``) and ``T_P/T_D`` with
one decimal (``2.0``, ``0.5``). A value of ours "matches the paper" when, rounded (half away
from zero) to the printed precision, it equals the printed value; see :class:`Precision`.
One significant digit is coarse: ``C_P = 2.5e7 … 3.49e7`` all print as ``3×10^7``, so a match
confirms the order of magnitude and leading digit, not more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

PAPER_CITATION = 'D. Csiba and P. Richtárik, "Coordinate Descent Face-Off: Primal or Dual?"'

#: Section 7: "In all our experiments we used lambda = 1/n and we normalized all the entries of X
#: by the average column norm" (a column of X is an example, i.e. a row of our A).
EXPERIMENT_L2 = "1/n"
EXPERIMENT_NORMALIZATION = "avg_example_norm"
#: Section 7.2: synthetic binary data of Figure 2 use d = 100 features.
FIGURE2_D = 100
#: What Sections 7.1-7.3 say of each Figure 1 panel: (the faster method, the sentence).
FIGURE1_CLAIMS = {
    "a": ("primal", "Sec. 7.1: d = n, a large speed-up of primal RCD"),
    "b": ("primal", "Sec. 7.1: d ≪ n, primal still faster (harder to observe)"),
    "c": ("dual", "Sec. 7.3: news, dual RCD empirically faster (T_P/T_D = 2.0)"),
    "d": ("primal", "Sec. 7.3: leukemia, primal better; the speedup matches T_P/T_D = 0.5"),
}
#: Section 7.2 on Figure 2.
FIGURE2_CLAIM = (
    "Sec. 7.2: while n is comparable to d primal RCD outperforms dual RCD; once α reaches "
    "~d² dual outperforms primal (Theorem 5)"
)
#: Appendix, Figure 3: R(alpha, d, n) is plotted for n = 10^3, n <= d <= n^2 and
#: max{d, n} <= alpha <= nd.
FIGURE3_N = 1000


@dataclass(frozen=True)
class Precision:
    """The precision to which a number is printed in the paper.

    Parameters
    ----------
    kind
        ``"exact"`` (integers printed in full), ``"sig"`` (``digits`` significant digits) or
        ``"decimals"`` (``digits`` digits after the decimal point of ``value * scale``).
    digits
        Number of significant digits or decimals.
    scale
        Factor applied before rounding in ``"decimals"`` mode (``100`` for a percentage).
    """

    kind: Literal["exact", "sig", "decimals"]
    digits: int = 0
    scale: float = 1.0

    def round(self, value: float) -> float:
        """Round ``value`` (in stored units) to this precision, half away from zero."""
        x = float(value)
        if not math.isfinite(x) or x == 0.0:
            return x
        if self.kind == "exact":
            return x
        if self.kind == "sig":
            exponent = math.floor(math.log10(abs(x)))
            quantum = 10.0 ** (exponent - self.digits + 1)
            return math.copysign(math.floor(abs(x) / quantum + 0.5) * quantum, x)
        if self.kind == "decimals":
            scaled = x * self.scale
            quantum = 10.0 ** (-self.digits)
            rounded = math.copysign(math.floor(abs(scaled) / quantum + 0.5) * quantum, scaled)
            return rounded / self.scale
        raise ValueError(f"unknown precision kind {self.kind!r}")

    def matches(self, ours: float, paper: float) -> bool:
        """True if ``ours`` printed at this precision equals the printed ``paper`` value."""
        if ours is None or paper is None:
            return False
        ours_f, paper_f = float(ours), float(paper)
        if not (math.isfinite(ours_f) and math.isfinite(paper_f)):
            return False
        if self.kind == "exact":
            return ours_f == paper_f
        return math.isclose(self.round(ours_f), paper_f, rel_tol=1e-9, abs_tol=1e-15)


#: Numeric columns of Table 1, in the paper's order.
TABLE1_COLUMNS: tuple[str, ...] = ("d", "n", "density", "nnz", "C_P", "C_D", "T_P_over_T_D")

#: Printed precision of each Table 1 column. ``density`` is stored as a fraction and printed
#: in percent with two decimals.
TABLE1_PRECISION: dict[str, Precision] = {
    "d": Precision("exact"),
    "n": Precision("exact"),
    "density": Precision("decimals", 2, 100.0),
    "nnz": Precision("exact"),
    "C_P": Precision("sig", 1),
    "C_D": Precision("sig", 1),
    "T_P_over_T_D": Precision("decimals", 1),
}

TABLE1_NOTE = (
    "Paper values are as printed in Table 1 of Csiba & Richtárik: d, n and ||X||_0 exactly, "
    "density in percent to two decimals, C_P and C_D to one significant digit, T_P/T_D to "
    "one decimal. 'Matches' means our value, rounded to that precision, equals the printed one."
)


@dataclass(frozen=True)
class Table1Row:
    """One row of the paper's Table 1 ("Details on the datasets used in the experiments").

    ``density`` is a fraction (``nnz / (n d)``), ``T_P_over_T_D`` the ratio of the total
    complexities (15) under importance sampling. ``printed`` keeps the cells verbatim.
    """

    dataset: str
    paper_name: str
    d: int
    n: int
    density: float
    nnz: int
    C_P: float
    C_D: float
    T_P_over_T_D: float
    printed: dict[str, str] = field(default_factory=dict)

    def value(self, column: str) -> float:
        """The paper's value of Table 1 column ``column``."""
        if column not in TABLE1_COLUMNS:
            raise KeyError(f"{column!r} is not a Table 1 column; expected one of {TABLE1_COLUMNS}")
        return getattr(self, column)


#: Table 1, keyed by our dataset names (LIBSVM ``news20.binary`` = the paper's "news",
#: LIBSVM ``leu`` = the paper's "leukemia").
TABLE1: dict[str, Table1Row] = {
    "news20.binary": Table1Row(
        dataset="news20.binary",
        paper_name="news",
        d=1_355_191,
        n=19_996,
        density=0.0003,
        nnz=9_097_916,
        C_P=3e7,
        C_D=9e6,
        T_P_over_T_D=2.0,
        printed={
            "d": "1,355,191",
            "n": "19,996",
            "density": "0.03%",
            "nnz": "9,097,916",
            "C_P": "3×10^7",
            "C_D": "9×10^6",
            "T_P_over_T_D": "2.0",
        },
    ),
    "leu": Table1Row(
        dataset="leu",
        paper_name="leukemia",
        d=7_129,
        n=38,
        density=1.0,
        nnz=270_902,
        C_P=1e7,
        C_D=2e9,
        T_P_over_T_D=0.5,
        printed={
            "d": "7,129",
            "n": "38",
            "density": "100.00%",
            "nnz": "270,902",
            "C_P": "1×10^7",
            "C_D": "2×10^9",
            "T_P_over_T_D": "0.5",
        },
    ),
}


def table1_row(dataset: str) -> Table1Row | None:
    """The paper's Table 1 row for our dataset name, or ``None`` if the paper has none."""
    return TABLE1.get(dataset)
