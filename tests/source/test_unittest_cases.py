import libcst as cst

from minimizer.source.passes.structure.unittest_cases import unittest_cases_to_statements


def candidates(source: str) -> list[str]:
    return [candidate.code for candidate in unittest_cases_to_statements(cst.parse_module(source))]


SEED_490 = '''import unittest
import torch

shift = torch.arange(2.0)


class ParityTest(unittest.TestCase):
    def test_outputs_match(self):
        out = torch.ones(2)
        kernel[1,](shift, out, 2)
        self.assertTrue(torch.allclose(out, shift))


unittest.main()
'''


def test_a_test_case_becomes_its_body_at_module_level_with_a_plain_assert():
    assert candidates(SEED_490) == ['''import unittest
import torch

shift = torch.arange(2.0)


out = torch.ones(2)
kernel[1,](shift, out, 2)
assert torch.allclose(out, shift)
''']


def test_each_assertion_has_its_plain_spelling_and_keeps_its_message():
    body = (
        "        self.assertEqual(a, b)\n        self.assertFalse(x or y, 'msg')\n"
        "        self.assertLess(err, 1e-3, msg=f'{err}')\n        self.assertIsNotNone(out)\n"
    )
    source = f"import unittest\n\n\nclass T(unittest.TestCase):\n    def test_it(self):\n{body}\n\nunittest.main()\n"
    assert candidates(source) == [
        "import unittest\n\n\nassert a == b\nassert not (x or y), 'msg'\nassert err < 1e-3, f'{err}'\n"
        "assert out is not None\n"
    ]


def test_one_candidate_per_test_method():
    source = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(f(1))\n\n"
        "    def test_b(self):\n        self.assertTrue(f(2))\n\n\nunittest.main()\n"
    )
    assert candidates(source) == ["import unittest\n\n\nassert f(1)\n", "import unittest\n\n\nassert f(2)\n"]


def test_what_has_no_plain_spelling_or_reads_the_case_is_left_alone():
    left_alone = [
        "        self.assertAlmostEqual(a, b)\n",  # no plain spelling here
        "        self.helper(a)\n",  # another method of the case, gone with the class
        "        x = self.fixture\n",  # state of the case
        "        self.assertEqual(*pair)\n",
    ]
    for body in left_alone:
        source = f"import unittest\n\n\nclass T(unittest.TestCase):\n    def test_it(self):\n{body}\n\nunittest.main()\n"
        assert candidates(source) == [], body
    with_tear_down = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def tearDown(self):\n        self.x = 1\n\n"
        "    def test_it(self):\n        self.assertTrue(f())\n\n\nunittest.main()\n"
    )
    assert candidates(with_tear_down) == []


def test_set_up_runs_first_and_the_cases_attributes_become_names():
    source = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        self.x = torch.ones(2)\n\n"
        "    def test_it(self):\n        x = self.x\n        out = f(x)\n        self.assertTrue(torch.allclose(out, self.x))\n\n\n"
        "unittest.main()\n"
    )
    assert candidates(source) == [
        "import unittest\n\n\nx = torch.ones(2)\nout = f(x)\nassert torch.allclose(out, x)\n"
    ]


def test_a_name_the_test_binds_must_not_rebind_one_the_script_reads_later():
    test = "class T(unittest.TestCase):\n    def test_it(self):\n        out = f()\n        self.assertTrue(out)\n"
    read_by_a_function = f"import unittest\n\nout = 1\n\n\ndef f():\n    return out\n\n\n{test}\n\nunittest.main()\n"
    read_after = f"import unittest\n\nout = 1\n\n\n{test}\n\nprint(out)\nunittest.main()\n"
    assert candidates(read_by_a_function) == []
    assert candidates(read_after) == []


def test_a_name_the_script_reads_only_before_the_test_is_the_tests_to_rebind():
    # seed 553's shape: the loop over the pairs rebinds `out`, which the script read only to build the pairs
    source = (
        "import unittest\n\nout = torch.ones(2)\nkernel[1,](out)\nPAIRS = [(out, ref)]\n\n\n"
        "class T(unittest.TestCase):\n    def test_it(self):\n        for out, ref in PAIRS:\n"
        "            self.assertTrue(torch.allclose(out, ref))\n\n\nunittest.main()\n"
    )
    assert candidates(source) == [
        "import unittest\n\nout = torch.ones(2)\nkernel[1,](out)\nPAIRS = [(out, ref)]\n\n\n"
        "for out, ref in PAIRS:\n    assert torch.allclose(out, ref)\n"
    ]


def test_without_unittest_main_nothing_runs_the_case_and_nothing_changes():
    assert candidates(SEED_490.replace("unittest.main()\n", "")) == []
