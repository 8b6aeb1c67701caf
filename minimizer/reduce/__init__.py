"""Format-agnostic reduction: the scheduler that runs passes, and the tester that decides."""
