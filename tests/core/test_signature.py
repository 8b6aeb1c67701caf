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


def test_an_assert_without_a_message_is_told_by_its_test_source():
    exc = ExceptionInfo("AssertionError", "", assert_text="torch.allclose(a,   b)")
    assert exception_signature(exc) == "AssertionError: assert torch.allclose(a, b)"


def test_an_assert_with_a_message_is_told_by_the_message_and_the_shape_of_its_test():
    # Renaming or inlining what it compares keeps the check; dropping a tolerance or changing the comparison
    # does not.
    def signature(test, message="bank update differs"):
        return exception_signature(ExceptionInfo("AssertionError", message, assert_text=test))

    original = signature("torch.allclose(bank.features, expected, atol=1e-3)")
    assert original == "AssertionError: assert torch.allclose(_, _, atol=0.001) -- bank update differs"
    assert signature("torch.allclose(features, bank.snapshot() * 2, atol=1e-3)") == original
    assert signature("torch.allclose(bank.features, expected)") != original
    assert signature("torch.equal(bank.features, expected)") != original
    assert signature("torch.allclose(bank.features, expected, atol=1e-3)", "another check") != original
    assert signature("not info['target_attached']") == signature("not torch.compile(f)(x).requires_grad")
    assert signature("(forwards, backwards) == (1, 0)") != signature("(forwards, backwards) == (1, 1)")


def test_plain_exception_signature_is_type_and_message():
    exc = ExceptionInfo("RuntimeError", "size 64 does not match 32")
    assert exception_signature(exc) == "RuntimeError: size N does not match N"


def test_a_tensor_operand_history_is_not_part_of_the_signature():
    from oracles.signature import normalize_message

    after_gelu = "call_function linear(*(FakeTensor(..., size=(8, 32), grad_fn=<GeluBackward0>), Parameter(FakeTensor(..., size=(4, 32), requires_grad=True))))"
    straight = "call_function linear(*(FakeTensor(..., size=(2, 1)), Parameter(FakeTensor(..., size=(1, 1), requires_grad=True))))"
    assert normalize_message(after_gelu) == normalize_message(straight)


def test_with_evidence_the_message_is_left_out_and_the_check_shape_and_exit_status_stay():
    # A loop over cases asserting with f"{name} differs" fails for step0 and step1 alike: with the failing
    # comparison recorded, its message must not pin the loop.
    def signature(test, message, exc_type="AssertionError"):
        return exception_signature(ExceptionInfo(exc_type, message, assert_text=test), evidence=True)

    assert signature(None, "step0 differs") == signature(None, "case (2, 'relu') differs") == "AssertionError"
    assert signature("torch.allclose(out, ref, atol=1e-3)", "step0") == "AssertionError: assert atol=0.001"
    assert signature("torch.allclose(out, ref, atol=1e-3)", "") != signature("torch.allclose(out, ref)", "")
    assert signature(None, "1", "SystemExit") == "SystemExit: N"


def test_with_evidence_only_what_decides_the_comparison_stays_of_the_test():
    # The comparison is the evidence's to tell; how the test spells its way to it is not (a check over one layer's
    # outputs collapsed to the comparison itself is the same check), its tolerances and thresholds are.
    from oracles.signature import deciding_parts

    spelled = ["all(close(o, r) for o, r in zip([out], [ref]))", "all([torch.allclose(out, ref)])", "torch.allclose(out, torch.ones(2))"]
    assert {deciding_parts(test) for test in spelled} == {"_"}
    assert deciding_parts("(out - ref).abs().max().item() < 1e-5") == "< 1e-05"
    assert deciding_parts("torch.allclose(out, ref, atol=1e-3)") != deciding_parts("torch.allclose(out, ref)")
    assert deciding_parts("(f, b) == (1, 0)") == "== (1, 0)" and deciding_parts("not problems") == "not"
    assert deciding_parts("x.max(dim=1).values.sum() == -1.5") == "== -1.5"  # `dim=1` computes an operand
