"""Time to build a `sudoku-rrn` preset's puzzle sets from nothing, by one process and by a pool.

The pool spans every core. Each build writes to its own empty temporary cache, so nothing is read
back; the sets of every build are checked to be identical, puzzle for puzzle. Writes JSON.
Usage: python benchmarks/sudoku_build.py [--preset cpu] [--workers 1,0]
                                         [--out nbs/results/sudoku/build_bench.json]
"""

import argparse
import importlib
import tempfile
import time
import torch
from ttc_nb.train.files import save_json
from ttc_nb.runs.provenance import environment
from ttc_nb.runs.registry import get_experiment
from ttc_nb.sudoku.puzzles import worker_count, splits
from ttc_nb.sudoku.task import band

importlib.import_module('ttc_nb.sudoku.experiments')  # registers sudoku-rrn, whose sets are built


def build(cfg, workers):
    "Seconds to build every set of `cfg` in an empty cache with `workers` processes, and the sets."
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        sets = splits(
            cfg.train_size,
            cfg.valid_size,
            cfg.test_size,
            tuple(cfg.givens),
            {b: band(b) for b in cfg.bands},
            seed=cfg.data_seed,
            box=tuple(cfg.box),
            cache_dir=d,
            quiet=True,
            workers=workers,
        )
        return time.perf_counter() - t0, [sets['train'], sets['valid'], *sets['test'].values()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        '--preset', default='cpu', help='preset of sudoku-rrn whose sets are built (default cpu)'
    )
    p.add_argument(
        '--workers',
        default='1,0',
        help='comma-separated process counts, 0 for every core (default 1,0)',
    )
    p.add_argument('--out', default='nbs/results/sudoku/build_bench.json')
    args = p.parse_args()
    cfg = get_experiment('sudoku-rrn').config(args.preset)
    rows, first = [], None
    for w in (int(v) or worker_count() for v in args.workers.split(',')):
        s, sets = build(cfg, w)
        first = first or sets
        same = all(
            torch.equal(a[k], b[k]) for a, b in zip(first, sets) for k in ('puzzles', 'solutions')
        )
        rows.append(
            dict(
                workers=w,
                seconds=round(s, 1),
                puzzles=sum(len(d['puzzles']) for d in sets),
                identical_to_first=same,
            )
        )
        print(
            f'{w} process{"es" if w > 1 else ""}: {s:.1f} s for '
            f'{rows[-1]["puzzles"]} puzzles, identical to the first build: {same}',
            flush=True,
        )
    save_json(
        dict(
            benchmark=(
                'building the puzzle sets of the sudoku-rrn '
                f'{args.preset} preset from an empty cache'
            ),
            preset=args.preset,
            train_size=cfg.train_size,
            valid_size=cfg.valid_size,
            test_size=cfg.test_size,
            givens=list(cfg.givens),
            bands=list(cfg.bands),
            results=rows,
            env=environment('cpu'),
        ),
        args.out,
    )
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
