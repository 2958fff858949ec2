"""Record tracr's evaluator on every program of tracr's library, for tests/test_rasp_tracr.py.

tracr: Lindner et al. 2023, "Tracr: Compiled Transformers as a Laboratory for Interpretability",
arXiv 2301.05062; repository google-deepmind/tracr, commit 9ce2b8c. It runs in a virtual environment
of its own (jax and haiku; see benchmarks/tracr_compare.py for how it was made):

    OMP_NUM_THREADS=1 PYTHONPATH=/work/tracr-src:tests /work/tracrvenv/bin/python \\
        tests/tracr_record.py --tracr-commit 9ce2b8c82b6ba10e62e86cf6f390e7536d4fd2cd

Each program of tracr's compiler/lib.py (`PROGRAMS`: how it is called, over which tokens) is
evaluated by tracr's `rasp.evaluate` on `N` inputs per length of `LENGTHS`, drawn by `inputs` from a
fixed seed: half of exactly that length, half of a length from 1 to it. The file keeps, per program
and length, a SHA-256 of the outputs of each block of `BLOCK` inputs, written by `canonical`, and a
few sample rows at the short lengths; not the outputs themselves. `CASES` are programs that tracr's
compiler refuses or compiles wrongly, recorded the same way at `CASE_LENGTHS`. This file needs no
tracr to be imported: the tests import `ALL`, `inputs`, `canonical` and `digest` from it, and run
the same table on our API.
"""

import argparse
import hashlib
import json
import platform
import random
import time
from datetime import datetime, timezone
from pathlib import Path

LENGTHS = (5, 8, 20, 40, 64)  # tracr's tests use 5; it compiles to 40 or 64 (tracr.json)
N, BLOCK = 1000, 100  # inputs per length; inputs per digest
OUT = Path(__file__).parent / 'tracr_reference.json'
NUMBERS = [1, 2, 3, 4]

# name: (the program at max_seq_len L, from modules `rasp` and `lib` with tracr's names; tokens)
PROGRAMS = {
    'length': (lambda rasp, lib, L: lib.make_length(), 'abcd'),
    'reverse': (lambda rasp, lib, L: lib.make_reverse(rasp.tokens), 'abcd'),
    'pair_balance': (lambda rasp, lib, L: lib.make_pair_balance(rasp.tokens, '(', ')'), '()'),
    'shuffle_dyck': (lambda rasp, lib, L: lib.make_shuffle_dyck(['()']), '()'),
    'shuffle_dyck2': (lambda rasp, lib, L: lib.make_shuffle_dyck2(), '(){}'),
    'hist': (lambda rasp, lib, L: lib.make_hist(), 'abcd'),
    'sort_unique': (lambda rasp, lib, L: lib.make_sort_unique(rasp.tokens, rasp.tokens), NUMBERS),
    'sort': (
        lambda rasp, lib, L: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=L, min_key=1),
        NUMBERS,
    ),
    'sort_freq': (lambda rasp, lib, L: lib.make_sort_freq(max_seq_len=L), NUMBERS),
    'frac_prevs': (lambda rasp, lib, L: lib.make_frac_prevs(rasp.tokens == 'a'), 'abcd'),
    'shift_by': (lambda rasp, lib, L: lib.shift_by(2, rasp.tokens), 'abcd'),
    'detect_pattern': (lambda rasp, lib, L: lib.detect_pattern(rasp.tokens, 'abc'), 'abcd'),
    'count_less_freq': (lambda rasp, lib, L: lib.make_count_less_freq(2), 'abcd'),
    'count': (lambda rasp, lib, L: lib.make_count(rasp.tokens, 'a'), 'abcd'),
    'nary_sequencemap': (
        lambda rasp, lib, L: lib.make_nary_sequencemap(
            lambda t, i, a: i % 3 if a else t, rasp.tokens, rasp.indices, rasp.tokens == 'a'
        ),
        'abcd',
    ),
}

