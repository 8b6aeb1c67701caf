"""Errors the user can act on: the CLI prints them as one line and exits with status 2."""


class MinimizerError(Exception):
    """A problem with the input or the options, explained in one line; ``details`` (a traceback, say) is shown
    with ``--verbose``."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class ReproDoesNotFail(MinimizerError):
    """The repro was written, but plain python does not fail with the bug it claims (exit status 1)."""
