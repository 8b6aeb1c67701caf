import torch


@torch.library.custom_op("corpus::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@scale.register_fake
def _(x):
    return x.new_empty(x.shape[:-1])


torch.compile(lambda x: scale(x) + x)(torch.ones(1, 1))
