"""Where and in what precision the script runs, said once: its moves to one device (`.to(D)`, `device=D`) become
`torch.set_default_device(D)`, and autocast becomes the dtype it computes in, given to the tensors the script makes.

Both take away a mode the script puts around its work, so that the passes after them see plain calls: the moves
go before the class passes (`Block().to(D)` is no instance those read), autocast before the operator bypasses
(with the inputs made in autocast's dtype, the operator that produced that dtype can be bypassed like any other).
"""

from minimizer.source.passes.devices.autocast import autocast_to_dtypes
from minimizer.source.passes.devices.moves import moves_to_default_device

PASSES = [moves_to_default_device, autocast_to_dtypes]
