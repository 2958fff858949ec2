"""Estimated minutes of every `gpu` preset on one NVIDIA H100, from its operations counted here.

The operations are those of its updates and evaluations, counted on this CPU (where a GPU is at
hand, `ttc run EXP --preset gpu` measures it). `--presets` estimates other presets sized for a GPU
too (the recurrence notebook's `gpu-cured`); each row names its preset.

What is measured here, for each experiment at its `gpu` config:
- every tensor operation of a training update (forward, backward, gradient clipping, AdamW step),
  caught by a `TorchDispatchMode` as the update runs: its FLOPs (PyTorch's own `flop_counter`
  registry; fused attention on the CPU, which the registry does not know, by `attention_flops`), the
  bytes it reads and writes (its tensors' sizes, float32 as counted here: the GPU's bf16 autocast
  moves fewer), and whether it launches a kernel (a view does not). Curricula (the looped models')
  are measured at five points of training and averaged; the other samplers at three updates;
- the same for the periodic validation and the final compute curve, counted on the first
  `EVAL_SLICE` samples of the first batch of each set (FLOPs and bytes scaled up to the whole batch,
  the operations as counted) and multiplied by the number of batches of the preset's real sets; and
  the other evaluations an experiment's page makes, which it declares (`Costs.extra`: the recurrence
  notebook's greedy decoding of every test row at every test step count, by an untrained decoder,
  which never stops a path early: an upper bound for paths);
- where the cost depends on what the network has learned, each experiment says how to measure it
  (`Costs`): ACT's networks at the weights of a committed run of the same network and time limit M
  (they ponder as trained), and where there is none, with a halting bias of -30, so that every input
  ponders to M; the DEQ solvers with tolerance 0, so that every solve runs its whole budget of
  iterations. The latter two estimates are upper bounds of their presets' time;
- the seconds the sampler takes to draw a batch on this CPU (it runs on the host's CPU on a GPU
  machine too; the median of the measured draws, since one may begin a new pass over the data, which
  is rare in a run), the seconds of the experiment's setup (its data built, unless cached: run it on
  an empty cache), and, where the experiment builds its data (`Costs.data_build`: Sudoku), one
  worker's seconds to build the preset's sets (16 of them build them);
- this CPU's cost of dispatching one small operation with autograd from Python (a loop of small ops
  timed), recorded (`dispatch_s_measured`) beside the host's cost the model assumes.

The model of the H100 (its datasheet: 989 TFLOP/s dense bf16, 3.35 TB/s HBM3), with these
assumptions (`ASSUME`): a kernel takes max(`kernel_min_s`, FLOPs / (`flops_fraction` x peak)
+ bytes / (`bandwidth_fraction` x bandwidth)); the host issues each operation in `dispatch_s` plus
`launch_s` per kernel (`dispatch_s`, 1.1 us, is what the faster of the two 2-core AMD EPYC machines
that ran this benchmark measured, 1.08 us, where the other measured 1.67 us: the server CPU beside
an H100 is taken to be at least as fast, and the estimates do not change with the machine that makes
them); host and GPU overlap, so an update takes the larger of the two sums, plus drawing its batch.
Eager mode: `torch.compile` fuses operations and would do better. Sudoku sets are built by 16
workers (the H100 machine's cores) at the one-worker rate measured.

Beside the H100 model, the same updates are timed for real on this CPU, with `--cpu-threads` threads
(default 2): the mean wall seconds of an update (drawing its batch included) at the same training
points, and of one batch of the periodic validation, give the hours the preset's training takes here
(`cpu_train_h`: its updates and validations, not its final curve). Where that is within a few hours,
the preset is a CPU run, whatever the H100 model says.

Usage: python benchmarks/gpu_time.py [--experiments a,b,...] [--presets gpu,...] [--cpu-threads 2]
                                     [--out nbs/results/gpu-time-h100.json]
"""

import argparse
import dataclasses
import statistics
import time
from pathlib import Path
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map
from torch.utils.flop_counter import flop_registry
from ttc_nb.core.protocol import compute_curve
from ttc_nb.train.files import load_checkpoint, load_json, save_json
from ttc_nb.train.fit import Objective, lr_schedule, train_step, seed_everything
from ttc_nb.runs.provenance import environment
from ttc_nb.runs.registry import all_experiments, get_experiment
from ttc_nb.report.costs import GPU_TIME

