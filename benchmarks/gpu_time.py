"""Estimated minutes of every `gpu` preset on one NVIDIA H100, from the operations of its updates and evaluations counted
on this CPU (for tasks that are lent no GPU; where one is lent, `ttc run EXP --preset gpu` measures it). `--presets`
estimates other presets sized for a GPU too (the recurrence notebook's `gpu-cured`); each row names its preset.

What is measured here, for each experiment at its `gpu` config:
- every tensor operation of a training update (forward, backward, gradient clipping, AdamW step), caught by a
  `TorchDispatchMode` as the update runs: its FLOPs (PyTorch's own `flop_counter` registry; fused attention on the CPU,
  which the registry does not know, by `attention_flops`), the bytes it reads and
  writes (its tensors' sizes, float32 as counted here: the GPU's bf16 autocast moves fewer), and whether it launches a
  kernel (a view does not). Curricula (the looped models') are measured at five points of training and averaged; the
  other samplers at three updates;
- the same for the periodic validation and the final compute curve, counted on the first `EVAL_SLICE` samples of the
  first batch of each set (FLOPs and bytes scaled up to the whole batch, the operations as counted) and multiplied by the
  number of batches of the preset's real sets; for the recurrence experiments, also the greedy decoding of every test
  row at every test step count that the notebook's comparison makes (`generation_curve`), by an untrained decoder, which
  never stops a path early: an upper bound for paths;
- where the cost depends on what the network has learned: ACT's networks at the weights of the committed run of the same
  experiment, network and time limit M with the most updates (they ponder as trained), and where there is none, with a
  halting bias of -30, so that every input ponders to M; the DEQ solvers with tolerance 0, so that every solve runs its
  whole budget of iterations. The latter two estimates are upper bounds of their presets' time;
- the seconds the sampler takes to draw a batch on this CPU (it runs on the host's CPU on a GPU machine too), the
  seconds of the experiment's setup (its data built, unless cached: run it on an empty cache), and, for Sudoku, the
  seconds per puzzle of building the preset's sets with one worker (16 of them build the real sets);
- this CPU's cost of dispatching one small operation with autograd from Python (a loop of small ops timed).

The model of the H100 (its datasheet: 989 TFLOP/s dense bf16, 3.35 TB/s HBM3), with these assumptions (`ASSUME`):
a kernel takes max(`kernel_min_s`, FLOPs / (`flops_fraction` x peak) + bytes / (`bandwidth_fraction` x bandwidth));
the host issues each operation in this CPU's measured dispatch time plus `launch_s` per kernel; host and GPU overlap,
so an update takes the larger of the two sums, plus drawing its batch. Eager mode: `torch.compile` fuses operations
and would do better. Sudoku sets are built by 16 workers (the H100 machine's cores) at the one-worker rate measured.

Usage: python benchmarks/gpu_time.py [--experiments a,b,...] [--presets gpu,...] [--out nbs/results/gpu-time-h100.json]
"""
import argparse, dataclasses, inspect, math, statistics, tempfile, time
from pathlib import Path
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map
from torch.utils.flop_counter import flop_registry
from ttc_nb.protocol import compute_curve
from ttc_nb.files import load_checkpoint, load_json, save_json
from ttc_nb.train import Objective, lr_schedule, train_step, seed_everything
from ttc_nb.runs import EXPERIMENTS, environment, get_experiment
from ttc_nb.cli import load_modules

H100 = dict(name='NVIDIA H100 SXM5', bf16_flops_per_s=989e12, bytes_per_s=3.35e12, host_cores=16)
ASSUME = dict(flops_fraction=0.25, bandwidth_fraction=0.6, kernel_min_s=3e-6, launch_s=5e-6)
EVAL_SLICE = 64
SUDOKU = ('sudoku-rrn', 'sudoku-deq', 'sudoku-pgadj')

