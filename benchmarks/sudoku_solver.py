"""Seconds per solve of the exact Sudoku solver on the hardest known 9x9 puzzles.

The puzzles are `ttc_nb.sudoku.puzzles.HARD`. Each puzzle is checked to have exactly one solution,
then solved `--reps` times; every solution is checked with `is_solution` (rows, columns and boxes
hold each digit once, the clues are kept). Writes JSON with the median and the longest time per
puzzle.
Usage: python benchmarks/sudoku_solver.py [--out nbs/results/sudoku/solver_bench.json] [--reps 5]
"""

import argparse
import statistics
import time
from ttc_nb.sudoku.puzzles import HARD, solve_board, count_solutions, is_solution, parse_board
from ttc_nb.train.files import save_json
from ttc_nb.runs.provenance import environment


def measure(name, puzzle, reps):
    "Median and longest seconds of `reps` solves of `puzzle`, each solution verified."
    if count_solutions(puzzle) != 1:
        raise SystemExit(f'{name} does not have exactly one solution')
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        s = solve_board(puzzle)
        times.append(time.perf_counter() - t0)
        if not is_solution(s, puzzle):
            raise SystemExit(f'wrong solution for {name}')
    return dict(
        name=name,
        puzzle=puzzle,
        givens=int((parse_board(puzzle) > 0).sum()),
        reps=reps,
        median_s=round(statistics.median(times), 5),
        max_s=round(max(times), 5),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--out', default='nbs/results/sudoku/solver_bench.json')
    p.add_argument('--reps', type=int, default=5)
    args = p.parse_args()
    rows = [measure(name, puzzle, args.reps) for name, puzzle in HARD.items()]
    res = dict(
        benchmark=(
            'exact Sudoku solver (singles + depth-first search on bitmasks), seconds per solve'
        ),
        results=rows,
        max_s=max(r['max_s'] for r in rows),
        env=environment('cpu'),
    )
    save_json(res, args.out)
    for r in rows:
        print(
            f'{r["name"]:>18}: {r["givens"]} givens, '
            f'median {1e3 * r["median_s"]:6.1f} ms, max {1e3 * r["max_s"]:6.1f} ms'
        )
    print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
