"""Training throughput of the recurrent relational network: puzzles per second, forward + backward + optimiser step.

For the network and training of each `sudoku-rrn` preset (by default `cpu` and `gpu`): its width, depth, training
steps and batch size, trained with the core's `fit` (AdamW, and bfloat16 autocast on CUDA) on the current device. The
puzzles are random digits: the cost of a step does not depend on them, so no dataset is built. Writes JSON.
Usage: python benchmarks/rrn_throughput.py [--presets cpu,gpu] [--updates 10] [--device cuda] [--threads N] [--out ...]
"""
import argparse, time
import torch
from ttc_nb.core import default_device, environment, fit, get_experiment, save_json, stepwise_cross_entropy
from ttc_nb.rrn import RRN

def measure(preset, args, device):
    "Seconds per update and puzzles per second of `preset`'s network, after `args.warmup` updates."
    cfg = get_experiment('sudoku-rrn').config(preset)
    torch.manual_seed(0)
    model = RRN(cfg.box, cfg.hidden, cfg.mlp_layers, cfg.embed, cfg.positions)
    n = model.n
    batch = (torch.randint(0, n + 1, (cfg.batch_size, n * n)), torch.randint(0, n, (cfg.batch_size, n * n)))
    loss = lambda m, b: stepwise_cross_entropy(m(b[0], steps=cfg.train_steps), b[1])
    train = lambda updates: fit(model, lambda gen: batch, loss, updates, lr=cfg.lr, wd=cfg.wd, clip=cfg.clip,
                                log_every=updates + 1, device=device, quiet=True)
    train(args.warmup)
    if device.type == 'cuda': torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    train(args.updates)                  # fit reads the loss every update, so the device is in step with the clock
    s = (time.perf_counter() - t0) / args.updates
    return dict(preset=preset, box=list(cfg.box), hidden=cfg.hidden, mlp_layers=cfg.mlp_layers, train_steps=cfg.train_steps,
                batch_size=cfg.batch_size, weights=sum(p.numel() for p in model.parameters()), updates=args.updates,
                s_per_update=round(s, 5), puzzles_per_s=round(cfg.batch_size / s, 2))

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--presets', default='cpu,gpu', help='comma-separated presets of sudoku-rrn (default cpu,gpu)')
    p.add_argument('--updates', type=int, default=10, help='timed updates per preset (default 10)')
    p.add_argument('--warmup', type=int, default=2, help='untimed updates first (default 2)')
    p.add_argument('--device', default=None, help='default: TTC_DEVICE, else cuda, mps or cpu')
    p.add_argument('--threads', type=int, default=0, help='torch CPU threads (default: torch chooses)')
    p.add_argument('--out', default='nbs/results/rrn/throughput.json')
    args = p.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    device = torch.device(args.device or default_device())
    rows = []
    for preset in args.presets.split(','):
        rows.append(r := measure(preset, args, device))
        print(f"{preset}: hidden {r['hidden']}, {r['train_steps']} steps, batch {r['batch_size']}: "
              f"{r['s_per_update']:.3f} s per update, {r['puzzles_per_s']:.1f} puzzles/s", flush=True)
    save_json(dict(benchmark='sudoku-rrn training throughput: forward, backward and optimiser step per batch',
                   device=str(device), threads=torch.get_num_threads(), results=rows,
                   env=environment(device)), args.out)
    print(f'wrote {args.out}')

if __name__ == '__main__': main()