def attention_flops(func, args):
    "FLOPs of a fused attention kernel that the registry does not know (PyTorch's flash attention on the CPU): 4 B H Tq Tk d forward, twice that backward."
    name = func.overloadpacket.__name__
    if 'scaled_dot_product' not in name: return 0
    backward = name.endswith('backward')
    q, k = args[1:3] if backward else args[:2]                 # (grad_out, q, k, v, ...) or (q, k, v, ...): (B, H, T, d)
    return 4 * q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] * q.shape[3] * (2 if backward else 1)

class Count(TorchDispatchMode):
    "Operations, kernels, FLOPs and bytes of what runs under it, and the seconds the H100 model gives their kernels."
    def __init__(self, scale=1.):
        super().__init__()
        self.scale, self.ops, self.kernels, self.flops, self.bytes = scale, 0, 0, 0, 0
        self.gpu_s = 0.
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.ops += 1
        if func.is_view: return out
        f = flop_registry[func.overloadpacket](*args, **kwargs, out_val=out) if func.overloadpacket in flop_registry else attention_flops(func, args)
        b = sum(t.numel() * t.element_size() for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor))
        f, b = f * self.scale, b * self.scale
        self.kernels, self.flops, self.bytes = self.kernels + 1, self.flops + f, self.bytes + b
        self.gpu_s += max(ASSUME['kernel_min_s'], f / (ASSUME['flops_fraction'] * H100['bf16_flops_per_s'])
                          + b / (ASSUME['bandwidth_fraction'] * H100['bytes_per_s']))
        return out
    def seconds(self, dispatch_s):
        "The H100 model's seconds for what was counted: the host's issuing and the GPU's work overlap."
        return max(self.gpu_s, self.ops * dispatch_s + self.kernels * ASSUME['launch_s'])
    def record(self, dispatch_s):
        return dict(ops=self.ops, kernels=self.kernels, gflops=round(self.flops / 1e9, 3), gbytes=round(self.bytes / 1e9, 3),
                    gpu_s=round(self.gpu_s, 5), host_s=round(self.ops * dispatch_s + self.kernels * ASSUME['launch_s'], 5),
                    est_s=round(self.seconds(dispatch_s), 5))

def dispatch_seconds(n=200, repeats=7):
    "This CPU's seconds per small operation, forward and backward, with autograd, issued from Python."
    w, b = torch.randn(16, requires_grad=True), torch.randn(16, requires_grad=True)
    def f():
        y = torch.randn(16)
        for _ in range(n): y = torch.tanh(y * w + b)
        y.sum().backward()
    f()
    with Count() as c: f()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
    return statistics.median(times) / c.ops

def measured(name, cfg):
    "`cfg` at its most costly (see above), with small training sets (an update's cost does not depend on their size) and one batch per held-out set."
    worst = dict(halt_bias=-30.) if name.startswith('act-') else dict(tol=0.) if hasattr(cfg, 'tol') else {}
    small = dict(train_size=512, valid_size=cfg.eval_batch, test_size=cfg.eval_batch) if name in SUDOKU else {}
    return dataclasses.replace(cfg, **worst, **small)

def batches_per_set(name, real, s):
    "{set: number of batches} of the preset's real held-out sets."
    if name not in SUDOKU: return {k: len(v) for k, v in s.evals.items()}
    return {k: math.ceil((real.valid_size if k == 'valid' else real.test_size) / real.eval_batch) for k in s.evals}

