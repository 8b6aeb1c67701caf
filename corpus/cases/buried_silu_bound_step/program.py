"""Distil a small MLP into a smaller one; the student's training step is compiled as a bound method.

The trainer compiles its own step (``self.step = torch.compile(self._step)``) and the loop calls it through a
``functools.partial`` that fixes the distillation temperature. At the end, the compiled student must have
learnt what an eager run of the same steps learnt.
"""

import copy
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()


class Student(nn.Module):
    def __init__(self, features=6, hidden=12, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(F.silu(self.fc1(x)))


class Distiller:
    def __init__(self, student, teacher_logits, compiled=True):
        self.student = student
        self.teacher_logits = teacher_logits
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
        self.step = torch.compile(self._step) if compiled else self._step

    def _step(self, x, index, temperature):
        logits = self.student(x)
        target = F.softmax(self.teacher_logits[index] / temperature, dim=-1)
        return F.kl_div(F.log_softmax(logits / temperature, dim=-1), target, reduction="batchmean")

    def fit(self, batches, temperature=2.0):
        step = functools.partial(self.step, temperature=temperature)
        losses = []
        for index, x in enumerate(batches):
            loss = step(x, index)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())
        return losses


def main():
    torch.manual_seed(0)
    batches = [torch.randn(8, 6) for _ in range(3)]
    teacher_logits = [torch.randn(8, 3) for _ in batches]
    student = Student()
    eager = Distiller(copy.deepcopy(student), teacher_logits, compiled=False).fit(batches)
    compiled = Distiller(student, teacher_logits).fit(batches)
    print("eager   ", [round(v, 4) for v in eager])
    print("compiled", [round(v, 4) for v in compiled])
    assert max(abs(a - b) for a, b in zip(eager, compiled)) < 1e-4, "compiled distillation diverges from eager"


if __name__ == "__main__":
    main()
