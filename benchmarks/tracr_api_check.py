"""tracr's library on our tracr-style API, interpreted and compiled, against tracr's evaluator.

For each program and case of tests/tracr_record.py (`ALL`) and each length L it was recorded at,
the program is built with ttc_nb.rasp.tracr in place of tracr's modules, evaluated by our
interpreter on the 1,000 inputs tracr's evaluator was recorded on (tests/tracr_reference.json), and
compiled for inputs of 1 to L tokens and run on them. A block of 100 inputs agrees when the SHA-256
of its canonical outputs equals tracr's; an input is exact when the compiled output equals our
interpreter's. At lengths 40 and 64 the compiled model may run on the first `--most` inputs only
(a model of millions of weights runs 1,000 inputs of 64 tokens in minutes on a shared CPU). Writes
nbs/results/rasp/tracr/exact.json, keeping the rows of programs not run.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/tracr_api_check.py [--programs P] [--most 200]
"""

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
import torch
from ttc_nb.errors import RASPError
from ttc_nb.rasp import tracr as rasp, tracr_compiler as compiling
from ttc_nb.runs.provenance import cpu_name

sys.path.insert(0, str(Path(__file__).parents[1] / 'tests'))
from tracr_record import ALL, BLOCK, OUT as REFERENCE  # noqa: E402
from tracr_record import lengths, inputs, digest, outputs  # noqa: E402

OUT = Path('nbs/results/rasp/tracr/exact.json')


def compiled_outputs(m, xs: list) -> list:
    "The compiled model's output on each input, 100 at a time; 'error' where it refuses one."
    out = []
    for i in range(0, len(xs), 100):
        try:
            out += [o.tolist() for o in m.run(xs[i : i + 100])]
        except RASPError:  # a refusal names one input: run them one by one
            for x in xs[i : i + 100]:
                try:
                    out.append(m.run([x])[0].tolist())
                except RASPError:
                    out.append('error')
    return out


def agree(rows: list, want: list) -> int:
    "How many blocks of `rows` have tracr's digest."
    return sum(digest(rows[i : i + BLOCK]) == d for i, d in zip(range(0, len(rows), BLOCK), want))


def check(name: str, L: int, reference: dict, most: int) -> dict:
    "One program at one length: our interpreter's and our compiled model's blocks and inputs."
    make, vocab = ALL[name]
    program, xs, want = make(rasp, compiling, L), inputs(name, L), reference['digests']
    t = time.perf_counter()
    interpreted = outputs(rasp.evaluate, program, xs)
    row = dict(
        length=L,
        blocks=len(want),
        interpreter_blocks=agree(interpreted, want),
        interpreter_s=round(time.perf_counter() - t, 2),
    )
    t = time.perf_counter()
    try:
        m = compiling.compile_rasp_to_model(program, set(vocab), L, compiler_bos='BOS')
    except RASPError as e:
        return row | dict(refused=str(e))
    row |= dict(compile_s=round(time.perf_counter() - t, 3), heads=m.heads, d_model=m.d_model)
    row['params'] = sum(p.numel() for p in m.parameters())
    t, n = time.perf_counter(), min(len(xs), most if L >= 40 else len(xs))
    compiled = compiled_outputs(m, xs[:n])
    row |= dict(
        compiled_blocks=agree(compiled, want),
        compiled_exact=sum(a == b for a, b in zip(compiled, interpreted)),
        inputs=n,
        run_s=round(time.perf_counter() - t, 2),
    )
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--programs', nargs='*', default=list(ALL))
    ap.add_argument('--lengths', nargs='*', type=int, help='default: those recorded')
    ap.add_argument(
        '--most',
        type=int,
        default=1000,
        help='inputs run compiled at lengths 40 and 64 (first ones)',
    )
    a = ap.parse_args()
    reference = json.loads(REFERENCE.read_text())
    old = json.loads(OUT.read_text())['programs'] if OUT.exists() else {}
    rows = dict(old)
    compiling.compile_rasp_to_model(
        compiling.make_hist(), 'ab', 4
    )  # the first compile pays for imports
    for name in a.programs:
        runs = {r['length']: r for r in rows.get(name, [])}
        for L in a.lengths or lengths(name):
            runs[L] = check(name, L, reference['programs'][name][str(L)], a.most)
            print(name, json.dumps(runs[L]), flush=True)
            rows[name] = [runs[k] for k in sorted(runs)]
            write(rows, reference['meta'])


def write(rows: dict, reference: dict):
    "Write the rows so far, with where and how they were made."
    commit = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout
    meta = dict(
        tracr_commit=reference['tracr_commit'],
        hardware=f'{cpu_name()}, no GPU',
        threads=torch.get_num_threads(),
        torch=torch.__version__,
        python=platform.python_version(),
        commit=commit.strip()[:7],
        inputs_per_length=reference['inputs_per_length'],
        block=reference['block'],
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(dict(meta=meta, programs=rows), indent=1) + '\n')


if __name__ == '__main__':
    main()
