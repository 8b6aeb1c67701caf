"""Single-molecule inference of a small energy model: per-atom energies from a linear head plus a learned
per-atom offset, summed into the molecule's energy by a ``scatter_reduce`` over the atoms' molecule index. The
readout is compiled and checked against eager for molecules of several sizes, as a serving test would.

Upstream: https://github.com/pytorch/pytorch/issues/178871 (Inductor fuses ``(x + bias).scatter_reduce("sum")``
into a 1x1 output as an unmasked ``tl.atomic_add``: lanes past the last atom add the bias again when the atom
count is not a power of two, on CUDA).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn

DEVICE = "cuda"


@dataclass(frozen=True)
class Molecule:
    name: str
    atoms: int


class EnergyHead(nn.Module):
    def __init__(self, features: int = 1):
        super().__init__()
        self.offset = nn.Parameter(torch.ones(1))
        self.features = features

    def forward(self, atom_energy: torch.Tensor, molecule_index: torch.Tensor) -> torch.Tensor:
        per_atom = atom_energy + self.offset
        total = torch.zeros(1, self.features, device=atom_energy.device, dtype=atom_energy.dtype)
        index = molecule_index.unsqueeze(-1).expand_as(per_atom)
        return total.scatter_reduce(0, index, per_atom, "sum", include_self=True)


MOLECULES = (Molecule("water", 3), Molecule("methanol", 6), Molecule("benzene", 12), Molecule("octane", 26))


def check_readout():
    head = EnergyHead().to(DEVICE).eval()
    readout = torch.compile(head, fullgraph=True, dynamic=False)
    wrong = {}
    with torch.no_grad():
        for molecule in MOLECULES:
            torch._dynamo.reset()
            atom_energy = torch.arange(molecule.atoms, dtype=torch.float32, device=DEVICE).reshape(-1, 1)
            molecule_index = torch.zeros(molecule.atoms, dtype=torch.long, device=DEVICE)
            expected = head(atom_energy, molecule_index)
            got = readout(atom_energy, molecule_index)
            if not torch.allclose(got, expected, atol=1e-3):
                wrong[molecule.name] = (got.item(), expected.item())
    assert not wrong, f"readout energies differ from eager: {wrong}"


if __name__ == "__main__":
    check_readout()
    print("readout ok")
