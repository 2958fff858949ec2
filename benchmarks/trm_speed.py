"""Time one training step of our TRM against lucidrains' `tiny-recursive-model`, same configuration.

A training step is one supervision step of deep supervision: the puzzles embedded, T = 3 cycles of
n = 6 latent updates and one answer update (the first T - 1 without gradient), the answer and the
halting logit read out, cross-entropy plus binary cross-entropy of the halt, backward, one AdamW
update and one update of the weights' moving average (0.999). Both models get a two-layer MLP-mixer
of width `dim` over 81 cells and 16 extra positions (our prefix, their register tokens), batches of
`batch` random puzzles, and one thread. The networks differ where the two implementations differ:
ours is the paper's code's (post-norm RMSNorm, SwiGLU, widths rounded up to `multiple`),
theirs is a pre-norm LayerNorm MLP-mixer with GELU (its token MLP 4 x dim wide, its channel MLP
dim / 2), so the JSON records each step's FLOPs too. The two are timed in turns, so that a load on
the machine falls on both. `--profile` adds the operations where ours spends its time.

Run it with the interpreter of a venv holding `tiny-recursive-model`, ours imported from PYTHONPATH:
    python3 -m venv /work/trmvenv && /work/trmvenv/bin/pip install torch==2.13.0 \
        tiny-recursive-model fastcore fastprogress
    PYTHONPATH=. /work/trmvenv/bin/python benchmarks/trm_speed.py [--out JSON]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import time
from importlib.metadata import version
from pathlib import Path
import torch
from torch.utils.flop_counter import FlopCounterMode
from ema_pytorch import EMA as TheirEMA
from tiny_recursive_model import TinyRecursiveModel
from tiny_recursive_model.mlp_mixer_1d import MLPMixer1D
from ttc_nb.sudoku.trm import TRM, EMA, DeepSupervision
from ttc_nb.train.files import save_json

CONFIGS = {  # the cpu preset's width and batch, and the paper's width at a small batch
    'cpu-preset': dict(dim=64, batch=32, multiple=64),
    'paper-width': dict(dim=512, batch=8, multiple=256),
}
PREFIX, CELLS = 16, 81


def ours(dim, multiple):
    "Our TRM-MLP with its moving average, its loss and AdamW: a function of one training step."
    model = EMA(TRM(d=dim, layers=2, n=6, T=3, prefix=PREFIX, multiple=multiple), 0.999)
    loss_fn = DeepSupervision(max_steps=16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1.0)

    def step(x, y):
        loss, _ = loss_fn(model, (x, y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return model, step


def theirs(dim):
    "lucidrains' TinyRecursiveModel, the MLP-mixer of its README, its EMA and AdamW."
    net = MLPMixer1D(dim=dim, depth=2, seq_len=CELLS + PREFIX)
    model = TinyRecursiveModel(
        dim=dim,
        num_tokens=10,
        network=net,
        num_refinement_blocks=3,
        num_latent_refinements=6,
        num_register_tokens=PREFIX,
    )
    ema = TheirEMA(model, beta=0.999, update_after_step=0, update_every=1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1.0)
    state = {}

    def step(x, y):
        if not state:
            state['y'], state['z'] = model.get_initial()
        loss, _, state['y'], state['z'], _, _ = model(x, state['y'], state['z'], labels=y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema.update()

    return model, step


def flops(step, x, y):
    "FLOPs of one training step, as PyTorch's counter counts them."
    with FlopCounterMode(display=False) as c:
        step(x, y)
    return c.get_total_flops()


def time_both(steps, x, y, repeats):
    "{name: the median seconds of a step}, the implementations timed in turns."
    times = {k: [] for k in steps}
    for k, f in steps.items():  # a warm-up step each
        f(x, y)
    for _ in range(repeats):
        for k, f in steps.items():
            t0 = time.perf_counter()
            f(x, y)
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}, times


def profile(step, x, y, top=8):
    "The operations where a step spends its time: [{op, self_s, share}], the costliest first."
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p:
        step(x, y)
    rows = sorted(p.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    return [
        dict(
            op=e.key,
            self_s=round(e.self_cpu_time_total / 1e6, 4),
            share=round(e.self_cpu_time_total / total, 3),
        )
        for e in rows[:top]
    ]


def cpu_name():
    "The CPU's model name, as /proc/cpuinfo gives it, else the platform's word for it."
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def commit():
    try:
        out = subprocess.run(
            ['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True
        )
        return out.stdout.strip() or None
    except OSError:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--out', default='nbs/results/sudoku/trm_speed.json')
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--configs', default=','.join(CONFIGS))
    p.add_argument('--profile', action='store_true')
    args = p.parse_args()
    torch.set_num_threads(1)
    results = []
    for name in args.configs.split(','):
        c = CONFIGS[name]
        torch.manual_seed(0)
        x = torch.randint(0, 10, (c['batch'], CELLS))
        y = torch.randint(0, 9, (c['batch'], CELLS))
        mine, my_step = ours(c['dim'], c['multiple'])
        other, their_step = theirs(c['dim'])
        steps = {'ours': my_step, 'theirs': their_step}
        median, all_times = time_both(steps, x, y, args.repeats)
        rec = dict(
            config=name,
            dim=c['dim'],
            batch=c['batch'],
            layers=2,
            n=6,
            T=3,
            positions=CELLS + PREFIX,
            params=dict(
                ours=sum(p.numel() for p in mine.model.parameters()),
                theirs=sum(p.numel() for p in other.parameters()),
            ),
            flops=dict(ours=flops(my_step, x, y), theirs=flops(their_step, x, y)),
            step_s={k: round(v, 4) for k, v in median.items()},
            all_step_s={k: [round(t, 4) for t in v] for k, v in all_times.items()},
            ratio=round(median['ours'] / median['theirs'], 3),
        )
        if args.profile:
            rec['ours_profile'] = profile(my_step, x, y)
        results.append(rec)
        print(json.dumps({k: rec[k] for k in ('config', 'step_s', 'ratio', 'flops')}), flush=True)
    out = dict(
        benchmark='one TRM training step: ours (ttc_nb.sudoku.trm) against tiny-recursive-model',
        target='ours at most 0.7 times its time',
        threads=1,
        results=results,
        env=dict(
            torch=torch.__version__,
            tiny_recursive_model=version('tiny-recursive-model'),
            cpu=cpu_name(),
            cores=os.cpu_count(),
            load_average=[round(v, 2) for v in os.getloadavg()],
            commit=commit(),
        ),
    )
    save_json(out, args.out)


if __name__ == '__main__':
    main()