H100 = dict(name='NVIDIA H100 SXM5', bf16_flops_per_s=989e12, bytes_per_s=3.35e12, host_cores=16)
ASSUME = dict(
    flops_fraction=0.25, bandwidth_fraction=0.6, kernel_min_s=3e-6, launch_s=5e-6, dispatch_s=1.1e-6
)
EVAL_SLICE = 64


# PyTorch's flash attention on the CPU: 4 B H Tq Tk d forward, twice that backward.
def attention_flops(func, args):
    "FLOPs of a fused attention kernel that the registry does not know."
    name = func.overloadpacket.__name__
    if 'scaled_dot_product' not in name:
        return 0
    backward = name.endswith('backward')
    q, k = (
        args[1:3] if backward else args[:2]
    )  # (grad_out, q, k, v, ...) or (q, k, v, ...): (B, H, T, d)
    return (
        4 * q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] * q.shape[3] * (2 if backward else 1)
    )


# Also the seconds the H100 model gives their kernels.
class Count(TorchDispatchMode):
    "Operations, kernels, FLOPs and bytes of what runs under it."

    def __init__(self, scale=1.0):
        super().__init__()
        self.scale, self.ops, self.kernels, self.flops, self.bytes = scale, 0, 0, 0, 0
        self.gpu_s = 0.0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.ops += 1
        if func.is_view:
            return out
        f = (
            flop_registry[func.overloadpacket](*args, **kwargs, out_val=out)
            if func.overloadpacket in flop_registry
            else attention_flops(func, args)
        )
        b = sum(
            t.numel() * t.element_size()
            for t in tree_leaves((args, kwargs, out))
            if isinstance(t, torch.Tensor)
        )
        f, b = f * self.scale, b * self.scale
        self.kernels, self.flops, self.bytes = self.kernels + 1, self.flops + f, self.bytes + b
        self.gpu_s += max(
            ASSUME['kernel_min_s'],
            f / (ASSUME['flops_fraction'] * H100['bf16_flops_per_s'])
            + b / (ASSUME['bandwidth_fraction'] * H100['bytes_per_s']),
        )
        return out

    # The host's issuing and the GPU's work overlap.
    def seconds(self, dispatch_s):
        "The H100 model's seconds for what was counted."
        return max(self.gpu_s, self.ops * dispatch_s + self.kernels * ASSUME['launch_s'])

    def record(self, dispatch_s):
        return dict(
            ops=self.ops,
            kernels=self.kernels,
            gflops=round(self.flops / 1e9, 3),
            gbytes=round(self.bytes / 1e9, 3),
            gpu_s=round(self.gpu_s, 5),
            host_s=round(self.ops * dispatch_s + self.kernels * ASSUME['launch_s'], 5),
            est_s=round(self.seconds(dispatch_s), 5),
        )


# The operations are issued from Python.
def dispatch_seconds(n=200, repeats=7):
    "This CPU's seconds per small operation, forward and backward, with autograd."
    w, b = torch.randn(16, requires_grad=True), torch.randn(16, requires_grad=True)

    def f():
        y = torch.randn(16)
        for _ in range(n):
            y = torch.tanh(y * w + b)
        y.sum().backward()

    f()
    with Count() as c:
        f()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / c.ops


# An update's cost does not depend on their size.
def measured(exp, cfg):
    "`cfg` at its most costly (see above), with small data sets where the experiment says how."
    return dataclasses.replace(
        cfg, **exp.costs.costliest, **(exp.costs.small(cfg) if exp.costs.small else {})
    )


def batches_per_set(exp, real, s):
    "{set: number of batches} of the preset's real held-out sets."
    return (
        exp.costs.eval_batches(real, s.evals)
        if exp.costs.eval_batches
        else {k: len(v) for k, v in s.evals.items()}
    )


