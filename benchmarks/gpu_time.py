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
the preset is a CPU run, whatever the H100 model says. The process's own CPU seconds are recorded
beside them (`cpu_process`), and the load average: on cores shared with other work, the wall
seconds are those of the share the process got (with one thread, its CPU seconds are not).

A preset whose updates take too long here to count and time at its own batch (`sudoku-trm`'s,
half an hour of one core an update of 768 puzzles at width 512) is measured at two small batches
(`--count-batches 8,16`), all else the same, and its evaluation batches at two small slices
(`--eval-batches 2,4`). The two counts must issue the same operations in the same order, else the
benchmark refuses: an ACT network pondering as trained does not, nor TRM's evaluation at a batch
of 1 beside 2 (a dimension of size 1 spares PyTorch a copy). Where they do, each operation's
FLOPs and bytes are then extrapolated along the line through the two to the preset's batch, and
the kernel model is applied to each operation so extrapolated, not to the sums. The CPU seconds of
an update and of a validation batch are extrapolated along their lines likewise. Such a row says so
(`extrapolated`: the batches measured). Where the operations' sizes are affine in the batch, as in
a network without data-dependent control flow, the FLOPs, bytes and H100 seconds so extrapolated
are those counted at the full batch (tests/test_gpu_time.py checks it on a small TRM). At
`sudoku-rrn`'s `gpu` preset (batch 64), extrapolated from 8 and 16, the mean update's 7,491
operations, 3,504 kernels, 313.743 GFLOPs, 44.047 GB and 0.02671 H100 seconds were those counted
at 64, to the last digit recorded. The CPU seconds are not so: there, on one thread at a load
average of 8 to 15 on 2 cores, the process's CPU seconds of an update, 1.59 at 8 and 2.98 at 16,
extrapolate to 11.4 at 64, where 19.7 were timed, 42% under (a batch of 64 outgrows the caches
that 8 and 16 fit); the wall seconds were 50 against 160, their share of the cores varying. An
extrapolated CPU time is a rough lower bound.

Usage: python benchmarks/gpu_time.py [--experiments a,b,...] [--presets gpu,...] [--cpu-threads 2]
                                     [--count-batches A,B [--eval-batches A,B]]
                                     [--out nbs/results/gpu-time-h100.json]
