import torch
import torch.nn.functional as F

import deploy_backend

x = torch.randn(2)
torch.testing.assert_close(torch.compile(F.layer_norm, backend="deploy")(x, (2,)), F.layer_norm(x, (2,)))