# The update makes the optimiser's state exist.
def _trainer(s, cfg, foreach=None):
    "The objective, AdamW, schedule and batch drawer `fit` builds for `cfg`, after one update."
    net = Objective(s.model, s.loss)
    opt = torch.optim.AdamW(s.model.parameters(), lr=cfg.lr, weight_decay=cfg.wd, foreach=foreach)
    sched, gen = (
        lr_schedule(opt, cfg.updates, cfg.warmup, cfg.schedule),
        torch.Generator().manual_seed(cfg.seed),
    )
    draw = (lambda i: s.sample(gen, i)) if s.curriculum else (lambda i: s.sample(gen))
    train_step(net, opt, sched, draw(0), cfg.clip, False)
    return net, opt, sched, draw


# `points`: the training points.
def update_cost(s, cfg, dispatch_s, points):
    "Mean H100-model seconds of one update, and of drawing its batch here, over `points`."
    net, opt, sched, draw = _trainer(s, cfg, foreach=True)  # foreach as on CUDA
    recs = []
    for i in points:
        t0 = time.perf_counter()
        batch = draw(i)
        sample_s = time.perf_counter() - t0
        with Count() as c:
            train_step(net, opt, sched, batch, cfg.clip, False)
        recs.append(c.record(dispatch_s) | dict(update=i, sample_s=round(sample_s, 5)))
    return recs


# One update's seconds: the mean at each of `points`, drawing its batch included.
def cpu_seconds(s, cfg, points, threads):
    "Wall seconds on this CPU with `threads` threads of one update and of one validation batch."
    torch.set_num_threads(threads)
    try:
        net, opt, sched, draw = _trainer(s, cfg)
        times = []
        for i in points:
            t0 = time.perf_counter()
            train_step(net, opt, sched, draw(i), cfg.clip, False)
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        compute_curve(
            s.model,
            [next(iter(next(iter(s.evals.values()))))],
            [cfg.train_steps],
            s.metrics,
            torch.device('cpu'),
        )
        return statistics.mean(times), time.perf_counter() - t0
    finally:
        torch.set_num_threads(1)


# The committed run whose weights the experiment names (`Costs.trained`).
def trained(model, exp, preset):
    "Load the run the experiment names for `preset` into `model`; its directory, or None."
    if not (run := exp.costs.trained.get(preset)):
        return None
    model.load_state_dict(load_checkpoint(Path(run) / 'checkpoint.pt')['model'])
    return run


# The validation: train_steps on the first set.
def eval_cost(s, cfg, n_batches, dispatch_s):
    "H100-model seconds of one periodic validation and of the final compute curve."

    def cost(k, steps):
        batch = next(iter(s.evals[k]))
        n = next(t for t in tree_leaves(batch) if isinstance(t, torch.Tensor)).shape[0]
        head = tree_map(
            lambda t: t[:EVAL_SLICE] if isinstance(t, torch.Tensor) and t.dim() else t, batch
        )
        with Count(n / min(n, EVAL_SLICE)) as c:
            compute_curve(s.model, [head], steps, s.metrics, torch.device('cpu'))
        return c.seconds(dispatch_s) * n_batches[k]

    valid = next(iter(s.evals))
    steps = sorted({*cfg.test_steps, cfg.train_steps})
    return cost(valid, [cfg.train_steps]), sum(cost(k, steps) for k in s.evals)


# Each evaluation is run once, scaled and repeated.
def extra_seconds(exp, s, cfg, dispatch_s):
    "H100-model seconds of the other evaluations the experiment's page makes (`Costs.extra`)."
    total = 0.0
    for run, scale, times in exp.costs.extra(s, cfg) if exp.costs.extra else []:
        with Count(scale) as c:
            run()
        total += c.seconds(dispatch_s) * times
    return total


# The seconds are at the one-worker rate measured here.
def build_seconds(exp, cfg):
    "Seconds to build the preset's data with the H100 machine's cores; None where nothing is built."
    if not exp.costs.data_build:
        return None
    one = exp.costs.data_build(cfg)
    return one | dict(s=round(one['one_worker_s'] / H100['host_cores'], 1))


