"""Time building hard puzzle sets (`ttc_nb.sudoku.extreme.hard_set`) from an empty cache.

Builds `--size` puzzles of each of the `cpu-hard` splits' seeds with `--workers` processes, and
writes the seconds, the rate per puzzle, the ratings' spread and each set's fingerprint, with the
hours the `cpu-hard` sets (1,000 training, 100 validation and 1,000 test puzzles) take at that rate.
With `--size 0` it builds those sets whole, at their real sizes, and records their fingerprints:
the checksums a committed seed is checked against.

Usage: python benchmarks/sudoku_hard_build.py [--size 40] [--workers 1] [--out JSON]
"""

import argparse
import json
import os
import tempfile
import time
import torch
from ttc_nb.sudoku.extreme import fingerprint, hard_set
from ttc_nb.sudoku.experiments import HARD_CPU
from ttc_nb.train.files import save_json


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--size', type=int, default=40, help='puzzles per split; 0: the real sizes')
    p.add_argument('--workers', type=int, default=1)
    p.add_argument('--out', default='nbs/results/sudoku/hard_build.json')
    args = p.parse_args()
    torch.set_num_threads(1)
    real = dict(
        train=HARD_CPU['train_size'], valid=HARD_CPU['valid_size'], test=HARD_CPU['test_size']
    )
    sets = []
    with tempfile.TemporaryDirectory() as d:
        for split, size in real.items():
            n = args.size or size
            t0 = time.perf_counter()
            s = hard_set(n, split, seed=0, least=1, cache_dir=d, workers=args.workers)
            sec = time.perf_counter() - t0
            r = s['ratings']
            sets.append(
                dict(
                    split=split,
                    puzzles=n,
                    seconds=round(sec, 1),
                    s_per_puzzle=round(sec / n, 4),
                    fingerprint=fingerprint(s),
                    ratings=dict(min=int(r.min()), median=int(r.median()), max=int(r.max())),
                    givens=dict(min=int(s['givens'].min()), max=int(s['givens'].max())),
                )
            )
            print(json.dumps(sets[-1]), flush=True)
    per = sum(x['seconds'] for x in sets) / sum(x['puzzles'] for x in sets)
    out = dict(
        benchmark='building the cpu-hard sets of our hard Sudoku puzzles from an empty cache',
        workers=args.workers,
        threads=1,
        sets=sets,
        s_per_puzzle=round(per, 4),
        cpu_hard_sets_h=round(per * sum(real.values()) / 3600 / args.workers, 3),
        load_average=[round(v, 2) for v in os.getloadavg()],
    )
    save_json(out, args.out)


if __name__ == '__main__':
    main()
