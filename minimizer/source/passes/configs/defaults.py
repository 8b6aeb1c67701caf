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

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.signatures.parameters import given_parameters
from minimizer.source.passes.statements.leftovers import remove_what_the_step_left
from minimizer.source.rendering import code_size
from minimizer.source.traversal import find_all

__all__ = ["inline_argument_defaults", "inline_config_defaults"]

_DATACLASS_NAME = m.Name("dataclass") | m.Attribute(attr=m.Name("dataclass"))
_DATACLASS = m.Decorator(decorator=_DATACLASS_NAME | m.Call(func=_DATACLASS_NAME))
_LITERAL = m.Integer() | m.Float() | m.SimpleString() | m.Name("True") | m.Name("False") | m.Name("None") | m.Attribute()


def inline_config_defaults(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the reads of a dataclass config's fields replaced by the fields' defaults: first
    every field of a class at once, then one field at a time.

    A config class is a module-level `@dataclass` (`@dataclass(frozen=True)` too) whose fields have a literal
    (or dotted-name, or tuple of those) default and that is only ever constructed without arguments (`Cfg()`),
    or once with literal arguments (`Cfg(steps=1)`, `Voice("drone", 32)`: those fields read as the values
    given); a read is `NAME.field` where `NAME` is bound to `Cfg()` or is a parameter annotated `Cfg`, or a
    parameter every call gives `Cfg()` (read in its function), or `Cfg().field`. Nothing is replaced for a field that is ever assigned
    (`cfg.width = 8`) anywhere in the script.
    """

    return distinct_candidates(module, _inlinings(module))


def _inlinings(module: cst.Module) -> Iterator[cst.Module | None]:
    for cls in module.body:
        if not (isinstance(cls, cst.ClassDef) and any(m.matches(d, _DATACLASS) for d in cls.decorators)):
            continue
        defaults = _values_as_built(module, cls)
        if not defaults:
            continue
        holders = _holders(module, cls.name.value)
        assigned = _assigned_attribute_names(module, cls)
        reads: dict[str, list[cst.Attribute]] = {}
        for attribute in find_all(module, m.Attribute(value=m.Name(), attr=m.Name())):
            if attribute.value.value in holders and attribute.attr.value in defaults:  # type: ignore[union-attr]
                if attribute.attr.value not in assigned:  # type: ignore[union-attr]
                    reads.setdefault(attribute.attr.value, []).append(attribute)  # type: ignore[union-attr]
        # A parameter every call gives a config (`f(Cfg(), x)`, `torch.compile(f)(Cfg(), x)`), read in its function.
        for function, parameter, _ in given_parameters(module, m.Call(func=m.Name(cls.name.value))):
            for attribute in find_all(function.body, m.Attribute(value=m.Name(parameter.name.value), attr=m.Name())):
                if attribute.attr.value in defaults and attribute.attr.value not in assigned:  # type: ignore[union-attr]
                    reads.setdefault(attribute.attr.value, []).append(attribute)  # type: ignore[union-attr]
        # A config built only to read one field: `RMSNorm(Config().eps)`.
        for attribute in find_all(module, m.Attribute(value=m.Call(func=m.Name(cls.name.value)), attr=m.Name())):
            if attribute.attr.value in defaults and attribute.attr.value not in assigned:  # type: ignore[union-attr]
                reads.setdefault(attribute.attr.value, []).append(attribute)  # type: ignore[union-attr]
        if not reads:
            continue
        yield from _all_reads_then_each(module, reads, defaults)


def _all_reads_then_each(
    module: cst.Module, reads: dict[str, list[cst.Attribute]], values: dict[str, cst.BaseExpression]
) -> Iterator[cst.Module | None]:
    """Every read replaced by its field's value at once, then (when there are several fields) one field at a time."""

    yield lambda: _read_as(module, {node: values[name] for name, nodes in reads.items() for node in nodes})
    if len(reads) > 1:
        for name, nodes in reads.items():
            yield lambda: _read_as(module, {node: values[name] for node in nodes})


def _read_as(module: cst.Module, values: dict[cst.CSTNode, cst.BaseExpression]) -> cst.Module:
    """``module`` with the reads replaced by their values; where that is larger (a default longer than its read:
    `(8, 16)` for `config.sizes`), also without what it left unread (the config, its class), as the step's
    follow-up would remove after it."""

    inlined = replace_nodes(module, values)
    if code_size(inlined) <= code_size(module):
        return inlined
    return remove_what_the_step_left(module, inlined) or inlined


def _assigned_attribute_names(module: cst.Module, config: cst.ClassDef | None = None) -> set[str]:
    """Names assigned as an attribute anywhere (`x.name = ...`): such a field or option is not a constant.

    With the ``config`` class given, `self.name = ...` in the methods of other classes does not count: that is
    another object's attribute (`self.eps = eps` in the module the config's `eps` is handed to)."""

    elsewhere: set[int] = set()
    if config is not None:
        others = [node for node in module.body if isinstance(node, cst.ClassDef) and node is not config]
        on_self = m.AssignTarget(target=m.Attribute(value=m.Name("self")))
        elsewhere = {id(target) for cls in others for target in find_all(cls, on_self)}
    return {
        target.target.attr.value  # type: ignore[union-attr]
        for target in find_all(module, m.AssignTarget(target=m.Attribute(attr=m.Name())))
        if id(target) not in elsewhere
    }


def _field_lines(cls: cst.ClassDef) -> list[cst.AnnAssign]:
    return [
        line.body[0]  # type: ignore[misc]
        for line in cls.body.body
        if m.matches(line, m.SimpleStatementLine(body=[m.AnnAssign(target=m.Name())]))
    ]


def _field_names(cls: cst.ClassDef) -> list[str]:
    """The fields in the order a dataclass's `__init__` takes them."""
    return [field.target.value for field in _field_lines(cls)]  # type: ignore[union-attr]


def _literal_defaults(cls: cst.ClassDef) -> dict[str, cst.BaseExpression]:
    defaults: dict[str, cst.BaseExpression] = {}
    for field in _field_lines(cls):
        value = _field_default(field.value)
        if value is not None:  # a field without a default we can write is read as it is
            defaults[field.target.value] = value  # type: ignore[union-attr]
    return defaults


_FIELD = m.Call(func=m.Name("field") | m.Attribute(attr=m.Name("field")))
# What a display of constants cannot hold.
_NOT_CONSTANT = (
    m.Call() | m.Attribute() | m.Subscript() | m.Lambda() | m.ListComp() | m.GeneratorExp() | m.DictComp()
    | m.Name(value=m.MatchIfTrue(lambda name: name not in ("True", "False", "None")))
)


def _constant(value: cst.BaseExpression) -> bool:
    """A literal, or a tuple of them (`sizes: tuple = (8, 16)`): immutable, so every read may hold its own."""
    if isinstance(value, cst.Tuple):
        return all(_constant(element.value) for element in value.elements if isinstance(element, cst.Element))
    return m.matches(value, _LITERAL | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float()))


