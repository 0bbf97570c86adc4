"""Exception types: every user-facing failure names the file, line or setting at fault."""


class PdsparseError(Exception):
    """Base class of the package's errors."""


class ConfigError(PdsparseError, ValueError):
    """A configuration key is missing, misspelt or of the wrong type."""


class DataError(PdsparseError, ValueError):
    """A data file is missing, corrupt, or does not match its registry entry."""
