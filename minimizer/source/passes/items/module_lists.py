"""A module list of one module, unpacked where it is used, is that module: `self.blocks =
nn.ModuleList([Block(c)])` with `block, = self.blocks` becomes `self.blocks = Block(c)` with `block =
self.blocks`.

Once a model is down to one block (`range(config.layers)` shrunk to `range(1)`, the comprehension collapsed),
the list and the loop over it are the only things between the model and its block; without them, the
delegating-module and single-use-variable passes can take the rest.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes

__all__ = ["unwrap_single_module_lists"]

_MODULE_LIST = m.Name("ModuleList") | m.Attribute(attr=m.Name("ModuleList"))
_ONE_MODULE = m.Call(func=_MODULE_LIST, args=[m.Arg(value=m.List(elements=[m.Element()]), keyword=None, star="")])


def unwrap_single_module_lists(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one `self.NAME = nn.ModuleList([MODULE])` of a module-level class replaced by
    `MODULE`, where every other read of `self.NAME` in the class is an unpacking `ONE, = self.NAME` (which
    becomes `ONE = self.NAME`)."""

    return distinct_candidates(module, _unwrappings(module))


def _unwrappings(module: cst.Module) -> Iterator[cst.Module | None]:
    for cls in module.body:
        if not isinstance(cls, cst.ClassDef):
            continue
        for assign in m.findall(cls, m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name("self")))], value=_ONE_MODULE)):
            name = assign.targets[0].target.attr.value  # type: ignore[union-attr]
            read = m.Attribute(value=m.Name("self"), attr=m.Name(name))
            unpackings = m.findall(cls, m.Assign(targets=[m.AssignTarget(target=m.Tuple(elements=[m.Element(value=m.Name())]))], value=read))
            if len(m.findall(cls, read)) != 1 + len(unpackings) or not unpackings:
                continue
            replacements: dict = {assign: assign.with_changes(value=assign.value.args[0].value.elements[0].value)}  # type: ignore[union-attr]
            for unpacking in unpackings:
                target = unpacking.targets[0].target.elements[0].value  # type: ignore[union-attr]
                replacements[unpacking] = unpacking.with_changes(targets=[cst.AssignTarget(target)])  # type: ignore[union-attr]
            yield lambda r=replacements: replace_nodes(module, r)
