"""Loaded before any test module: the runner must see the environment before torch's Inductor config is imported
(importing it writes Inductor's default cache folder into os.environ; see minimizer.runner.process)."""

import minimizer.runner.process  # noqa: F401

# The modules whose tests reduce a script end to end (a minute or more each), run first: with two workers, the
# long tests then overlap each other and the short ones fill in after, instead of one long test left running
# alone at the end (the suite's wall time is the sum of its work over two, not that plus a tail).
_LONG_FIRST = ("tests/e2e/", "tests/test_fidelity.py", "tests/test_triage.py", "tests/test_ray.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid.replace("\\", "/")
        return next((i for i, prefix in enumerate(_LONG_FIRST) if path.startswith(prefix)), len(_LONG_FIRST))

    items.sort(key=rank)  # stable: within a rank, the order as collected