def _parenthesized(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """A tuple as it may stand in any expression (`f(config.sizes)` -> `f((8, 16))`, not `f(8, 16)`)."""
    if isinstance(value, cst.Tuple) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


def _field_default(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """A literal default; `field(default=LITERAL)`; `field(default_factory=lambda: DISPLAY)` of literals (each
    read then builds its own list, as each config built its own)."""

    if value is None or _constant(value):
        return _parenthesized(value)
    if not m.matches(value, _FIELD) or len(value.args) != 1 or value.args[0].keyword is None:  # type: ignore[union-attr]
        return None
    arg = value.args[0]  # type: ignore[union-attr]
    if arg.keyword.value == "default" and m.matches(arg.value, _LITERAL):
        return arg.value
    display = m.List() | m.Tuple() | m.Dict()
    if arg.keyword.value == "default_factory" and m.matches(arg.value, m.Lambda(params=m.Parameters(params=[]), body=display)):
        body = arg.value.body
        if not m.findall(body, _NOT_CONSTANT):
            return body
    return None


def _values_as_built(module: cst.Module, cls: cst.ClassDef) -> dict[str, cst.BaseExpression]:
    """The fields' values: the defaults when every call of the class passes no argument; when the class is
    built once with literal arguments (`TrainConfig(steps=1)`, `Voice("drone", 32)`: positional ones in the
    order of the fields), those for the fields they give; else nothing (a config built twice with other values
    has no single value per field)."""

    defaults = _literal_defaults(cls)
    calls = find_all(module, m.Call(func=m.Name(cls.name.value)))
    if all(not call.args for call in calls):  # type: ignore[union-attr]
        return defaults
    fields = _field_names(cls)
    if len(calls) != 1:
        return {}
    values = dict(defaults)
    for index, arg in enumerate(calls[0].args):  # type: ignore[union-attr]
        name = fields[index] if arg.keyword is None and not arg.star and index < len(fields) else None
        if arg.keyword is not None and arg.keyword.value in fields:
            name = arg.keyword.value
        if name is None or not _constant(arg.value):
            return {}
        values[name] = _parenthesized(arg.value)
    return values


def _holders(module: cst.Module, name: str) -> set[str]:
    """Names bound to `Cls()` or annotated `Cls` (parameters, annotated assignments)."""

    holders = set()
    for assign in find_all(module, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Call(func=m.Name(name)))):
        holders.add(assign.targets[0].target.value)  # type: ignore[union-attr]
    for param in find_all(module, m.Param(annotation=m.Annotation(annotation=m.Name(name)))):
        holders.add(param.name.value)  # type: ignore[union-attr]
    for assign in find_all(module, m.AnnAssign(target=m.Name(), annotation=m.Annotation(annotation=m.Name(name)))):
        holders.add(assign.target.value)  # type: ignore[union-attr]
    return holders


def inline_argument_defaults(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with reads of command-line options replaced by their defaults: every option at once, then
    one at a time. The repro runs as `python repro.py`, without arguments, so each option is its default.

    An option is `P.add_argument("--name", ..., default=LITERAL)` (or a `store_true` / `store_false` flag,
    False / True; an option without a default is None) where `P = argparse.ArgumentParser(...)`; a read is
    `A.name` where `A = P.parse_args()`, or `P.parse_args().name`. A string default with a `type=` is left
    alone (argparse converts it), as is an option whose name is ever assigned (`args.name = ...`).
    """

    return distinct_candidates(module, _argument_inlinings(module))


_PARSER = m.Call(func=m.Attribute(value=m.Name("argparse"), attr=m.Name("ArgumentParser")) | m.Name("ArgumentParser"))


def _argument_inlinings(module: cst.Module) -> Iterator[cst.Module | None]:
    parsers = {
        assign.targets[0].target.value  # type: ignore[union-attr]
        for assign in find_all(module, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=_PARSER))
    }
    if not parsers:
        return
    defaults: dict[str, cst.BaseExpression] = {}
    for call in find_all(module, m.Call(func=m.Attribute(attr=m.Name("add_argument")))):
        if m.matches(call.func.value, m.Name()) and call.func.value.value in parsers:  # type: ignore[union-attr]
            option = _option_default(call)  # type: ignore[arg-type]
            if option is not None:
                defaults[option[0]] = option[1]
    parse = m.Call(func=m.Attribute(value=m.OneOf(*(m.Name(p) for p in parsers)), attr=m.Name("parse_args")), args=[])
    holders = {
        assign.targets[0].target.value  # type: ignore[union-attr]
        for assign in find_all(module, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=parse))
    }
    assigned = _assigned_attribute_names(module)
    reads: dict[str, list[cst.Attribute]] = {}
    for attribute in find_all(module, m.Attribute(attr=m.Name())):
        name = attribute.attr.value  # type: ignore[union-attr]
        held = m.matches(attribute.value, m.Name()) and attribute.value.value in holders  # type: ignore[union-attr]
        if (held or m.matches(attribute.value, parse)) and name in defaults and name not in assigned:
            reads.setdefault(name, []).append(attribute)  # type: ignore[arg-type]
    if not reads:
        return
    yield from _all_reads_then_each(module, reads, defaults)


def _option_default(call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
    """`(dest, default expression)` of an `add_argument` call, None when it cannot be told from the text."""

    flags = [arg.value.evaluated_value for arg in call.args if arg.keyword is None and isinstance(arg.value, cst.SimpleString)]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if not flags or len(flags) != sum(arg.keyword is None for arg in call.args):
        return None
    if "dest" in keywords:
        if not isinstance(keywords["dest"], cst.SimpleString):
            return None
        dest = keywords["dest"].evaluated_value
    else:
        longs = [f for f in flags if isinstance(f, str) and f.startswith("--")]
        first = longs[0] if longs else flags[0]
        if not isinstance(first, str):
            return None
        dest = first.lstrip("-").replace("-", "_")
    if not isinstance(dest, str) or not dest.isidentifier():
        return None
    action = keywords.get("action")
    if action is not None:
        if m.matches(action, m.SimpleString()) and action.evaluated_value in ("store_true", "store_false"):  # type: ignore[union-attr]
            store_true = action.evaluated_value == "store_true"  # type: ignore[union-attr]
            default = keywords.get("default", cst.Name("False" if store_true else "True"))
            return (dest, default) if m.matches(default, _LITERAL) else None
        return None
    default = keywords.get("default", cst.Name("None"))
    if not m.matches(default, _LITERAL) or (isinstance(default, cst.SimpleString) and "type" in keywords):
        return None
    if "nargs" in keywords:
        return None  # a list default, or a string argparse splits
    return dest, default
