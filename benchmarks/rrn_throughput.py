"""Training throughput of the recurrent relational network: updates and puzzles per second.

An update is forward + backward + optimiser step. For the network, batch and loss of each
`sudoku-rrn` preset (by default `cpu` and `gpu`), with `--set` overrides: its width, depth, training
steps (random step counts and the progressive loss included) and batch size, trained with the core's
`fit` (AdamW, and bfloat16 autocast on CUDA) on the current device. The puzzles are random digits:
the cost of a step does not depend on them, so no dataset is built. Each preset is timed `--repeats`
times over `--updates` updates, after `--warmup` untimed ones, and the median is kept; `--compile`
also times it with the network's step under `torch.compile`, last, since evaluation timed after a
compilation in the same process was slower.
`--eval-batches` times evaluation too, the forward pass alone without gradient, per puzzle and step,
for each batch size.
Writes JSON.
Usage: python benchmarks/rrn_throughput.py [--presets cpu,gpu] [--set KEY=VALUE ...] [--updates 10]
                                           [--repeats 5] [--compile] [--eval-batches 25,50,250]
                                           [--device cuda] [--threads N] [--out ...]
"""

import argparse
import dataclasses
import statistics
import time
import torch
from ttc_nb.core.losses import stepwise_progressive_loss
from ttc_nb.train.files import save_json
from ttc_nb.train.fit import Setup, default_device, fit
from ttc_nb.runs.provenance import environment
from ttc_nb.runs.registry import get_experiment
from ttc_nb.sudoku.rrn import RRN


def network(preset, args):
    "The config of `preset` with the `--set` overrides, and its network, seeded."
    cfg = get_experiment('sudoku-rrn').config(preset, args.set)
    torch.manual_seed(0)
    return cfg, RRN(cfg.box, cfg.hidden, cfg.mlp_layers, cfg.embed, cfg.positions)


# Seconds per update: the median of `args.repeats` timings.
def measure(preset, args, device, compiled=False):
    "Seconds per update and puzzles per second of `preset`'s network and loss."
    cfg, model = network(preset, args)
    if compiled:
        model.step = torch.compile(model.step)
    n = model.n
    batch = (
        torch.randint(0, n + 1, (cfg.batch_size, n * n)),
        torch.randint(0, n, (cfg.batch_size, n * n)),
    )
    loss = stepwise_progressive_loss(cfg.train_steps, cfg.min_steps, cfg.alpha)
    train = lambda updates: fit(
        Setup(model, lambda gen: batch, loss, evals={}),
        dataclasses.replace(cfg, updates=updates),
        log_every=updates + 1,
        device=device,
        quiet=True,
    )
    t0 = time.perf_counter()
    train(args.warmup)  # with --compile, the compilation happens here
    warmup_s = time.perf_counter() - t0
    if device.type == 'cuda':
        torch.cuda.synchronize(device)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        train(
            args.updates
        )  # fit reads the loss every update, so the device is in step with the clock
        times.append((time.perf_counter() - t0) / args.updates)
    s = statistics.median(times)
    return dict(
        preset=preset,
        overrides=args.set,
        compile=compiled,
        box=list(cfg.box),
        hidden=cfg.hidden,
        mlp_layers=cfg.mlp_layers,
        train_steps=cfg.train_steps,
        min_steps=cfg.min_steps,
        alpha=cfg.alpha,
        batch_size=cfg.batch_size,
        weights=sum(p.numel() for p in model.parameters()),
        updates=args.updates,
        repeats=args.repeats,
        warmup_s=round(warmup_s, 2),
        s_per_update=round(s, 5),
        s_per_update_each=[round(t, 5) for t in times],
        updates_per_s=round(1 / s, 2),
        puzzles_per_s=round(cfg.batch_size / s, 2),
    )


# It evaluates `puzzles` random puzzles; the median of repeats.
@torch.no_grad()
def measure_eval(preset, args, device, batch, puzzles=500):
    "Milliseconds per puzzle and step of `preset`'s network evaluating puzzles `batch` at a time."
    cfg, model = network(preset, args)
    model.to(device).eval()
    x = torch.randint(0, model.n + 1, (puzzles, model.n**2), device=device)
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for xb in x.split(batch):
            model(xb, steps=cfg.train_steps).preds.sum().item()
        times.append((time.perf_counter() - t0) / puzzles / cfg.train_steps * 1e3)
    return dict(
        preset=preset,
        batch=batch,
        steps=cfg.train_steps,
        puzzles=puzzles,
        ms_per_puzzle_step=round(statistics.median(times), 4),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        '--presets',
        default='cpu,gpu',
        help='comma-separated presets of sudoku-rrn (default cpu,gpu)',
    )
    p.add_argument(
        '--set',
        action='append',
        default=[],
        metavar='KEY=VALUE',
        help='override a config field (repeatable)',
    )
    p.add_argument('--updates', type=int, default=10, help='timed updates per repeat (default 10)')
    p.add_argument(
        '--repeats',
        type=int,
        default=5,
        help='timings per preset, of which the median is kept (default 5)',
    )
    p.add_argument('--warmup', type=int, default=2, help='untimed updates first (default 2)')
    p.add_argument(
        '--compile',
        action='store_true',
        help="also time each preset with the network's step under torch.compile",
    )
    p.add_argument(
        '--eval-batches',
        default='',
        help='comma-separated batch sizes at which to time evaluation too (default: none)',
    )
    p.add_argument('--device', default=None, help='default: TTC_DEVICE, else cuda, mps or cpu')
    p.add_argument(
        '--threads', type=int, default=0, help='torch CPU threads (default: torch chooses)'
    )
    p.add_argument('--out', default='nbs/results/rrn/throughput.json')
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or default_device())
    presets, rows, evals = args.presets.split(','), [], []

    def train(preset, compiled):
        rows.append(r := measure(preset, args, device, compiled))
        print(
            f'{preset}{" compiled" if compiled else ""}: hidden {r["hidden"]}, '
            f'{r["train_steps"]} steps, batch {r["batch_size"]}: {r["s_per_update"]:.3f} s per '
            f'update, {r["updates_per_s"]:.2f} updates/s, {r["puzzles_per_s"]:.1f} puzzles/s',
            flush=True,
        )

    for preset in presets:
        train(preset, False)
    for preset in presets if args.eval_batches else ():
        for b in map(int, args.eval_batches.split(',')):
            evals.append(r := measure_eval(preset, args, device, b))
            print(
                f'{preset} evaluation, batches of {b}: '
                f'{r["ms_per_puzzle_step"]:.3f} ms per puzzle and step',
                flush=True,
            )
    for preset in presets if args.compile else ():
        train(preset, True)  # last: compiling slows what runs after it in the process
    save_json(
        dict(
            benchmark=(
                'sudoku-rrn training throughput: forward, backward and optimiser step per batch'
            ),
            device=str(device),
            threads=torch.get_num_threads(),
            results=rows,
            evaluation=evals,
            env=environment(device),
        ),
        args.out,
    )
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
