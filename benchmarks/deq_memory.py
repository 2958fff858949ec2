"""Training time per update and peak training memory of the DEQ network and the unrolled RRN.

Both are measured against the number of iterations.

For each number of iterations n (default 8, 16, 32, 64), with the network, batch and width of the
`sudoku-deq` preset (default `cpu`, the same as `sudoku-rrn`'s `cpu` network):
- `deq`: the DEQ network's update with the implicit backward pass, its forward and backward solves
  held to exactly n iterations (tolerance 0), so that the cost is that of n iterations whatever the
  weights;
- `rrn`: the RRN's update with the loss at every one of n steps, all n backpropagated through (the
  paper's loss);
both with AdamW, on random puzzles (the cost of a step does not depend on the digits).
Each measurement runs in a fresh subprocess. Memory: on CUDA `torch.cuda.max_memory_allocated`
during one update, less what was allocated before it; on CPU the peak resident set size (VmHWM,
reset through /proc/self/clear_refs) during one update, less the resident size before it, with glibc
told to return every allocation over 64 KiB to the system (MALLOC_MMAP_THRESHOLD_), so that the
resident size follows what is allocated. Time: the median of `--repeats` updates after one untimed
update, in a subprocess of its own with the default allocator (returning memory to the system makes
every update slower). Writes JSON.
Usage: python benchmarks/deq_memory.py [--iters 8,16,32,64] [--preset cpu] [--repeats 5]
                                       [--threads 2] [--device cpu] [--out ...]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _rss_kib(field):
    return int(
        next(line.split()[1] for line in open('/proc/self/status') if line.startswith(field + ':'))
    )


# Seconds: the median of `repeats`; 0: not timed.
def child(kind, n, preset, repeats, device):
    "One measurement, in this process: seconds per update, peak bytes of one update."
    import torch
    from ttc_nb.core.losses import stepwise_cross_entropy
    from ttc_nb.runs.registry import get_experiment
    from ttc_nb.sudoku.rrn import RRN
    from ttc_nb.sudoku.deq import DEQRRN, deq_loss

    cfg = get_experiment('sudoku-deq').config(preset)
    torch.manual_seed(0)
    args = (tuple(cfg.box), cfg.hidden, cfg.mlp_layers, cfg.embed, cfg.positions)
    if kind == 'deq':
        model = DEQRRN(*args, method=cfg.method, tol=0.0)
        loss = deq_loss('implicit', iters=n, back_iters=n)
    else:
        model = RRN(*args)
        loss = lambda m, b: (
            stepwise_cross_entropy(m(b[0], steps=n), b[1]),
            {},
        )  # (loss, logs), as deq_loss returns
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    k = model.n
    batch = (
        torch.randint(0, k + 1, (cfg.batch_size, k * k), device=device),
        torch.randint(0, k, (cfg.batch_size, k * k), device=device),
    )

    def update():
        loss(model, batch)[0].backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device.type == 'cuda':
            torch.cuda.synchronize(device)

    update()  # optimiser state and gradients exist from here on
    if device.type == 'cuda':
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        update()
        peak = torch.cuda.max_memory_allocated(device) - before
    else:
        with open('/proc/self/clear_refs', 'w') as f:
            f.write('5')  # reset the peak resident size
        before = _rss_kib('VmRSS')
        update()
        peak = (_rss_kib('VmHWM') - before) * 1024
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        update()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) if times else 0.0, peak


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        '--iters',
        default='8,16,32,64',
        help='comma-separated numbers of iterations (default 8,16,32,64)',
    )
    p.add_argument(
        '--preset',
        default='cpu',
        help='sudoku-deq preset whose network and batch to use (default cpu)',
    )
    p.add_argument(
        '--repeats',
        type=int,
        default=5,
        help='timed updates, of which the median is kept (default 5)',
    )
    p.add_argument(
        '--threads', type=int, default=0, help='torch CPU threads (default: torch chooses)'
    )
    p.add_argument('--device', default=None, help='default: TTC_DEVICE, else cuda, mps or cpu')
    p.add_argument('--out', default='nbs/results/deq/memory.json')
    p.add_argument('--child', nargs=2, metavar=('KIND', 'N'), help=argparse.SUPPRESS)
    a = p.parse_args()
    import torch
    from ttc_nb.train.files import save_json
    from ttc_nb.train.fit import default_device
    from ttc_nb.runs.provenance import environment

    if a.threads:
        torch.set_num_threads(a.threads)
    device = torch.device(a.device) if a.device else default_device()
    if a.child:
        s, peak = child(a.child[0], int(a.child[1]), a.preset, a.repeats, device)
        print(json.dumps(dict(s_per_update=s, peak_bytes=peak)))
        return

    def run(kind, n, repeats, env):
        cmd = [
            sys.executable,
            __file__,
            '--child',
            kind,
            str(n),
            '--preset',
            a.preset,
            '--repeats',
            str(repeats),
            '--threads',
            str(a.threads),
            '--device',
            str(device),
        ]
        return json.loads(
            subprocess.run(
                cmd, env=env, capture_output=True, text=True, check=True
            ).stdout.splitlines()[-1]
        )

    results = []
    for n in map(int, a.iters.split(',')):
        for kind in ('deq', 'rrn'):
            mem = run(kind, n, 0, os.environ | {'MALLOC_MMAP_THRESHOLD_': '65536'})
            s = run(kind, n, a.repeats, os.environ)['s_per_update']
            results.append(
                dict(
                    model=kind,
                    iterations=n,
                    s_per_update=round(s, 4),
                    peak_mib=round(mem['peak_bytes'] / 2**20, 1),
                )
            )
            print(results[-1], flush=True)
    measure = (
        'torch.cuda.max_memory_allocated during one update'
        if device.type == 'cuda'
        else 'peak RSS (VmHWM) of a subprocess during one update, less its RSS before'
    )
    save_json(
        dict(
            preset=a.preset,
            memory=measure,
            repeats=a.repeats,
            threads=torch.get_num_threads(),
            results=results,
            env=environment(device),
        ),
        Path(a.out),
    )
    print('wrote', a.out)


if __name__ == '__main__':
    main()
