"""What tests/test_distributed.py runs in two processes: one torchrun for all of it.

Each process imports torch once (about 4 CPU-s of a 2-core machine), not once per script. In order:
3 updates of the prefix-parity network on halves of the batches, every family's `ci` preset, and
`leave(3)` after a print that it must flush. `python two_processes.py OUT FAMILY ...`."""

import atexit
import sys
from pathlib import Path
import torch
from ttc_nb.core.losses import stepwise_cross_entropy
from ttc_nb.examples.prefix_parity import PrefixParityNet, prefix_parity_batch
from ttc_nb.runs.registry import run_experiment
from ttc_nb.train.fit import Setup, TrainConfig, fit, seed_everything
from ttc_nb.train.processes import leave, world


# One process on the whole batch, or two on its halves; with `half` in one process, the first half.
def three_updates(out, half=False):
    "3 updates of the prefix-parity network on the same 32 strings each, split between processes."
    rank, size = world()

    def sample(gen, update):
        x, y = prefix_parity_batch(32, 8, torch.Generator().manual_seed(update))
        n = 32 // (2 if half else size)
        return x[rank * n : (rank + 1) * n], y[rank * n : (rank + 1) * n]

    seed_everything(0)
    net = PrefixParityNet(8)
    loss = lambda m, b: stepwise_cross_entropy(m(b[0], steps=4), b[1])
    setup = Setup(net, sample, loss, evals={}, curriculum=True)
    fit(setup, TrainConfig(updates=3), log_every=1, run_dir=out, device='cpu', quiet=True)


# leave() ends a torchrun process at once: DDP keeps its process group, and with it gloo's worker
# threads, alive in C++, and one of them that still frees a finished operation's tensors during the
# interpreter's teardown aborts the process (a rare race).
def leave_with_3():
    "Train a DDP layer, print without flushing, and leave with code 3: no teardown, no later line."
    rank, size = world()
    net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
    net(torch.ones(2, 4)).sum().backward()
    atexit.register(print, 'teardown ran')
    print(f'process {rank} of {size} trained', end='')  # unflushed: leave must flush it
    leave(3)
    print('after leave')


if __name__ == '__main__':
    out = Path(sys.argv[1])
    three_updates(out / 'halves')
    for name in sys.argv[2:]:
        run_experiment(name, 'ci', out=out / 'families' / name, device='cpu')
    leave_with_3()
