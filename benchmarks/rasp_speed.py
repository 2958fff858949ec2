"""Time of the RASP interpreter on the sort program of the authors' slides, on a 100-token input. Writes JSON.

Three figures, each the median of --reps runs: parsing and building the program's graph, evaluating the built graph on
the input, and both together (what `ttc rasp` does). Target: evaluation in under 50 ms.
Usage: python benchmarks/rasp_speed.py [--out nbs/results/rasp/speed.json] [--reps 50] [--length 100]
"""
import argparse, statistics, time
import numpy as np
from ttc_nb.rasp_lang import Program, SORT
from ttc_nb.files import save_json
from ttc_nb.runs import environment


def median_s(f, reps):
    "Median seconds of `f` over `reps` calls, after one warm-up call."
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
    return statistics.median(times)

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--out', default='nbs/results/rasp/speed.json')
    p.add_argument('--reps', type=int, default=50); p.add_argument('--length', type=int, default=100)
    args = p.parse_args()
    xs = '§' + ''.join(np.random.default_rng(0).choice(list('abcdefghijklmnopqrstuvwxyz'), args.length - 1))
    program = Program(SORT)
    assert program(xs, 'sort')['sort'] == ['§'] + sorted(xs[1:])
    build, evaluate = median_s(lambda: Program(SORT), args.reps), median_s(lambda: program(xs, 'sort'), args.reps)
    both = median_s(lambda: Program(SORT)(xs, 'sort'), args.reps)
    res = dict(benchmark="RASP interpreter: the slides' sort program on one input", tokens=args.length, reps=args.reps,
               build_ms=round(1e3 * build, 3), evaluate_ms=round(1e3 * evaluate, 3), build_and_evaluate_ms=round(1e3 * both, 3),
               target_ms=50, met=both < 0.05, env=environment('cpu'))
    save_json(res, args.out)
    print(f"sort on {args.length} tokens: build {res['build_ms']:.2f} ms, evaluate {res['evaluate_ms']:.2f} ms, "
          f"both {res['build_and_evaluate_ms']:.2f} ms (target 50 ms)\nwrote {args.out}")

if __name__ == '__main__': main()
