import libcst as cst

from minimizer.source.passes.structure.decorators import drop_decorators
from tests.source.helpers import check_candidates_are_valid_and_not_larger

SOURCE = '''@torch.no_grad()
@functools.lru_cache
def collect(x):
    return k(x)


@triton.jit
def kernel(x_ptr):
    pass


@torch.compile(backend="inductor")
def f(x):
    return x


@dataclasses.dataclass
class Case:
    @property
    def name(self):
        return "a"
'''


def test_a_decorator_goes_one_at_a_time_unless_it_makes_the_function_what_it_is():
    found = [c.code for c in drop_decorators(cst.parse_module(SOURCE))]
    assert found == [SOURCE.replace("@torch.no_grad()\n", ""), SOURCE.replace("@functools.lru_cache\n", "")]


def test_candidates_are_valid_and_not_larger():
    check_candidates_are_valid_and_not_larger(SOURCE, drop_decorators)