def update_cost(s, cfg, dispatch_s, points):
    "Mean H100-model seconds of one update, and of drawing its batch here, over the training points `points`."
    net = Objective(s.model, s.loss)
    opt = torch.optim.AdamW(s.model.parameters(), lr=cfg.lr, weight_decay=cfg.wd, foreach=True)   # as on CUDA
    sched, gen = lr_schedule(opt, cfg.updates, cfg.warmup, cfg.schedule), torch.Generator().manual_seed(cfg.seed)
    draw = (lambda i: s.sample(gen, i)) if 'update' in inspect.signature(s.sample).parameters else (lambda i: s.sample(gen))
    train_step(net, opt, sched, draw(0), cfg.clip, False)          # the optimiser's state exists from the first update on
    recs = []
    for i in points:
        t0 = time.perf_counter(); batch = draw(i); sample_s = time.perf_counter() - t0
        with Count() as c: train_step(net, opt, sched, batch, cfg.clip, False)
        recs.append(c.record(dispatch_s) | dict(update=i, sample_s=round(sample_s, 5)))
    return recs

def trained(model, name, cfg):
    "The committed run of `name` with the most updates whose network and time limit are `cfg`'s, loaded into `model`; its directory, or None."
    runs = [p.parent for p in Path('nbs/results').rglob('config.json') if (p.parent/'checkpoint.pt').exists()]
    runs = [r for r in runs if (c := load_json(r/'config.json'))['experiment'] == name and c['config']['train_steps'] == cfg.train_steps]
    shapes = lambda sd: {k: v.shape for k, v in sd.items()}
    for run in sorted(runs, key=lambda r: -load_json(r/'config.json')['config']['updates']):
        sd = load_checkpoint(run/'checkpoint.pt')['model']
        if shapes(sd) == shapes(model.state_dict()): model.load_state_dict(sd); return str(run)   # (a failed load_state_dict loads part)

def eval_cost(s, cfg, n_batches, dispatch_s):
    "H100-model seconds of one periodic validation (train_steps on the first set) and of the final compute curve."
    def cost(k, steps):
        batch = next(iter(s.evals[k]))
        n = next(t for t in tree_leaves(batch) if isinstance(t, torch.Tensor)).shape[0]
        head = tree_map(lambda t: t[:EVAL_SLICE] if isinstance(t, torch.Tensor) and t.dim() else t, batch)
        with Count(n / min(n, EVAL_SLICE)) as c: compute_curve(s.model, [head], steps, s.metrics, torch.device('cpu'))
        return c.seconds(dispatch_s) * n_batches[k]
    valid = next(iter(s.evals))
    steps = sorted({*cfg.test_steps, cfg.train_steps})
    return cost(valid, [cfg.train_steps]), sum(cost(k, steps) for k in s.evals)

def generation_seconds(s, cfg, dispatch_s):
    "H100-model seconds of `generation_curve` (the recurrence notebook's comparison): greedy decoding of every test row at every test step count, counted on the first `EVAL_SLICE` rows."
    from ttc_nb.recurrence import generate, n_tokens, recurrence_data
    d = recurrence_data(cfg)
    head = d['test'][:EVAL_SLICE]
    new, stop = head.shape[1] - d['prompt'] - (cfg.task == 'paths'), n_tokens(cfg) - 2 if cfg.task == 'paths' else None
    batches, total = math.ceil(len(d['test']) / cfg.eval_batch), 0.
    for steps in cfg.test_steps:
        with Count(min(cfg.eval_batch, len(d['test'])) / len(head)) as c: generate(s.model, head[:, :d['prompt']], steps, new, stop)
        total += c.seconds(dispatch_s) * batches
    return total

