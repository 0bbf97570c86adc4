"""pdsparse: primal and dual coordinate methods for sparse empirical risk minimization."""

__version__ = "0.1.0"
