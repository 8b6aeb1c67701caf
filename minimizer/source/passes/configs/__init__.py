"""The settings a script runs with: the sizes it gives a library's model shrunk (`GPT2Config(n_layer=2)` ->
`n_layer=1`), a dataclass config's fields and the command-line options read as their defaults.

A library model's sizes set how long every later candidate takes to run, and a setting written where it is read
leaves the config class, its variable and the parameters that hand it down unused, for the dead-code and
parameter passes to take; so these come before statement ddmin.
"""

from minimizer.source.passes.configs.defaults import inline_argument_defaults, inline_config_defaults
from minimizer.source.passes.configs.library import shrink_library_configs

PASSES = [shrink_library_configs, inline_config_defaults, inline_argument_defaults]
