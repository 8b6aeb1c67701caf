import torch

import edge_backend

x = torch.ones(1)
torch.testing.assert_close(torch.compile(torch.nn.functional.gelu, backend="edge")(x), torch.nn.functional.gelu(x))
