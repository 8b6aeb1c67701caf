"""Loaded before any test module: the runner must see the environment before torch's Inductor config is imported
(importing it writes Inductor's default cache folder into os.environ; see minimizer.runner.process)."""

import minimizer.runner.process  # noqa: F401

