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

With `--compiled`, it runs tracr's compiled model instead, for the programs named (tracr's column
of the table on nbs/29_rasp.tracr.ipynb, where benchmarks/tracr_compare.py did not run them), on
the recorded inputs of exactly L tokens, the first half, as that column counts full-length inputs.
Each length gets a `compiled` entry: per block, how many inputs the model gets right by tracr's own
test criterion (`agrees`), at tracr's default `mlp_exactness`; or the exception its compile raised.
The inputs need no padding: padded with tracr's PAD token, count_less_freq's model counts the
padding. JAX runs on one thread:

    XLA_FLAGS='--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1' \\
        OMP_NUM_THREADS=1 PYTHONPATH=/work/tracr-src:tests /work/tracrvenv/bin/python \\
        tests/tracr_record.py --tracr-commit 9ce2b8c82b6ba10e62e86cf6f390e7536d4fd2cd \\
        --compiled --programs pair_balance detect_pattern count_less_freq nary_sequencemap
"""

import argparse
import hashlib
import json
import os
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


# tracr's compiled models: its default mlp_exactness, as benchmarks/tracr_compare.py's column
EXACTNESS, BOS = 100, 'BOS'
ONE_THREAD = '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'
CRITERION = (
    "an input is right when the decoded output equals tracr's evaluator wherever the evaluation "
    "is not None; numerical outputs within atol 1e-7 and rtol 0.005 (tracr's tests)"
)


def agrees(out: list, want: list, numerical: bool) -> bool:
    "Whether a compiled output is right by `CRITERION`, against the evaluator's `want`."
    for o, w in zip(out, want):
        if w is None:
            continue
        if numerical and (o is None or abs(o - w) > 1e-7 + 0.005 * abs(w)):
            return False
        if not numerical and o != w:
            return False
    return True


def run_compiled(model, xs: list) -> list:
    "tracr's compiled `model`'s decoded outputs on the inputs `xs`, all of one length."
    import jax
    import numpy as np

    tokens = np.array([model.input_encoder.encode([BOS] + x) for x in xs])
    raw = np.asarray(jax.jit(model.forward)(model.params, tokens).unembedded_output)[:, 1:]
    decode = model.output_encoder.decode if model.output_encoder else list
    return [decode(row) for row in raw.tolist()]


def compiled(rasp, lib, compiling, name: str, L: int) -> dict:
    "tracr's compiled model of `name` at max_seq_len `L`: inputs right per block; or why it failed."
    program, vocab = ALL[name][0](rasp, lib, L), ALL[name][1]
    xs, t = inputs(name, L)[: N // 2], time.perf_counter()  # the first half: L tokens each
    try:
        model = compiling.compile_rasp_to_model(
            program, set(vocab), L, compiler_bos=BOS, mlp_exactness=EXACTNESS
        )
    except Exception as e:
        return dict(failed=f'{type(e).__name__}: {e}', seconds=round(time.perf_counter() - t, 2))
    compile_s, t = round(time.perf_counter() - t, 2), time.perf_counter()
    out, numerical = run_compiled(model, xs), rasp.is_numerical(program)
    wants = outputs(rasp.evaluate, program, xs)
    right = [w != 'error' and agrees(o, w, numerical) for o, w in zip(out, wants)]
    return dict(
        right=[sum(right[i : i + BLOCK]) for i in range(0, len(xs), BLOCK)],
        inputs=len(xs),
        compile_s=compile_s,
        run_s=round(time.perf_counter() - t, 2),
    )


def record_compiled(rasp, lib, names: list, old: dict, meta: dict):
    "Add tracr's compiled runs of `names` to the recorded `old`, writing after each length."
    import jax
    from tracr.compiler import compiling

    meta['compiled'] = dict(
        mlp_exactness=EXACTNESS,
        jax=jax.__version__,
        criterion=CRITERION,
        date=datetime.now(timezone.utc).strftime('%Y-%m-%d'),
        hardware='1 thread of a 2-core AMD EPYC, no GPU',
    )
    for name in names:
        for L in lengths(name):
            old[name][str(L)]['compiled'] = compiled(rasp, lib, compiling, name, L)
            print(name, L, old[name][str(L)]['compiled'], flush=True)
            OUT.write_text(json.dumps(dict(meta=meta, programs=old), indent=1) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--tracr-commit', required=True)
    ap.add_argument('--programs', nargs='*', default=list(ALL))
    ap.add_argument('--compiled', action='store_true', help="run tracr's compiled models")
    a = ap.parse_args()
    os.environ.setdefault('XLA_FLAGS', ONE_THREAD)  # before tracr imports jax
    from tracr.rasp import rasp
    from tracr.compiler import lib

    old = json.loads(OUT.read_text()) if OUT.exists() else dict(meta={}, programs={})
    if a.compiled:
        return record_compiled(rasp, lib, a.programs, old['programs'], old['meta'])
    kept = {k: v for k, v in old['meta'].items() if k == 'compiled'}  # tracr's compiled runs
    old = old['programs']
    meta = kept | dict(
        tracr_commit=a.tracr_commit,
        python=platform.python_version(),
        date=datetime.now(timezone.utc).strftime('%Y-%m-%d'),
        lengths=list(LENGTHS),
        inputs_per_length=N,
        block=BLOCK,
        canonical=canonical.__doc__,
    )
    programs = old | record(rasp, lib, a.programs)
    for name in a.programs:  # keep the compiled runs recorded before
        for L, row in programs[name].items():
            row |= {k: v for k, v in old.get(name, {}).get(str(L), {}).items() if k == 'compiled'}
    OUT.write_text(json.dumps(dict(meta=meta, programs=programs), indent=1) + '\n')


if __name__ == '__main__':
    main()
