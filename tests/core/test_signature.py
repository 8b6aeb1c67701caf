from oracles.api import ExceptionInfo
from oracles.signature import exception_signature, normalize_message


def test_numbers_shapes_paths_and_addresses_are_normalized():
    a = normalize_message("mat1 and mat2 shapes cannot be multiplied (8x64 and 32x64) at /tmp/a/b.py line 12 0x7f00ab")
    b = normalize_message("mat1 and mat2 shapes cannot be multiplied (2x3 and 5x3) at /home/u/c.py line 3 0x1")
    assert a == b


def test_shape_lists_of_different_rank_normalize_alike():
    assert normalize_message("got shape [2, 3, 4]") == normalize_message("got shape [1, 1]")
    assert normalize_message("torch.Size([8, 64])") == normalize_message("torch.Size([1])")


def test_different_messages_stay_different():
    assert normalize_message("expected float but got double") != normalize_message("expected double but got float")


def test_torch_advice_boilerplate_is_dropped():
    message = "backend='inductor' raised:\nRuntimeError: planted bug\n\nSet TORCHDYNAMO_VERBOSE=1 for more\n"
    assert normalize_message(message) == "backend='inductor' raised: | RuntimeError: planted bug"


def test_assert_signature_uses_the_test_source_and_message():
    exc = ExceptionInfo("AssertionError", "outputs differ", assert_text="torch.allclose(a,   b)")
    assert exception_signature(exc) == "AssertionError: assert torch.allclose(a, b) -- outputs differ"


def test_plain_exception_signature_is_type_and_message():
    exc = ExceptionInfo("RuntimeError", "size 64 does not match 32")
    assert exception_signature(exc) == "RuntimeError: size N does not match N"


def test_a_tensor_operand_history_is_not_part_of_the_signature():
    from oracles.signature import normalize_message

    after_gelu = "call_function linear(*(FakeTensor(..., size=(8, 32), grad_fn=<GeluBackward0>), Parameter(FakeTensor(..., size=(4, 32), requires_grad=True))))"
    straight = "call_function linear(*(FakeTensor(..., size=(2, 1)), Parameter(FakeTensor(..., size=(1, 1), requires_grad=True))))"
    assert normalize_message(after_gelu) == normalize_message(straight)
