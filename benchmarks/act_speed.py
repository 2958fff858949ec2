"""Forward + backward time per batch of the vectorised ACT against the reference.

The reference runs one sample at a time. 64-bit parity, an RNN of 128 tanh units, batches of 128,
time limit 100, measured at two halting biases: +1 (the initial value in the paper's runs: about two
updates per input) and -2 (about five). Writes JSON.
Usage: python benchmarks/act_speed.py [--out nbs/results/act/bench.json] [--reps 5] [--threads N]
"""

import argparse
import time
import torch
import torch.nn as nn
import torch.nn.functional as F
from ttc_nb.act.model import ACT, act_reference
from ttc_nb.act.tasks import parity_batch
from ttc_nb.train.files import save_json
from ttc_nb.runs.provenance import environment


def per_call(f, reps):
    "Mean seconds per call of `f` over `reps` calls, after one warm-up call."
    f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


def measure(bias, args):
    torch.manual_seed(0)
    act = ACT(nn.RNNCell(args.bits + 1, args.hidden), args.bits, 2, halt_bias=bias)
    x, y = parity_batch(args.batch, args.bits, gen=torch.Generator().manual_seed(0))

    def step(out, rho):
        act.zero_grad()
        (F.cross_entropy(out.flatten(0, -2), y.flatten()) + 1e-3 * rho.sum()).backward()

    def vectorised():
        th = act(x, steps=args.steps)
        step(th.final, th.aux['rho'])

    def reference():
        out, rho, _ = act_reference(act, x, steps=args.steps)
        step(out, rho)

    with torch.no_grad():
        updates = act(x, steps=args.steps).aux['updates'].mean().item()
    v, r = per_call(vectorised, args.reps), per_call(reference, max(1, args.reps // 2))
    return dict(
        halt_bias=bias,
        mean_updates=round(updates, 3),
        vectorised_s=round(v, 5),
        reference_s=round(r, 5),
        speedup=round(r / v, 1),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--out', default='nbs/results/act/bench.json')
    p.add_argument('--batch', type=int, default=128)
    p.add_argument('--hidden', type=int, default=128)
    p.add_argument('--bits', type=int, default=64)
    p.add_argument('--steps', type=int, default=100)
    p.add_argument('--reps', type=int, default=20)
    p.add_argument('--threads', type=int, default=0)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = [measure(b, args) for b in (1.0, -2.0)]
    res = dict(
        benchmark='ACT forward+backward per batch: vectorised vs one sample at a time',
        batch=args.batch,
        hidden=args.hidden,
        bits=args.bits,
        time_limit=args.steps,
        threads=torch.get_num_threads(),
        results=rows,
        env=environment('cpu'),
    )
    save_json(res, args.out)
    for r in rows:
        print(
            f'halt bias {r["halt_bias"]:+}: {r["mean_updates"]:.2f} updates per input; '
            f'vectorised {1e3 * r["vectorised_s"]:.1f} ms, '
            f'reference {1e3 * r["reference_s"]:.0f} ms: {r["speedup"]}x'
        )
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
