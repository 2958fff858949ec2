"""Time one training step of our TRM against lucidrains' `tiny-recursive-model`, same configuration.

A training step is one supervision step of deep supervision: the puzzles embedded, T = 3 cycles of
n = 6 latent updates and one answer update (the first T - 1 without gradient), the answer and the
halting logit read out, softmax cross-entropy plus binary cross-entropy of the halt, backward, one
AdamW update and one update of the weights' moving average (0.999). Both get the same width, two
layers of an MLP-mixer over 81 cells and 16 extra positions (our prefix, their register tokens), the
same batch of random puzzles, 10 input tokens, and one thread.

The mixers are as close as the two allow. Ours is the paper's: SwiGLU MLPs (three matrices of
hidden width h) with post-norm RMSNorm. Theirs, `MLPMixer1D`, takes GELU MLPs (two matrices with
biases) and pre-norm LayerNorm; we set its two expansion factors so that each of its hidden widths
is 1.5 h, so each MLP has the same matrix shapes' worth of parameters and FLOPs as ours (by default
its token MLP is 4 x dim wide and its channel MLP dim / 2). The JSON lists what still differs, and
each step's parameters and FLOPs.

The two are timed in turns (the order alternating), several times, and the medians compared, so
that a load on the shared machine falls on both. Each step is also profiled once (PyTorch's
profiler, one thread): the JSON gives its time by kind of operation and its costliest operations.
`--compile` adds ours with each layer under `torch.compile` (not how ours trains; the peer's is
not compiled), timed in the same turns.

Run it with the interpreter of a venv holding `tiny-recursive-model`, ours imported from PYTHONPATH:
    python3 -m venv /work/trmvenv && /work/trmvenv/bin/pip install torch==2.13.0 \\
        tiny-recursive-model fastcore fastprogress
    PYTHONPATH=. /work/trmvenv/bin/python benchmarks/trm_speed.py [--out JSON] [--repeats 7]
"""

import argparse
import json
import os
import statistics
import time
from importlib.metadata import version
import torch
from torch.utils.flop_counter import FlopCounterMode
from ema_pytorch import EMA as TheirEMA
from tiny_recursive_model import TinyRecursiveModel
from tiny_recursive_model.mlp_mixer_1d import MLPMixer1D
from ttc_nb.sudoku.trm import TRM, EMA, DeepSupervision, swiglu_width
from ttc_nb.runs.provenance import environment
from ttc_nb.train.files import save_json

CONFIGS = {  # the cpu preset's width and batch, and the paper's width at a small batch
    'cpu-preset': dict(dim=64, batch=32, multiple=64),
    'paper-width': dict(dim=512, batch=8, multiple=256),
}
PREFIX, CELLS, TOKENS = 16, 81, 10
LENGTH = PREFIX + CELLS
DIFFERENCES = [
    'MLPs: ours SwiGLU without biases (hidden h, three matrices), theirs GELU with biases '
    '(hidden 1.5 h, two matrices): the same matrix sizes',
    'norms: ours post-norm RMSNorm without a scale, theirs pre-norm LayerNorm with a scale and a '
    'final LayerNorm',
    'token mixing: ours a matrix product over the positions, theirs a 1 x 1 Conv1d',
    'output head: ours 9 digits, theirs the 10 input tokens',
    'halting logit: ours from the first position, with a bias; theirs from the mean position',
    'extra positions: ours one learned puzzle vector then zeros, theirs 16 learned registers',
    'initial y and z: ours fixed buffers, theirs learned vectors',
    'deep supervision: ours replaces halted puzzles and draws exploration; theirs is left to the '
    'caller (here: the same batch, its state carried)',
    'loss: softmax cross-entropy for both (ours trains with stable-max by default)',
    'moving average: ours lerp per parameter, theirs ema-pytorch',
]
KINDS = {  # profiler operations, by kind
    'matrix products': (
        'aten::mm',
        'aten::addmm',
        'aten::bmm',
        'aten::mkldnn_convolution',
        'aten::convolution_backward',
        'aten::_slow_conv2d_forward',
        'aten::_slow_conv2d_backward',
    ),
    'activations': ('aten::silu', 'aten::silu_backward', 'aten::gelu', 'aten::gelu_backward'),
    'elementwise': (
        'aten::mul',
        'aten::add',
        'aten::add_',
        'aten::div',
        'aten::pow',
        'aten::sum',
        'aten::mean',
        'aten::rsqrt',
        'aten::mul_',
        'aten::sub',
        'aten::where',
        'aten::lerp_',
        'aten::addcmul_',
        'aten::addcdiv_',
        'aten::sqrt',
        'aten::fill_',
        'aten::zero_',
    ),
    'norms': (
        'aten::_fused_rms_norm',
        'aten::_fused_rms_norm_backward',
        'aten::native_layer_norm',
        'aten::native_layer_norm_backward',
    ),
    'copies': (
        'aten::copy_',
        'aten::cat',
        'aten::clone',
        'aten::index_select',
        'aten::embedding_dense_backward',
    ),
}


def widths(dim, multiple):
    "The SwiGLU hidden widths of our token and channel MLPs."
    return swiglu_width(LENGTH, 4.0, multiple), swiglu_width(dim, 4.0, multiple)


