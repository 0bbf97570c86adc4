"""Problem.from_libsvm: one's own LIBSVM file to a certified solve in one call (issue 20)."""

import bz2
import gzip

import numpy as np
import pytest

from pdsparse.errors import DataError
from pdsparse.problem import Problem
from pdsparse.reference import reference_solution
from pdsparse.solvers import solve


def libsvm_file(tmp_path, name, classes=(1, 2, 3), n=90):
    rng = np.random.default_rng(0)
    lines = ["# a comment line\n"]
    for i in range(n):
        c = classes[i % len(classes)]
        feats = " ".join(f"{j + 1}:{rng.uniform(0.1, 1) + (j == i % 6):.3f}" for j in range(6))
        lines.append(f"{c} {feats}\n")
    text = "".join(lines).encode()
    path = tmp_path / name
    opener = {".bz2": bz2.compress, ".gz": gzip.compress}.get(path.suffix, lambda t: t)
    path.write_bytes(opener(text))
    return path


@pytest.mark.parametrize("name", ["mine.txt", "mine.bz2", "mine.gz"])
def test_binary_file_to_a_certified_solve(tmp_path, name):
    path = libsvm_file(tmp_path, name, classes=(0, 1))
    p = Problem.from_libsvm(path, "logistic", normalization="unit_rows")
    assert set(p.b) == {-1.0, 1.0} and p.n == 90 and p.l2 == pytest.approx(1 / 90)
    np.testing.assert_allclose(np.asarray(p.mat.multiply(p.mat).sum(axis=1)).ravel(), 1.0)
    res = solve(p, "dual_rcd", tol=1e-8)
    assert res.status == "converged"
    ref = reference_solution(p)
    assert res.trace.primal.iloc[-1] == pytest.approx(ref.p_star, rel=1e-7)


def test_multiclass_one_vs_rest_or_one_class(tmp_path):
    path = libsvm_file(tmp_path, "multi.bz2")
    ovr = Problem.from_libsvm(path, "smooth_hinge", l2=0.1, l1=0.01)
    assert ovr.b.shape == (90, 3) and ovr.penalty.l1 == 0.01
    one = Problem.from_libsvm(path, "smooth_hinge", positive_class=2, l2=0.1)
    assert one.b.shape == (90,) and (one.b == 1).sum() == 30
    res = solve(one, "dgpd", tol=1e-8, max_seconds=20)
    assert res.status == "converged"
    ball = Problem.from_libsvm(path, "squared", penalty={"name": "l1_ball", "radius": 1.0,
                                                         "l2": "10/n"})
    assert ball.radius == 1.0 and ball.l2 == pytest.approx(10 / 90)


def test_errors_name_the_file(tmp_path):
    with pytest.raises(DataError, match="mine.txt: LIBSVM file not found"):
        Problem.from_libsvm(tmp_path / "mine.txt")


def test_one_class_file_warns_as_advise_does(tmp_path):
    """A one-class file with a classification loss: a UserWarning, the same sentence as
    ``pdsparse advise``'s (issue 29 item 8: it was accepted silently); the squared loss (a
    constant target) and a two-class file stay silent."""
    import warnings

    from pdsparse.advise import advise

    path = tmp_path / "one.txt"
    path.write_text("1 1:1 2:3\n1 2:1\n1 1:2\n")
    with pytest.warns(UserWarning, match=r"one\.txt: the file has one class only \(label 1\)"
                      ) as caught:
        p = Problem.from_libsvm(path, "logistic")
    assert p.b.tolist() == [1.0, 1.0, 1.0]
    message = str(caught[0].message).split(": ", 1)[1]
    assert advise(path).warnings[0].startswith(message)
    two = tmp_path / "two.txt"
    two.write_text("1 1:1 2:3\n-1 2:1\n1 1:2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Problem.from_libsvm(path, "squared")
        Problem.from_libsvm(two, "logistic")
    assert advise(path, loss="squared").warnings == []
