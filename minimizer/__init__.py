"""minimizer: shrink a failing torch.compile / Triton script to the smallest script that shows the same bug."""

__version__ = "0.1.0"
