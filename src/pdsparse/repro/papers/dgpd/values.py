"""What the DGPD paper prints (Lei, Yen, Wu, Dhillon & Ravikumar, ICML 2017), beside which we
put our numbers. Source: the paper's Table 2 and Section 5.

Not printed (ours, labelled "not printed: ours" in the config, captions and docs): the step
eta of the experiments (Theorem 4.2's step is printed; the races' x10 is ours), a batch of
coordinates per search and Gauss-Seidel inner passes, the baselines' settings.
"""

from __future__ import annotations

__all__ = ["CLAIMS", "TABLE2", "TABLE2_COLUMNS", "TABLE2_SETTING"]

TABLE2_SETTING = {"lam": 0.1, "mu": 0.01}
"""Table 2's #nz-primal and #nz-dual are DGPD's at lambda = 0.1, mu = 0.01."""

TABLE2_COLUMNS = ("features", "nnz_per_sample", "train", "test", "classes", "nz_primal",
                  "nz_dual")

# data set -> Table 2 row (#features, #nonzero/sample, #train, #test, #classes, #nz-primal,
# #nz-dual). The paper does not say how #nz-primal / #nz-dual combine the classes (summed over
# one-vs-rest problems, per class, or of a multiclass solver); we report the sums.
TABLE2: dict[str, tuple[float, ...]] = {
    "Mnist-RF": (10_000, 10_000, 58_000, 2_000, 10, 1_730, 2_000),
    "Aloi-RF": (10_000, 10_000, 90_000, 8_000, 1_000, 891, 1_428),
    "Mnist-RB": (1_572_556, 1_000, 58_000, 2_000, 10, 1_733, 1_208),
    "Aloi-RB": (636_910, 200, 90_000, 8_000, 1_000, 1_032, 782),
    "RCV1-Regions": (47_236, 68.38, 199_328, 23_149, 225, 1_123, 1_447),
    "Sector": (55_197, 162.94, 7_793, 961, 105, 610, 655),
}

CLAIMS = (
    "Abstract: up to 30 times speedup over state-of-the-art methods on multi-class data.",
    "Sec. 5: in all cases DGPD has better performance than other methods; on Mnist-RB, Aloi-RB "
    "and RCV1 (log time axis) improvements of orders of magnitude.",
    "Sec. 5: measured in outer iterations, DGPD's convergence can be even better than "
    "DualRCD's (it does several inner passes per search).",
)
