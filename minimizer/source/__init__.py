"""The source representation: a script as a libcst Module, and passes that shrink it."""
