import torch

from oracles.tensor_bytes import tensor_bytes


def test_a_tensors_bytes_are_numpys_without_numpy():
    # torch 2.5.1 installs without NumPy; the harness's digests read the bytes themselves (func_grad_inplace
    # ended in "Numpy is not available" under minimizer where plain python failed its check).
    for tensor in [torch.arange(6.0).reshape(2, 3).t(), torch.tensor([True, False]), torch.arange(4, dtype=torch.int64)]:
        assert tensor_bytes(tensor) == tensor.contiguous().numpy().tobytes()
    assert tensor_bytes(torch.ones(0)) == b""
    assert tensor_bytes(torch.random.get_rng_state()) == torch.random.get_rng_state().numpy().tobytes()
