"""Start-up time of `ttc rasp` and `ttc --help`, and of the reference RASP interpreter's REPL.

All are measured in one run. Writes JSON.

Each command is run --reps times, the three interleaved so that the machine's load falls on all
alike, and timed from start to exit (as hyperfine does): `ttc rasp -` on a one-line program,
`ttc --help`, and the reference REPL (Weiss, Goldberg and Yahav 2021, "Thinking Like
Transformers", arXiv 2106.06981; tech-srl/RASP at commit 61dde62) reading `tokens;`.
The target is ours: `ttc rasp` and `ttc --help` in under 0.5 s. The machine's one-minute load
average before and after is kept beside the times: run it on an idle machine.
Usage: python benchmarks/rasp_startup.py --reference RASP_FOLDER --reference-python PYTHON
                                         [--out nbs/results/rasp/startup.json] [--reps 20]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from ttc_nb.train.files import save_json
from ttc_nb.runs.provenance import environment

PROGRAM = 'x = indices + 1;\n'


def seconds(cmd, stdin, cwd=None) -> float:
    "Wall seconds of one run of `cmd` fed `stdin`, from start to exit; it must succeed."
    t0 = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd)
    dt = time.perf_counter() - t0
    assert r.returncode == 0, (cmd, r.stderr[-500:])
    return dt


def summary(times) -> dict:
    "hyperfine's figures, in seconds."
    return dict(
        mean_s=round(statistics.mean(times), 4),
        stddev_s=round(statistics.stdev(times), 4),
        median_s=round(statistics.median(times), 4),
        min_s=round(min(times), 4),
        max_s=round(max(times), 4),
        runs=len(times),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--reference', required=True, help='the folder of tech-srl/RASP')
    p.add_argument(
        '--reference-python',
        required=True,
        help='a Python with antlr4-python3-runtime==4.9.1 and termcolor',
    )
    p.add_argument('--out', default='nbs/results/rasp/startup.json')
    p.add_argument('--reps', type=int, default=20)
    args = p.parse_args()
    ttc = shutil.which('ttc') or str(Path(sys.executable).parent / 'ttc')
    cases = {
        'ttc rasp -': ([ttc, 'rasp', '-'], PROGRAM, None),
        'ttc --help': ([ttc, '--help'], '', None),
        'reference REPL': (
            [args.reference_python, '-m', 'RASP_support'],
            'tokens;\n',
            args.reference,
        ),
    }
    load_before = os.getloadavg()[0]
    times = {k: [] for k in cases}
    for k, c in cases.items():
        seconds(*c)  # warm the file cache
    for _ in range(args.reps):
        for k, c in cases.items():
            times[k].append(seconds(*c))
    res = dict(
        benchmark=(
            'start-up to exit: ttc rasp on a one-line program, '
            'ttc --help, the reference REPL on one line'
        ),
        program=PROGRAM.strip(),
        reference='tech-srl/RASP at 61dde62',
        target_s=0.5,
        times={k: summary(v) for k, v in times.items()},
        met=all(statistics.mean(times[k]) < 0.5 for k in ('ttc rasp -', 'ttc --help')),
        load_1min=dict(before=round(load_before, 2), after=round(os.getloadavg()[0], 2)),
        env=environment('cpu'),
    )
    save_json(res, args.out)
    for k, v in res['times'].items():
        print(
            f'{k:15} mean {v["mean_s"]:.3f} s ± {v["stddev_s"]:.3f} '
            f'(min {v["min_s"]:.3f}, {v["runs"]} runs)'
        )
    print(f'target 0.5 s: {"met" if res["met"] else "missed"}\nwrote {args.out}')


if __name__ == '__main__':
    main()
