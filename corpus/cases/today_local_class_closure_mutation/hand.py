import torch


def make():
    state = []

    class Helper:
        def touch(self):
            state.append(1)

    def fn(x):
        Helper().touch()
        return x + 1

    return fn, state


fn, state = make()
torch.compile(fn)(torch.ones(2))
assert state == [1], state
