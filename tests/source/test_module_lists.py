import libcst as cst

from minimizer.source.passes.items.module_lists import unwrap_single_module_lists

HEAD = """class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block()])

    def forward(self, tokens):
        block, = self.blocks
        return block(tokens)
"""


def test_a_module_list_of_one_unpacked_where_used_is_its_module():
    (code,) = [c.code for c in unwrap_single_module_lists(cst.parse_module(HEAD))]
    assert "self.blocks = Block()" in code and "block = self.blocks\n" in code


def test_a_list_read_otherwise_stays():
    for other in ["return self.blocks[0](tokens)", "return len(self.blocks)"]:
        source = HEAD.replace("return block(tokens)", other)
        assert [c.code for c in unwrap_single_module_lists(cst.parse_module(source))] == [], other
