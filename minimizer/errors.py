"""Errors the user can act on: the CLI prints them as one line and exits with status 2."""


class MinimizerError(Exception):
    """A problem with the input or the options, explained in one line."""
