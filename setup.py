"""Cython extension build; metadata lives in pyproject.toml."""

import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# -O3 lets gcc unroll the gather loops; no -ffast-math: the kernels must stay
# bit-reproducible and IEEE-faithful (the gap certificates depend on it), and no
# contraction into FMA, so that _fastexp.h gives the same bits on every CPU.
COMPILE_ARGS = ["-O3", "-ffp-contract=off", "-Wno-psabi"]  # psabi: inlined vectors only

# Every kernel inlines code from the .pxd files (``cdef inline``) and from _fastexp.h:
# editing one must recompile the C of every extension (cythonize tracks the cimports of a
# .pyx for regenerating its C; setuptools needs ``depends`` to recompile that C).
DEPENDS = sorted(str(p) for p in Path("src/pdsparse").rglob("*") if p.suffix in (".pxd", ".h"))

# every kernel, by its module name: src/pdsparse/solvers/_rcd.pyx -> pdsparse.solvers._rcd
KERNELS = {".".join(p.relative_to("src").with_suffix("").parts): str(p)
           for p in sorted(Path("src/pdsparse").rglob("_*.pyx"))}

extensions = [
    Extension(
        name,
        [source],
        depends=DEPENDS,
        include_dirs=[np.get_include(), "src/pdsparse"],
        extra_compile_args=COMPILE_ARGS,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name, source in KERNELS.items()
    # PDSPARSE_BUILD_ONLY=_erm,_dgpd: rebuild only these while working on a kernel
    if not os.environ.get("PDSPARSE_BUILD_ONLY")
    or name.rpartition(".")[2] in os.environ["PDSPARSE_BUILD_ONLY"].split(",")
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
