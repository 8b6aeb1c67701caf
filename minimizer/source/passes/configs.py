"""Put a config's default values where its fields are read: `config.width` becomes `64`.

Training and export scripts carry a dataclass config (`@dataclass class TrainConfig: width: int = 64 ...`)
built once with its defaults and handed down through constructors. Once the repro no longer needs different
values, the config is a layer of indirection: each read of a field is its default, and with the reads gone
the class, the variable and the `config` parameters are unused (other passes remove them).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import distinct_candidates, replace_nodes, try_build

__all__ = ["inline_config_defaults"]

_DATACLASS = m.Decorator(decorator=m.Name("dataclass") | m.Attribute(attr=m.Name("dataclass")))
_LITERAL = m.Integer() | m.Float() | m.SimpleString() | m.Name("True") | m.Name("False") | m.Name("None") | m.Attribute()


def inline_config_defaults(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the reads of a dataclass config's fields replaced by the fields' defaults: first
    every field of a class at once, then one field at a time.

    A config class is a module-level `@dataclass` whose fields all have a literal (or dotted-name) default and
    that is only ever constructed without arguments (`Cfg()`); a read is `NAME.field` where `NAME` is bound to
    `Cfg()` or is a parameter annotated `Cfg`. Nothing is replaced for a field that is ever assigned
    (`cfg.width = 8`) anywhere in the script.
    """

    return distinct_candidates(module, _inlinings(module))


def _inlinings(module: cst.Module) -> Iterator[cst.Module | None]:
    for cls in module.body:
        if not (isinstance(cls, cst.ClassDef) and any(m.matches(d, _DATACLASS) for d in cls.decorators)):
            continue
        defaults = _literal_defaults(cls)
        if not defaults or not _only_built_plainly(module, cls.name.value):
            continue
        holders = _holders(module, cls.name.value)
        assigned = {
            target.target.attr.value  # type: ignore[union-attr]
            for target in m.findall(module, m.AssignTarget(target=m.Attribute(attr=m.Name())))
        }
        reads: dict[str, list[cst.Attribute]] = {}
        for attribute in m.findall(module, m.Attribute(value=m.Name(), attr=m.Name())):
            if attribute.value.value in holders and attribute.attr.value in defaults:  # type: ignore[union-attr]
                if attribute.attr.value not in assigned:  # type: ignore[union-attr]
                    reads.setdefault(attribute.attr.value, []).append(attribute)  # type: ignore[union-attr]
        if not reads:
            continue
        everything = {node: defaults[name] for name, nodes in reads.items() for node in nodes}
        yield try_build(lambda: replace_nodes(module, everything))
        if len(reads) > 1:
            for name, nodes in reads.items():
                yield try_build(lambda: replace_nodes(module, {node: defaults[name] for node in nodes}))


def _literal_defaults(cls: cst.ClassDef) -> dict[str, cst.BaseExpression]:
    defaults: dict[str, cst.BaseExpression] = {}
    for line in cls.body.body:
        if not m.matches(line, m.SimpleStatementLine(body=[m.AnnAssign(target=m.Name())])):
            continue
        field = line.body[0]  # type: ignore[union-attr]
        if field.value is None or not m.matches(field.value, _LITERAL):
            return {}
        defaults[field.target.value] = field.value
    return defaults


def _only_built_plainly(module: cst.Module, name: str) -> bool:
    """Every call of the class passes no argument (a config built with other values is not its defaults)."""

    calls = m.findall(module, m.Call(func=m.Name(name)))
    return all(not call.args for call in calls)  # type: ignore[union-attr]


def _holders(module: cst.Module, name: str) -> set[str]:
    """Names bound to `Cls()` or annotated `Cls` (parameters, annotated assignments)."""

    holders = set()
    for assign in m.findall(module, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Call(func=m.Name(name)))):
        holders.add(assign.targets[0].target.value)  # type: ignore[union-attr]
    for param in m.findall(module, m.Param(annotation=m.Annotation(annotation=m.Name(name)))):
        holders.add(param.name.value)  # type: ignore[union-attr]
    for assign in m.findall(module, m.AnnAssign(target=m.Name(), annotation=m.Annotation(annotation=m.Name(name)))):
        holders.add(assign.target.value)  # type: ignore[union-attr]
    return holders