def ours(dim, multiple):
    "Our TRM-MLP with its moving average, its loss and AdamW: a function of one training step."
    model = EMA(TRM(d=dim, layers=2, n=6, T=3, prefix=PREFIX, multiple=multiple), 0.999)
    loss_fn = DeepSupervision(max_steps=16, loss='softmax')
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1.0)

    def step(x, y):
        loss, _ = loss_fn(model, (x, y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return model.model, step


def theirs(dim, multiple):
    "lucidrains' TinyRecursiveModel with its MLP-mixer at our widths x 1.5, its EMA and AdamW."
    token, channel = (round(1.5 * w) for w in widths(dim, multiple))
    net = MLPMixer1D(
        dim=dim,
        depth=2,
        seq_len=LENGTH,
        expansion_factor=token / dim,
        expansion_factor_token=channel / dim,
    )
    got = (net[0][0].fn[0].out_channels, net[0][1].fn[0].out_features)
    assert got == (token, channel), f'their hidden widths {got}, not {(token, channel)}'
    model = TinyRecursiveModel(
        dim=dim,
        num_tokens=TOKENS,
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
    "({name: the median seconds of a step}, {name: every time}): timed in turns, order alternating."
    times = {k: [] for k in steps}
    for f in steps.values():  # a warm-up step each
        f(x, y)
    names = list(steps)
    for i in range(repeats):
        for k in names if i % 2 == 0 else names[::-1]:
            t0 = time.perf_counter()
            steps[k](x, y)
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}, times


def profile(step, x, y, top=10):
    "Where a step spends its time: {total_s, by_kind: {kind: share}, top: [{op, self_s, share}]}."
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p:
        step(x, y)
    rows = sorted(p.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows)
    kind_of = {op: kind for kind, ops in KINDS.items() for op in ops}
    by_kind = {}
    for e in rows:
        kind = kind_of.get(e.key, 'other (dispatch, views, autograd, Python)')
        by_kind[kind] = by_kind.get(kind, 0.0) + e.self_cpu_time_total / total
    return dict(
        total_s=round(total / 1e6, 3),
        by_kind={k: round(v, 3) for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])},
        top=[
            dict(
                op=e.key,
                self_s=round(e.self_cpu_time_total / 1e6, 4),
                share=round(e.self_cpu_time_total / total, 3),
                calls=e.count,
            )
            for e in rows[:top]
        ],
    )


def compiled_ours(dim, multiple, x, y):
    "(our step with each layer under torch.compile, the seconds of its first two steps)."
    model, step = ours(dim, multiple)
    for layer in model.layers:
        layer.forward = torch.compile(layer.forward, dynamic=False)
    t0 = time.perf_counter()
    step(x, y)  # compiles with gradient and without
    step(x, y)
    return step, time.perf_counter() - t0


def run_config(name, repeats, compile_too=False):
    "One configuration's record: its settings, parameters, FLOPs, times, ratio and profiles."
    c = CONFIGS[name]
    torch.manual_seed(0)
    x = torch.randint(0, TOKENS, (c['batch'], CELLS))
    y = torch.randint(0, 9, (c['batch'], CELLS))
    mine, my_step = ours(c['dim'], c['multiple'])
    other, their_step = theirs(c['dim'], c['multiple'])
    steps = {'ours': my_step, 'theirs': their_step}
    extra = {}
    if compile_too:
        steps['ours-compiled'], seconds = compiled_ours(c['dim'], c['multiple'], x, y)
        extra['compile_s'] = round(seconds, 1)
    median, all_times = time_both(steps, x, y, repeats)
    token, channel = widths(c['dim'], c['multiple'])
    return dict(
        config=name,
        dim=c['dim'],
        batch=c['batch'],
        layers=2,
        n=6,
        T=3,
        positions=LENGTH,
        cells=CELLS,
        input_tokens=TOKENS,
        hidden=dict(
            ours=dict(token=token, channel=channel, kind='SwiGLU'),
            theirs=dict(token=round(1.5 * token), channel=round(1.5 * channel), kind='GELU'),
        ),
        params=dict(
            ours=sum(p.numel() for p in mine.parameters()),
            theirs=sum(p.numel() for p in other.parameters()),
        ),
        flops=dict(ours=flops(my_step, x, y), theirs=flops(their_step, x, y)),
        step_s={k: round(v, 4) for k, v in median.items()},
        all_step_s={k: [round(t, 4) for t in v] for k, v in all_times.items()},
        ratio=round(median['ours'] / median['theirs'], 3),
        ratios={k: round(v / median['theirs'], 3) for k, v in median.items()},
        fastest_ratios={
            k: round(min(v) / min(all_times['theirs']), 3) for k, v in all_times.items()
        },
        **extra,
        profile=dict(ours=profile(my_step, x, y), theirs=profile(their_step, x, y)),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--out', default='nbs/results/sudoku/trm_speed.json')
    p.add_argument('--repeats', type=int, default=7)
    p.add_argument('--configs', default=','.join(CONFIGS))
    p.add_argument(
        '--compile', action='store_true', help='also time ours with its layers under torch.compile'
    )
    args = p.parse_args()
    torch.set_num_threads(1)
    results = []
    for name in args.configs.split(','):
        rec = run_config(name, args.repeats, args.compile)
        results.append(rec)
        print(json.dumps({k: rec[k] for k in ('config', 'step_s', 'ratios', 'flops')}), flush=True)
    env = environment('cpu')
    env.update(
        tiny_recursive_model=version('tiny-recursive-model'),
        ema_pytorch=version('ema-pytorch'),
        gpu=torch.cuda.is_available(),
        load_average=[round(v, 2) for v in os.getloadavg()],
    )
    out = dict(
        benchmark='one TRM training step: ours (ttc_nb.sudoku.trm) against tiny-recursive-model',
        target='ours at most 0.7 times its time',
        threads=1,
        repeats=args.repeats,
        timing='interleaved, the order alternating; medians',
        differences=DIFFERENCES,
        results=results,
        env=env,
    )
    save_json(out, args.out)


if __name__ == '__main__':
    main()
