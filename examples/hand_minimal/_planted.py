"""PLANTED BUGS: stand-ins for compiler bugs, for testing minimizer.

The scripts in this folder import ``_planted`` from their own folder, as the examples do; this module loads
the one implementation, ../_planted.py, and re-exports it, so there is a single copy of the planted bugs.
"""

import importlib.util
import pathlib

_path = pathlib.Path(__file__).resolve().parent.parent / "_planted.py"
_spec = importlib.util.spec_from_file_location("_planted_examples", _path)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

plant_miscompile = _module.plant_miscompile
plant_crash = _module.plant_crash
planted_backend = _module.planted_backend