def estimate(name, dispatch_s, preset='gpu', cpu_threads=2):
    exp = get_experiment(name)
    real = exp.config(preset)
    cfg = measured(exp, real)
    seed_everything(cfg.seed)
    t0 = time.perf_counter()
    s = exp.setup(cfg)
    setup_s = time.perf_counter() - t0  # the data built or read, the model made
    weights = trained(s.model, exp, preset)
    points = (
        [round(f * (cfg.updates - 1)) for f in (0, 0.25, 0.5, 0.75, 1)]
        if s.curriculum
        else [1, 2, 3]
    )
    t0 = time.perf_counter()
    updates = update_cost(s, cfg, dispatch_s, points)
    # the sampler's median draw: one of a few draws may begin
    # a new pass over the data (a shuffle), rare in a run
    per_update = statistics.mean(r['est_s'] for r in updates) + statistics.median(
        r['sample_s'] for r in updates
    )
    valid_s, curve_s = eval_cost(s, cfg, batches_per_set(exp, real, s), dispatch_s)
    evals = (cfg.updates - 1) // cfg.eval_every
    train_s = cfg.updates * per_update + evals * valid_s
    build = build_seconds(exp, real)
    generation_s = extra_seconds(exp, s, cfg, dispatch_s)
    total = train_s + curve_s + generation_s + (build['s'] if build else setup_s)
    cpu_update_s, cpu_valid_s = cpu_seconds(s, cfg, points, cpu_threads)
    cpu_train_h = (
        cfg.updates * cpu_update_s
        + evals * cpu_valid_s * batches_per_set(exp, real, s)[next(iter(s.evals))]
    ) / 3600
    return dict(
        experiment=name,
        preset=preset,
        config={k: v for k, v in exp.presets[preset].items()},
        updates=cfg.updates,
        batch_size=cfg.batch_size,
        weights=weights,
        bound=weights is None and bool(exp.costs.costliest),
        update_s=round(per_update, 5),
        updates_measured=updates,
        valid_s=round(valid_s, 3),
        evaluations=evals,
        final_curve_s=round(curve_s, 2),
        generation_s=round(generation_s, 1),
        setup_s=round(setup_s, 1),
        data_build=build,
        train_min=round(train_s / 60, 1),
        total_min=round(total / 60, 1),
        cpu_threads=cpu_threads,
        cpu_update_s=round(cpu_update_s, 5),
        cpu_valid_s=round(cpu_valid_s, 3),
        cpu_train_h=round(cpu_train_h, 2),
        cpu_measure_s=round(time.perf_counter() - t0, 1),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--experiments')
    p.add_argument('--presets', default='gpu', help='comma-separated presets (default: gpu)')
    p.add_argument(
        '--cpu-threads', type=int, default=2, help='threads for the real CPU timing (default 2)'
    )
    p.add_argument('--out', default=str(Path('nbs/results') / GPU_TIME))
    args = p.parse_args()
    torch.set_num_threads(1)
    presets = args.presets.split(',')
    names = args.experiments.split(',') if args.experiments else list(all_experiments())
    todo = [(n, p) for n in names for p in presets if p in get_experiment(n).presets]
    measured, dispatch_s = dispatch_seconds(), ASSUME['dispatch_s']
    print(
        f'dispatch: {measured * 1e6:.2f} us per op on this CPU; '
        f'the model assumes {dispatch_s * 1e6:.2f} us',
        flush=True,
    )
    rows = []
    for name, preset in todo:
        rows.append(estimate(name, dispatch_s, preset, args.cpu_threads))
        r = rows[-1]
        print(
            f'{name} ({preset}): {r["updates"]} updates x {r["update_s"] * 1e3:.1f} ms '
            f'+ {r["evaluations"]} validations x {r["valid_s"]:.2f} s + curve '
            f'{r["final_curve_s"]:.0f} s + generation {r["generation_s"]:.0f} s -> '
            f'{r["total_min"]} min on the H100 model; here, {r["cpu_threads"]} CPU threads: '
            f'{r["cpu_update_s"] * 1e3:.1f} ms an update '
            f'-> {r["cpu_train_h"]:.2f} h of training',
            flush=True,
        )
    if Path(args.out).exists():  # the other experiments' and presets' estimates are kept
        rows = [
            r
            for r in load_json(args.out)['rows']
            if (r['experiment'], r.get('preset', 'gpu')) not in todo
        ] + rows
    save_json(
        dict(
            benchmark=__doc__.splitlines()[0],
            h100=H100,
            assume=ASSUME,
            dispatch_s=dispatch_s,
            dispatch_s_measured=measured,
            rows=rows,
            env=environment(torch.device('cpu')),
        ),
        args.out,
    )
    print('written:', args.out)


if __name__ == '__main__':
    main()
