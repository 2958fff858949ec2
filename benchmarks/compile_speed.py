"""Training updates per second with and without `compile=True`, one experiment per family.

`compile=True` puts the model's loop body under `torch.compile`. Each experiment runs at a preset's
config (default `cpu`).

For each experiment: the setup of its preset (its data, model, loss and sampler, as `ttc run` builds
them), trained with `ttc_nb.train.fit`'s `fit` for `--warmup` untimed updates and then `--updates`
timed ones, `--repeats` times (the median is kept), first eager, then with `compiled(model)` on a
fresh setup; the compiled variant's warm-up holds the compilation, whose seconds are recorded. A
family whose compiled model fails is recorded with the error. Writes JSON.
Usage: python benchmarks/compile_speed.py [--preset cpu] [--experiments a,b,...] [--updates 10]
                                          [--warmup 3] [--repeats 3] [--device cuda] [--threads N]
                                          [--out nbs/results/compile-speed-cpu.json]
"""

import argparse
import dataclasses
import statistics
import time
import torch
from ttc_nb.train.files import save_json
from ttc_nb.train.fit import compiled, default_device, fit, seed_everything
from ttc_nb.runs.provenance import environment
from ttc_nb.runs.registry import get_experiment

FAMILIES = (
    'prefix-parity',
    'act-parity',
    'pondernet-parity',
    'sudoku-rrn',
    'sudoku-deq',
    'sudoku-pgadj',
    'looped-linear',
    'standard-linear',
    'rasp-reverse',
)


# The warm-up holds the compilation, when compiled; updates per second: the median of the repeats.
def measure(name, preset, args, device, compile_):
    "Seconds of the warm-up and updates per second of `name`."
    exp = get_experiment(name)
    cfg = exp.config(preset)
    seed_everything(cfg.seed)
    s = exp.setup(cfg)
    if compile_:
        compiled(s.model)
    train = lambda updates: fit(
        s,
        dataclasses.replace(cfg, updates=updates),
        log_every=updates + 1,
        device=device,
        quiet=True,
    )
    t0 = time.perf_counter()
    train(args.warmup)
    warm = time.perf_counter() - t0
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        train(args.updates)
        times.append(time.perf_counter() - t0)
    return dict(
        warmup_s=round(warm, 2), updates_per_s=round(args.updates / statistics.median(times), 3)
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--preset', default='cpu')
    p.add_argument('--experiments', default=','.join(FAMILIES))
    p.add_argument('--updates', type=int, default=10)
    p.add_argument('--warmup', type=int, default=3)
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--device')
    p.add_argument('--threads', type=int)
    p.add_argument('--out')
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or default_device())
    rows = []
    for name in args.experiments.split(','):
        row = dict(
            experiment=name,
            preset=args.preset,
            eager=measure(name, args.preset, args, device, False),
        )
        try:
            row['compiled'] = measure(name, args.preset, args, device, True)
        except Exception as e:
            row['compiled'] = dict(error=f'{type(e).__name__}: {str(e).splitlines()[0][:200]}')
        if 'updates_per_s' in row['compiled']:
            row['speedup'] = round(
                row['compiled']['updates_per_s'] / row['eager']['updates_per_s'], 3
            )
        rows.append(row)
        print(name, row, flush=True)
    out = args.out or f'nbs/results/compile-speed-{device.type}.json'
    save_json(
        dict(
            rows=rows,
            updates=args.updates,
            warmup=args.warmup,
            repeats=args.repeats,
            threads=torch.get_num_threads(),
            env=environment(device),
        ),
        out,
    )
    print('written:', out)


if __name__ == '__main__':
    main()
