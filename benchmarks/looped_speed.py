"""Training steps per second of the looped transformer, against Yang et al.'s implementation.

The looped transformer is `ttc_nb.looped.model`, its config and setup `ttc_nb.looped.experiments`.
Writes JSON.

Two configurations, both linear regression, batch 64, one block per loop:
  cpu:   d = 5,  11 points, width 64,  4 heads, b = T = 10
  study: d = 10, 41 points, width 256, 8 heads, b = 30, T = 20
         (the gpu preset's final configuration)
Ours is timed through `fit`, the training loop every experiment uses (sampling, forward, loss,
backward, clipping, AdamW).
With --reference DIR (the `scripts` folder of a checkout of github.com/leiay/looped_transformer),
their `TransformerModelLooped` is timed doing what their `train.py` does per step: a fresh task
sampler, the forward pass with its no-gradient horizon, the loss, backward, Adam and their
per-parameter gradient-norm logging.
Each figure is the median over --reps timed runs of --steps steps, after one warm-up run. The aim:
ours >= 1.5x theirs.
Beside them: two variants of ours (the loop body compiled with `torch.compile`; bfloat16 autocast),
the step's matrix-product FLOPs counted from the architecture, the rate they are done at, and the
machine's rate on one large matrix product.
Usage: python benchmarks/looped_speed.py [--reference DIR] [--out nbs/results/looped/speed.json]
                                         [--device cpu]
"""

import argparse
import dataclasses
import importlib
import statistics
import sys
import time
import torch
from ttc_nb.train.files import save_json
from ttc_nb.train.fit import TrainConfig, fit
from ttc_nb.runs.provenance import environment
from ttc_nb.looped.experiments import looped_setup, LoopedConfig

CONFIGS = dict(
    cpu=dict(d=5, points=11, n_embd=64, n_heads=4, b=10, T=10, steps=20),
    study=dict(d=10, points=41, n_embd=256, n_heads=8, b=30, T=20, steps=3),
)


# `variant`: None, 'compiled' or 'bf16'.
def ours(c, device, variant=None):
    "A function that runs `n` training updates of our looped model in configuration `c`."
    cfg = LoopedConfig(
        d=c['d'],
        dims=(c['d'], c['d'], 1, 1),
        points=(c['points'], c['points'], 1, 1),
        loops=(c['b'], c['b'], 1, 1),
        window=c['T'],
        train_steps=c['b'],
        n_embd=c['n_embd'],
        n_heads=c['n_heads'],
        batch_size=64,
        eval_size=64,
    )
    s = looped_setup(cfg)
    if variant == 'compiled':
        s.model.f = torch.compile(s.model.f)
    if variant == 'bf16':
        loss = s.loss
        s = dataclasses.replace(
            s, loss=lambda m, b: torch.autocast(device, dtype=torch.bfloat16)(loss)(m, b)
        )
    return lambda n: fit(s, TrainConfig(updates=n, lr=1e-4, wd=0.0), device=device, quiet=True)


# Per loop and prompt, the block's linear maps (12 C^2 weights per token)
# and the attention's scores and weighted sum (2 T^2 C), two FLOPs a
# multiply-add; a loop with gradient costs three times one without.
def flops(c) -> float:
    "Matrix-product FLOPs of one training step of batch 64."
    T, C = 2 * c['points'], c['n_embd']
    loop = 64 * 2 * (12 * C * C * T + 2 * T * T * C)
    return loop * (max(0, c['b'] - c['T']) + 3 * min(c['b'], c['T']))


# What its cores can do when nothing else limits them.
def matmul_rate(device, n=2048, reps=10) -> float:
    "GFLOP/s of one large float32 matrix product on this machine."
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    a @ b
    if device == 'cuda':
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    if device == 'cuda':
        torch.cuda.synchronize()
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e9


def reference(c, device, path):
    "A function that runs `n` training steps of Yang et al.'s looped model as their train.py does."
    sys.path.insert(0, path)
    models, tasks = importlib.import_module('models'), importlib.import_module('tasks')
    model = models.TransformerModelLooped(c['d'], c['points'], c['n_embd'], 1, c['n_heads']).to(
        device
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=0.0)

    def run(n):
        for _ in range(n):
            task = tasks.get_task_sampler(
                'linear_regression', 64, c['points'], c['d'], c['d'], device
            )()
            xs, ys = task.xs.float(), task.ys.float()
            preds = model(xs, ys, max(0, c['b'] - c['T']), c['b'])
            loss = (torch.cat([ys] * len(preds)) - torch.cat(preds)).square().mean()
            loss.backward()
            opt.step()
            [
                p.grad.data.norm(2).item() for p in model.parameters()
            ]  # their per-parameter gradient-norm logging
            opt.zero_grad(set_to_none=True)

    return run


def steps_per_s(run, steps, reps, device):
    run(1)
    rates = []
    for _ in range(reps):
        if device == 'cuda':
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        run(steps)
        if device == 'cuda':
            torch.cuda.synchronize()
        rates.append(steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        '--reference', help='the scripts/ folder of a checkout of leiay/looped_transformer'
    )
    p.add_argument('--out', default='nbs/results/looped/speed.json')
    p.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    p.add_argument('--reps', type=int, default=3)
    p.add_argument('--configs', default='cpu,study')
    args = p.parse_args()
    res = dict(
        benchmark='looped transformer training steps per second, linear regression, batch 64',
        device=args.device,
        reference=args.reference,
        matmul_gflops=round(matmul_rate(args.device), 1),
        configs={},
        env=environment(args.device),
    )
    for name in args.configs.split(','):
        c = CONFIGS[name]
        torch.manual_seed(0)
        r = dict(
            config=c,
            ours=round(steps_per_s(ours(c, args.device), c['steps'], args.reps, args.device), 3),
        )
        for v in ('compiled', 'bf16'):
            torch.manual_seed(0)
            r[f'ours_{v}'] = round(
                steps_per_s(ours(c, args.device, v), c['steps'], args.reps, args.device), 3
            )
        r['gflop_per_step'] = round(flops(c) / 1e9, 2)
        r['ours_gflops'] = round(r['gflop_per_step'] * r['ours'], 1)
        if args.reference:
            r['reference'] = round(
                steps_per_s(
                    reference(c, args.device, args.reference), c['steps'], args.reps, args.device
                ),
                3,
            )
            r['speedup'] = round(r['ours'] / r['reference'], 3)
        res['configs'][name] = r
        print(name, {k: v for k, v in r.items() if k != 'config'})
    save_json(res, args.out)
    print('wrote', args.out)


if __name__ == '__main__':
    main()
