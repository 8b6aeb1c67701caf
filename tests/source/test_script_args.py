"""The script's own arguments written into it: what it reads of them reads the same, with no arguments given."""

import subprocess
import sys

from minimizer.source.script_args import bake_arguments

PARSER = """import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--scale", type=float, required=True)
args = parser.parse_args()
print(args.scale, sys.argv[1:])
"""


def _output(source, args, tmp_path):
    path = tmp_path / "script.py"
    path.write_text(source)
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, cwd=tmp_path).stdout


def test_parse_args_and_sys_argv_read_the_arguments_from_the_text(tmp_path):
    baked = bake_arguments(PARSER, "script.py", ["--scale", "2"])
    assert 'parser.parse_args(["--scale", "2"])' in baked.replace("'", '"')
    assert _output(baked, [], tmp_path) == _output(PARSER, ["--scale", "2"], tmp_path) == "2.0 ['--scale', '2']\n"


def test_no_arguments_leave_the_script_as_it_is():
    assert bake_arguments(PARSER, "script.py", []) is PARSER


def test_a_script_that_reads_its_arguments_elsewhere_gets_them_set_after_its_docstring():
    source = '"""Doc."""\nfrom __future__ import annotations\nimport fire\nfire.Fire(main)\n'
    baked = bake_arguments(source, "script.py", ["--n", "it's"])
    assert baked.splitlines()[2:4] == ["import sys", "sys.argv[1:] = ['--n', \"it's\"]"]


def test_an_assignment_to_sys_argv_is_left_alone():
    source = "import sys\nsys.argv = ['x', '--n', '1']\nprint(sys.argv)\n"
    baked = bake_arguments(source, "script.py", ["--n", "2"])
    assert baked.splitlines()[1] == "sys.argv = ['x', '--n', '1']"
    assert baked.splitlines()[2] == "print(['script.py', '--n', '2'])"
