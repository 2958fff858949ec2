"""Compile times of tracr's library programs: tracr's compiler beside ours through tracr's API.

Each program of tests/tracr_record.py is compiled at each length of `LENGTHS`, `REPEATS` times, by
tracr's `compiling.compile_rasp_to_model` (in tracr's own virtual environment, see
benchmarks/tracr_compare.py) or by ours, `ttc_nb.rasp.tracr_compiler.compile_rasp_to_model`, from
the same program text and vocabulary. The first compile of a program is the one a user waits for;
tracr's later ones reuse XLA's compiled initialisers and are faster. Each compile's wall-clock and
CPU seconds (of this process, all its threads) are kept: on a machine shared with other work the
CPU seconds are the fairer figure. Writes (merging the two sides) nbs/results/rasp/tracr/speed.json.

    OMP_NUM_THREADS=1 PYTHONPATH=/work/tracr-src:tests /work/tracrvenv/bin/python \\
        benchmarks/tracr_api_speed.py --side tracr
    OMP_NUM_THREADS=1 PYTHONPATH=.:tests python benchmarks/tracr_api_speed.py --side ours
"""

import os

os.environ.setdefault(
    'XLA_FLAGS', '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'
)
import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / 'tests'))
from tracr_record import PROGRAMS  # noqa: E402

LENGTHS, REPEATS = (5, 8), 3
OUT = Path('nbs/results/rasp/tracr/speed.json')


def side(name: str):
    "(rasp, lib, compile function, versions) of tracr or of ours."
    if name == 'tracr':
        import jax
        from tracr.compiler import compiling, lib
        from tracr.rasp import rasp

        return rasp, lib, compiling.compile_rasp_to_model, dict(jax=jax.__version__)
    import torch
    from ttc_nb.rasp import tracr, tracr_compiler

    torch.set_num_threads(1)
    return (
        tracr,
        tracr_compiler,
        tracr_compiler.compile_rasp_to_model,
        dict(torch=torch.__version__),
    )


def cpu() -> str:
    "The CPU's model name."
    with open('/proc/cpuinfo') as f:
        return next(line.split(':', 1)[1].strip() for line in f if line.startswith('model name'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--side', choices=['tracr', 'ours'], required=True)
    a = ap.parse_args()
    rasp, lib, compile_, versions = side(a.side)
    compile_(lib.make_hist(), {'a', 'b'}, 4, compiler_bos='BOS')  # imports and first-call costs
    rows = {}
    for name, (make, vocab) in PROGRAMS.items():
        rows[name] = {}
        for L in LENGTHS:
            times, cpu_times = [], []
            for _ in range(REPEATS):
                program = make(rasp, lib, L)
                t, c = time.perf_counter(), time.process_time()
                try:
                    compile_(program, set(vocab), L, compiler_bos='BOS')
                except Exception as e:  # a refusal is a result: its message is kept
                    rows[name][L] = dict(failed=f'{type(e).__name__}: {str(e)[:300]}')
                    break
                times.append(round(time.perf_counter() - t, 4))
                cpu_times.append(round(time.process_time() - c, 4))
            else:
                rows[name][L] = dict(seconds=times, cpu_seconds=cpu_times)
            print(a.side, name, L, rows[name][L], flush=True)
    first = {
        (L, k): [r[L][k][0] for r in rows.values() if k in r[L]]
        for L in LENGTHS
        for k in ('seconds', 'cpu_seconds')
    }
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    out[a.side] = dict(
        hardware=f'1 thread of a {os.cpu_count()}-core {cpu()}, no GPU',
        python=platform.python_version(),
        **versions,
        repeats=REPEATS,
        programs=rows,
        median_first_s={L: round(statistics.median(first[L, 'seconds']), 3) for L in LENGTHS},
        median_first_cpu_s={
            L: round(statistics.median(first[L, 'cpu_seconds']), 3) for L in LENGTHS
        },
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + '\n')


if __name__ == '__main__':
    main()