"""

import argparse
import dataclasses
import os
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


def kernel_seconds(flops, nbytes):
    "The H100 model's seconds of one kernel."
    return max(
        ASSUME['kernel_min_s'],
        flops / (ASSUME['flops_fraction'] * H100['bf16_flops_per_s'])
        + nbytes / (ASSUME['bandwidth_fraction'] * H100['bytes_per_s']),
    )


# Also the seconds the H100 model gives their kernels; with `keep`, each operation in turn.
class Count(TorchDispatchMode):
    "Operations, kernels, FLOPs and bytes of what runs under it."

    def __init__(self, scale=1.0, keep=False):
        super().__init__()
        self.scale, self.ops, self.kernels, self.flops, self.bytes = scale, 0, 0, 0, 0
        self.gpu_s = 0.0
        self.kept = [] if keep else None  # (operation, kernel, FLOPs, bytes)

    def add(self, name, kernel, f=0, b=0):
        "Count one operation: a view (no kernel), or a kernel of `f` FLOPs moving `b` bytes."
        self.ops += 1
        if self.kept is not None:
            self.kept.append((name, kernel, f, b))
        if kernel:
            self.kernels, self.flops, self.bytes = self.kernels + 1, self.flops + f, self.bytes + b
            self.gpu_s += kernel_seconds(f, b)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func.is_view:
            self.add(str(func), False)
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
        self.add(str(func), True, f * self.scale, b * self.scale)
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


def affine(x, at, to):
    "The value at `to` of the line through (at[0], x[0]) and (at[1], x[1]), at least 0."
    return max(0.0, x[0] + (x[1] - x[0]) * (to - at[0]) / (at[1] - at[0]))


# The kernel model is applied to each operation's extrapolated FLOPs and bytes, not to their sums.
def extrapolate(counts, at, to):
    "A `Count` of batch `to` from two kept `counts` at batches `at`, each op affine in the batch."
    small, large = (c.kept for c in counts)
    names = [[op[:2] for op in ops] for ops in (small, large)]
    if names[0] != names[1]:
        i = next((i for i, (p, q) in enumerate(zip(*names)) if p != q), min(len(small), len(large)))
        raise ValueError(
            f'the operations at batches {at[0]} and {at[1]} differ, at operation {i} of '
            f'{len(small)} and {len(large)}: {names[0][i : i + 1]} against {names[1][i : i + 1]}; '
            'their costs cannot be paired'
        )
    out = Count()
    for (name, kernel, f0, b0), (_, _, f1, b1) in zip(small, large):
        out.add(name, kernel, affine((f0, f1), at, to), affine((b0, b1), at, to))
    return out


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
def update_counts(s, cfg, points, keep=False):
    "The `Count` of one update at each of `points`, and the seconds of drawing its batch here."
    net, opt, sched, draw = _trainer(s, cfg, foreach=True)  # foreach as on CUDA
    counts = []
    for i in points:
        t0 = time.perf_counter()
        batch = draw(i)
        sample_s = time.perf_counter() - t0
        with Count(keep=keep) as c:
            train_step(net, opt, sched, batch, cfg.clip, False)
        counts.append((c, sample_s))
    return counts


def update_cost(s, cfg, dispatch_s, points):
    "The H100 model's record of one update, and the seconds of drawing its batch, at `points`."
    return [
        c.record(dispatch_s) | dict(update=i, sample_s=round(sample_s, 5))
        for i, (c, sample_s) in zip(points, update_counts(s, cfg, points))
    ]


# `setups`: {batch size: the experiment's setup with it}, all else the same.
def update_cost_at(setups, cfg, dispatch_s, points, at):
    "`update_cost` at `cfg.batch_size`, extrapolated from updates counted at the batches `at`."
    runs = [
        update_counts(setups[b], dataclasses.replace(cfg, batch_size=b), points, keep=True)
        for b in at
    ]
    recs = []
    for i, pair in zip(points, zip(*runs)):
        c = extrapolate([c for c, _ in pair], at, cfg.batch_size)
        sample_s = affine([t for _, t in pair], at, cfg.batch_size)
        recs.append(c.record(dispatch_s) | dict(update=i, sample_s=round(sample_s, 5)))
    return recs


def head(batch, rows):
    "The first `rows` samples of `batch`: each tensor with a batch dimension cut."
    return tree_map(lambda t: t[:rows] if isinstance(t, torch.Tensor) and t.dim() else t, batch)


def batch_len(batch):
    "The number of samples in `batch`."
    return next(t for t in tree_leaves(batch) if isinstance(t, torch.Tensor)).shape[0]


def clocks():
    "Wall seconds and this process's CPU seconds, now."
    return time.perf_counter(), time.process_time()


# One update's seconds: the mean at each of `points`, drawing its batch included; the validation
# batch cut to its first `rows` samples where `rows` is given. The process's CPU seconds beside the
# wall's: with one thread, what the work took without the share other work takes of the cores.
def cpu_seconds(s, cfg, points, threads, rows=None):
    "Wall and CPU seconds here with `threads` threads of an update and of a validation batch."
    torch.set_num_threads(threads)
    try:
        net, opt, sched, draw = _trainer(s, cfg)
        times = []
        for i in points:
            t0 = clocks()
            train_step(net, opt, sched, draw(i), cfg.clip, False)
            times.append([b - a for a, b in zip(t0, clocks())])
        t0 = clocks()
        batch = next(iter(next(iter(s.evals.values()))))
        compute_curve(
            s.model,
            [head(batch, rows) if rows else batch],
            [cfg.train_steps],
            s.metrics,
            torch.device('cpu'),
        )
        valid = [b - a for a, b in zip(t0, clocks())]
        update = [statistics.mean(t) for t in zip(*times)]
        return dict(
            update_s=update[0],
            valid_s=valid[0],
            update_process_s=update[1],
            valid_process_s=valid[1],
        )
    finally:
        torch.set_num_threads(1)


def cpu_seconds_at(setups, cfg, points, threads, at, eval_at):
    "`cpu_seconds` at `cfg.batch_size` and the whole validation batch, timed at smaller ones."
    n = batch_len(next(iter(next(iter(setups[at[0]].evals.values())))))
    timed = [
        cpu_seconds(setups[b], dataclasses.replace(cfg, batch_size=b), points, threads, rows)
        for b, rows in zip(at, eval_at)
    ]
    return {
        k: affine([t[k] for t in timed], *((at, cfg.batch_size) if 'update' in k else (eval_at, n)))
        for k in timed[0]
    }


# The committed run whose weights the experiment names (`Costs.trained`).
def trained(model, exp, preset):
    "Load the run the experiment names for `preset` into `model`; its directory, or None."
    if not (run := exp.costs.trained.get(preset)):
        return None
    model.load_state_dict(load_checkpoint(Path(run) / 'checkpoint.pt')['model'])
    return run


# The validation: train_steps on the first set. With `at`, each batch is counted at its first
# at[0] and at[1] samples and extrapolated, op by op, to its size; else at its first EVAL_SLICE.
def eval_cost(s, cfg, n_batches, dispatch_s, at=None):
    "H100-model seconds of one periodic validation and of the final compute curve."

    def counted(batch, rows, steps, **kw):
        with Count(**kw) as c:
            compute_curve(s.model, [head(batch, rows)], steps, s.metrics, torch.device('cpu'))
        return c

    def cost(k, steps):
        batch = next(iter(s.evals[k]))
        n = batch_len(batch)
        c = (
            extrapolate([counted(batch, rows, steps, keep=True) for rows in at], at, n)
            if at and n > at[1]
            else counted(batch, EVAL_SLICE, steps, scale=n / min(n, EVAL_SLICE))
        )
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


# The first setup's seconds: the data built or read, the model made.
def setups_at(exp, preset, cfg, sizes):
    "{batch size: the setup of `cfg` with it}, each from the same seed; seconds; trained weights."
    setups, setup_s = {}, []
    for b in sizes:
        seed_everything(cfg.seed)
        t0 = time.perf_counter()
        setups[b] = exp.setup(dataclasses.replace(cfg, batch_size=b))
        setup_s.append(time.perf_counter() - t0)  # the data built or read, the model made
        weights = trained(setups[b].model, exp, preset)
    return setups, setup_s[0], weights


def check_batches(at, eval_at, batch_size):
    "Refuse batch sizes that cannot be extrapolated from: two, increasing, within the preset's."
    for sizes, what in ((at, 'updates'), (eval_at, 'evaluations')):
        if len(sizes) != 2 or not 0 < sizes[0] < sizes[1]:
            raise ValueError(f'{what} are counted at two increasing batch sizes, not {sizes}')
    if at[1] > batch_size:
        raise ValueError(f"updates counted at batches {at}, over the preset's {batch_size}")


# `at`: the two batch sizes to count and time updates at, extrapolated to the preset's;
# `eval_at`: the two to count and time evaluation batches at. None: the preset's own.
def estimate(name, dispatch_s, preset='gpu', cpu_threads=2, at=None, eval_at=None):
    t_start, load_before = time.perf_counter(), os.getloadavg()
    exp = get_experiment(name)
    real = exp.config(preset)
    cfg = measured(exp, real)
    if at:
        check_batches(at, eval_at, cfg.batch_size)
    setups, setup_s, weights = setups_at(exp, preset, cfg, at or [cfg.batch_size])
    s = next(iter(setups.values()))
    points = (
        [round(f * (cfg.updates - 1)) for f in (0, 0.25, 0.5, 0.75, 1)]
        if s.curriculum
        else [1, 2, 3]
    )
    t0 = time.perf_counter()
    updates = (
        update_cost_at(setups, cfg, dispatch_s, points, at)
        if at
        else update_cost(s, cfg, dispatch_s, points)
    )
    # the sampler's median draw: one of a few draws may begin
    # a new pass over the data (a shuffle), rare in a run
    per_update = statistics.mean(r['est_s'] for r in updates) + statistics.median(
        r['sample_s'] for r in updates
    )
    valid_s, curve_s = eval_cost(s, cfg, batches_per_set(exp, real, s), dispatch_s, eval_at)
    evals = (cfg.updates - 1) // cfg.eval_every
    train_s = cfg.updates * per_update + evals * valid_s
    build = build_seconds(exp, real)
    generation_s = extra_seconds(exp, s, cfg, dispatch_s)
    total = train_s + curve_s + generation_s + (build['s'] if build else setup_s)
    cpu = (
        cpu_seconds_at(setups, cfg, points, cpu_threads, at, eval_at)
        if at
        else cpu_seconds(s, cfg, points, cpu_threads)
    )
    valid_batches = batches_per_set(exp, real, s)[next(iter(s.evals))]

    def train_h(update_s, valid_s):
        return (cfg.updates * update_s + evals * valid_s * valid_batches) / 3600

    cpu_update_s, cpu_valid_s = cpu['update_s'], cpu['valid_s']
    cpu_train_h = train_h(cpu_update_s, cpu_valid_s)
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
        # the same from this process's CPU seconds: with one thread, without others' share
        cpu_process=dict(
            update_s=round(cpu['update_process_s'], 5),
            valid_s=round(cpu['valid_process_s'], 3),
            train_h=round(train_h(cpu['update_process_s'], cpu['valid_process_s']), 2),
        ),
        cpu_measure_s=round(time.perf_counter() - t0, 1),
        # counted and timed at smaller batches, each op's FLOPs and bytes and the CPU seconds
        # extrapolated affinely to the preset's batch (updates) and evaluation batch
        extrapolated=dict(update_batches=list(at), eval_batches=list(eval_at)) if at else None,
        wall_s=round(time.perf_counter() - t_start, 1),
        # the machine's load: others' work slows the CPU timing
        load_average=dict(
            before=[round(v, 2) for v in load_before],
            after=[round(v, 2) for v in os.getloadavg()],
        ),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--experiments')
    p.add_argument('--presets', default='gpu', help='comma-separated presets (default: gpu)')
    p.add_argument(
        '--cpu-threads', type=int, default=2, help='threads for the real CPU timing (default 2)'
    )
    p.add_argument(
        '--count-batches',
        help="A,B: count and time updates at batches A and B and extrapolate to the preset's",
    )
    p.add_argument(
        '--eval-batches',
        help='A,B: likewise evaluation batches (default: --count-batches)',
    )
    p.add_argument('--out', default=str(Path('nbs/results') / GPU_TIME))
    args = p.parse_args()
    at = [int(b) for b in args.count_batches.split(',')] if args.count_batches else None
    eval_at = [int(b) for b in args.eval_batches.split(',')] if args.eval_batches else at
    if eval_at and not at:
        p.error('--eval-batches extrapolates with --count-batches')
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
        rows.append(estimate(name, dispatch_s, preset, args.cpu_threads, at, eval_at))
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
    env = environment(torch.device('cpu'))
    rows = [r | dict(env=env) for r in rows]  # each row names the machine that timed it
    if Path(args.out).exists():  # the other experiments' and presets' estimates are kept
        rows = merged(load_json(args.out), rows, todo)
    save_json(
        dict(
            benchmark=__doc__.splitlines()[0],
            h100=H100,
            assume=ASSUME,
            dispatch_s=dispatch_s,
            dispatch_s_measured=measured,
            rows=rows,
            env=env,
        ),
        args.out,
    )
    print('written:', args.out)


def merged(old: dict, rows: list, todo) -> list:
    "The rows of the file `old` but those of `todo`, each with its machine, then the new `rows`."
    kept = [
        r if 'env' in r else r | dict(env=old['env'])  # timed on the machine the file names
        for r in old['rows']
        if (r['experiment'], r.get('preset', 'gpu')) not in todo
    ]
    return kept + rows


if __name__ == '__main__':
    main()
