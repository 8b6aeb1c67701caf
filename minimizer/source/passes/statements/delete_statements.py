"""Delete chunks of statements from every block, delta-debugging style: halves first, single statements last."""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import libcst as cst

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_nodes
from minimizer.source.traversal import walk

# Blocks are visited by the kind of scope they sit in: the script's top level decides the most, then classes, then
# function bodies. A block nested in an `if`/`for`/`with`/`try` takes the rank of the scope around it.
_MODULE_RANK, _CLASS_RANK, _FUNCTION_RANK = 0, 1, 2


def delete_statements(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with chunks of consecutive statements removed, coarse to fine.

    Level k cuts every block of n statements into chunks of ceil(n / 2**k) and yields one candidate per chunk;
    levels run k = 1, 2, ... until chunks are single statements. Within a level, blocks come in rank order (top
    level, class bodies, function bodies), each in source order. A block left empty gets `pass`.
    """
    blocks = _statement_blocks(module)
    return distinct_candidates(module, _chunk_removals(module, blocks))


def _chunk_removals(module: cst.Module, blocks: Sequence[Sequence[cst.CSTNode]]) -> Iterator[cst.Module | None]:
    longest = max((len(block) for block in blocks), default=0)
    level = 1
    while longest and 2 ** (level - 1) < longest:
        for block in blocks:
            size = math.ceil(len(block) / 2**level)
            # A block whose chunk size did not shrink at this level would only repeat the previous level.
            if level > 1 and size == math.ceil(len(block) / 2 ** (level - 1)):
                continue
            for start in range(0, len(block), size):
                chunk = block[start : start + size]
                yield lambda: remove_nodes(module, chunk)
        level += 1


class _BlockCollector(cst.CSTVisitor):
    """Collect statement sequences with the rank of their enclosing scope, in source order."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[int, Sequence[cst.CSTNode]]] = []
        self.ranks: list[int] = [_MODULE_RANK]

    def visit_Module(self, node: cst.Module) -> None:
        self.blocks.append((_MODULE_RANK, node.body))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.ranks.append(_CLASS_RANK)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.ranks.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.ranks.append(_FUNCTION_RANK)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.ranks.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append((self.ranks[-1], node.body))

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.blocks.append((self.ranks[-1], node.body))


def _statement_blocks(module: cst.Module) -> list[Sequence[cst.CSTNode]]:
    collector = _BlockCollector()
    walk(module, collector)
    # sorted() is stable, so source order survives within a rank.
    return [body for _, body in sorted(collector.blocks, key=lambda ranked: ranked[0]) if body]