def build_seconds(cfg, n=64):
    "Seconds to build the preset's Sudoku sets with the H100 machine's cores, at the one-worker rate measured here."
    from ttc_nb.sudoku import dataset
    from ttc_nb.rrn import band
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter(); dataset(n, tuple(cfg.givens), seed=1, split='train', box=tuple(cfg.box), cache_dir=d, quiet=True, workers=1)
        train = (time.perf_counter() - t0) / n
        per = {}
        for b in cfg.bands:
            t0 = time.perf_counter(); dataset(n // 4, band(b), seed=1, split='test', box=tuple(cfg.box), cache_dir=d, quiet=True, workers=1)
            per[b] = (time.perf_counter() - t0) / (n // 4)
    one = cfg.train_size * train + cfg.valid_size * train + cfg.test_size * sum(per.values())
    return dict(train_s_per_puzzle=round(train, 4), test_s_per_puzzle={k: round(v, 4) for k, v in per.items()},
                one_worker_s=round(one, 1), s=round(one / H100['host_cores'], 1))

def estimate(name, dispatch_s, preset='gpu'):
    exp = get_experiment(name)
    real = exp.config(preset)
    cfg = measured(name, real)
    seed_everything(cfg.seed)
    t0 = time.perf_counter(); s = exp.setup(cfg); setup_s = time.perf_counter() - t0      # the data built or read, the model made
    weights = trained(s.model, name, cfg) if name.startswith('act-') else None
    curriculum = 'update' in inspect.signature(s.sample).parameters
    points = [round(f * (cfg.updates - 1)) for f in (0, .25, .5, .75, 1)] if curriculum else [1, 2, 3]
    t0 = time.perf_counter()
    updates = update_cost(s, cfg, dispatch_s, points)
    per_update = statistics.mean(r['est_s'] + r['sample_s'] for r in updates)
    valid_s, curve_s = eval_cost(s, cfg, batches_per_set(name, real, s), dispatch_s)
    evals = (cfg.updates - 1) // cfg.eval_every
    train_s = cfg.updates * per_update + evals * valid_s
    build = build_seconds(real) if name in SUDOKU else None
    generation_s = generation_seconds(s, cfg, dispatch_s) if name.startswith('recurrence-') else 0.
    total = train_s + curve_s + generation_s + (build['s'] if build else setup_s)
    return dict(experiment=name, preset=preset, config={k: v for k, v in exp.presets[preset].items()}, updates=cfg.updates,
                batch_size=cfg.batch_size, weights=weights,
                bound=weights is None and (name.startswith('act-') or hasattr(cfg, 'tol')), update_s=round(per_update, 5), updates_measured=updates,
                valid_s=round(valid_s, 3), evaluations=evals, final_curve_s=round(curve_s, 2), generation_s=round(generation_s, 1), setup_s=round(setup_s, 1),
                data_build=build,
                train_min=round(train_s / 60, 1), total_min=round(total / 60, 1), cpu_measure_s=round(time.perf_counter() - t0, 1))

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--experiments')
    p.add_argument('--presets', default='gpu', help='comma-separated presets (default: gpu)')
    p.add_argument('--out', default='nbs/results/gpu-time-h100.json')
    args = p.parse_args()
    torch.set_num_threads(1)
    load_modules()
    presets = args.presets.split(',')
    names = args.experiments.split(',') if args.experiments else list(EXPERIMENTS)
    todo = [(n, p) for n in names for p in presets if p in get_experiment(n).presets]
    dispatch_s = dispatch_seconds()
    print(f'dispatch: {dispatch_s * 1e6:.1f} us per op', flush=True)
    rows = []
    for name, preset in todo:
        rows.append(estimate(name, dispatch_s, preset))
        r = rows[-1]
        print(f"{name} ({preset}): {r['updates']} updates x {r['update_s'] * 1e3:.1f} ms + {r['evaluations']} validations x {r['valid_s']:.2f} s"
              f" + curve {r['final_curve_s']:.0f} s + generation {r['generation_s']:.0f} s -> {r['total_min']} min", flush=True)
    if Path(args.out).exists():                               # the other experiments' and presets' estimates are kept
        rows = [r for r in load_json(args.out)['rows'] if (r['experiment'], r.get('preset', 'gpu')) not in todo] + rows
    save_json(dict(benchmark=__doc__.splitlines()[0], h100=H100, assume=ASSUME, dispatch_s=dispatch_s, rows=rows,
                   env=environment(torch.device('cpu'))), args.out)
    print('written:', args.out)

if __name__ == '__main__': main()