# the programs of tracr's validating.py and of its issues #6, #14 and #25: what tracr refuses or
# compiles wrongly (nbs/29_rasp.tracr.ipynb); name: (program, tokens, lengths)
CASE_LENGTHS = (5, 8, 20)
CASES = {
    'numerical_select': (
        lambda rasp, lib, L: rasp.SelectorWidth(
            rasp.Select(
                *[rasp.numerical(lib.make_frac_prevs(rasp.tokens == 'a'))] * 2, rasp.Comparison.LEQ
            )
        ),
        'ab',
    ),
    'categorical_mean': (
        lambda rasp, lib, L: rasp.Aggregate(
            rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.indices
        ),
        'abc',
    ),
    'categorical_mean_of_tokens': (
        lambda rasp, lib, L: rasp.Aggregate(
            rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LEQ), rasp.tokens
        ),
        'abc',
    ),
    'numerical_mean': (
        lambda rasp, lib, L: rasp.numerical(
            rasp.Aggregate(
                rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
                rasp.numerical(rasp.Map(lambda t: {'a': 1, 'b': 2, 'c': 5}[t], rasp.tokens)),
                default=0,
            )
        ),
        'abc',
    ),
    'nonlinear_map': (
        lambda rasp, lib, L: rasp.numerical(
            rasp.SequenceMap(
                lambda x, y: x * y,
                rasp.numerical(lib.make_frac_prevs(rasp.tokens == 'a')),
                rasp.numerical(lib.make_frac_prevs(rasp.tokens == 'b')),
            )
        ),
        'abc',
    ),
    'sum': (lambda rasp, lib, L: running_sum(rasp), 'abc'),
    'selector_width_lt': (
        lambda rasp, lib, L: rasp.SelectorWidth(
            rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)
        ),
        'abcd',
    ),
    'aggregate_of_none': (
        lambda rasp, lib, L: issue_25(rasp),
        NUMBERS,
    ),
}


def running_sum(rasp):
    "tracr #6, a sum: per position, the sum of the tokens' values so far, as mean times width."
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    value = rasp.numerical(rasp.Map(lambda t: {'a': 1, 'b': 2, 'c': 5}[t], rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(upto, value, default=0))
    return rasp.numerical(rasp.SequenceMap(lambda m, w: m * w, mean, rasp.SelectorWidth(upto)))


def issue_25(rasp):
    "tracr #25: an aggregate of an aggregate whose default None fills some positions."
    pick = rasp.Select(rasp.indices, rasp.tokens, rasp.Comparison.EQ)
    return rasp.Aggregate(pick, rasp.Aggregate(pick, rasp.indices))


ALL = PROGRAMS | CASES


def lengths(name: str) -> tuple:
    "The lengths program `name` is recorded at: `LENGTHS`, or `CASE_LENGTHS` for most cases."
    return LENGTHS if name in PROGRAMS or name == 'selector_width_lt' else CASE_LENGTHS


def inputs(name: str, L: int, n: int = N) -> list:
    "The `n` inputs of program `name` at length `L`: half of L tokens, half of 1 to L tokens."
    rng, vocab = random.Random(f'{name} {L}'), list(ALL[name][1])
    lengths = [L if i < n // 2 else rng.randint(1, L) for i in range(n)]
    return [[rng.choice(vocab) for _ in range(k)] for k in lengths]


def canonical(row) -> str:
    "An output as text: numbers (bools too) as floats to 9 decimals, None, strings; or 'error'."
    if row == 'error':
        return '"error"'
    number = lambda x: isinstance(x, (bool, int, float))
    return json.dumps([round(float(x), 9) if number(x) else x for x in row])


def digest(rows: list) -> str:
    "The first 16 hex digits of SHA-256 over the canonical outputs `rows`, one line each."
    return hashlib.sha256('\n'.join(map(canonical, rows)).encode()).hexdigest()[:16]


def outputs(evaluate, program, xs: list) -> list:
    "The evaluator's output on each input of `xs`; 'error' where it raises."
    out = []
    for x in xs:
        try:
            out.append(list(evaluate(program, x)))
        except Exception:
            out.append('error')
    return out


def record(rasp, lib, names) -> dict:
    "{program: {length: digests, samples, seconds}} of tracr's evaluator."
    rows = {}
    for name in names:
        rows[name] = {}
        for L in lengths(name):
            xs, t = inputs(name, L), time.perf_counter()
            out = outputs(rasp.evaluate, ALL[name][0](rasp, lib, L), xs)
            rows[name][L] = dict(
                digests=[digest(out[i : i + BLOCK]) for i in range(0, len(xs), BLOCK)],
                samples=[[x, o] for x, o in zip(xs[N // 2 : N // 2 + 3], out[N // 2 :])] * (L <= 8),
                errors=sum(o == 'error' for o in out),
                seconds=round(time.perf_counter() - t, 2),
            )
            print(name, L, rows[name][L]['seconds'], 's', flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--tracr-commit', required=True)
    ap.add_argument('--programs', nargs='*', default=list(ALL))
    a = ap.parse_args()
    from tracr.rasp import rasp
    from tracr.compiler import lib

    old = json.loads(OUT.read_text())['programs'] if OUT.exists() else {}
    meta = dict(
        tracr_commit=a.tracr_commit,
        python=platform.python_version(),
        date=datetime.now(timezone.utc).strftime('%Y-%m-%d'),
        lengths=list(LENGTHS),
        inputs_per_length=N,
        block=BLOCK,
        canonical=canonical.__doc__,
    )
    programs = old | record(rasp, lib, a.programs)
    OUT.write_text(json.dumps(dict(meta=meta, programs=programs), indent=1) + '\n')


if __name__ == '__main__':
    main()
