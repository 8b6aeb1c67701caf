"""Loaded before any test module: the runner must see the environment before torch's Inductor config is imported
(importing it writes Inductor's default cache folder into os.environ; see minimizer.runner.process)."""

import minimizer.runner.process  # noqa: F401



# The suite's longest tests (end-to-end reductions), first: with two workers, a long test that starts last is the
# run's tail, the other worker idle beside it.
_LONGEST_FIRST = ("tests/e2e/", "tests/test_fidelity.py", "tests/test_triage.py", "tests/test_ray.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: not item.nodeid.startswith(_LONGEST_FIRST))
