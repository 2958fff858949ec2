"""tracr's library on our tracr-style API gives tracr's evaluator's values, interpreted or compiled.

The reference is tracr's own evaluator (google-deepmind/tracr at 9ce2b8c), recorded by
tests/tracr_record.py in tests/tracr_reference.json: a SHA-256 per block of 100 inputs, per program
and length. Here every program is built from ttc_nb.rasp.tracr and ttc_nb.rasp.tracr_compiler in
place of tracr's modules (the same program text), and the first block must have tracr's digest:
from our interpreter at lengths 5, 8 and 20, from our compiled model at 5 (and 8 where it compiles
in a second or two). The full sweep, 1,000 inputs per length to 64, interpreted and
compiled, is benchmarks/tracr_api_check.py; its committed result must say that every block
it ran agreed. tracr's own compiled models of the four programs that benchmarks/tracr_compare.py
did not run were recorded with `tracr_record.py --compiled`: each length holds their count.
"""

import json
from pathlib import Path
import pytest
from ttc_nb.errors import RASPError
from ttc_nb.rasp import tracr as rasp, tracr_compiler as compiling
from tracr_record import ALL, BLOCK, OUT, lengths, inputs, digest, outputs, agrees

REFERENCE = json.loads(OUT.read_text())
EXACT = Path(__file__).parents[1] / 'nbs/results/rasp/tracr/exact.json'
SLOW = {'shuffle_dyck2', 'shuffle_dyck', 'reverse', 'sort_freq'}  # compiled at 5 only: CI's time


def compiled_outputs(m, xs: list) -> list:
    "The compiled model's output on each input; 'error' where it refuses one."
    try:
        return [o.tolist() for o in m.run(xs)]
    except RASPError:
        return [compiled_outputs(m, [x])[0] if len(xs) > 1 else 'error' for x in xs]


def block(name: str, L: int) -> list:
    "The first block of inputs of program `name` at length `L`, as the reference drew them."
    return inputs(name, L)[:BLOCK]


@pytest.mark.parametrize('name', list(ALL))
def test_the_interpreter_gives_tracrs_values(name):
    make, _ = ALL[name]
    for L in (5, 8, 20):  # to 64 in the sweep: CI's time
        got = outputs(rasp.evaluate, make(rasp, compiling, L), block(name, L))
        assert digest(got) == REFERENCE['programs'][name][str(L)]['digests'][0], (name, L)


@pytest.mark.parametrize('name', list(ALL))
def test_the_compiled_model_gives_tracrs_values(name):
    make, vocab = ALL[name]
    for L in (5,) if name in SLOW else (5, 8):
        m = compiling.compile_rasp_to_model(
            make(rasp, compiling, L), set(vocab), L, compiler_bos='BOS'
        )
        got = compiled_outputs(m, block(name, L))
        assert digest(got) == REFERENCE['programs'][name][str(L)]['digests'][0], (name, L)


@pytest.mark.parametrize('name', list(ALL))
def test_the_samples_are_tracrs_rows(name):
    make, _ = ALL[name]
    for L in (5, 8):
        for x, want in REFERENCE['programs'][name][str(L)]['samples']:
            if want == 'error':
                with pytest.raises(ValueError):
                    rasp.evaluate(make(rasp, compiling, L), x)
            else:
                assert rasp.evaluate(make(rasp, compiling, L), x) == want


def test_the_sweep_agreed_everywhere():
    rows = json.loads(EXACT.read_text())['programs']
    assert set(rows) == set(ALL)
    for name, runs in rows.items():
        assert [r['length'] for r in runs] == list(lengths(name)), name
        for r in runs:
            recorded = REFERENCE['programs'][name][str(r['length'])]['digests']
            assert r['interpreter_blocks'] == r['blocks'] == len(recorded), (name, r['length'])
            if 'refused' not in r:  # the compiled model: every input, in whole blocks
                assert r['compiled_blocks'] * BLOCK == r['inputs'] == 1000, (name, r['length'])
                assert r['compiled_exact'] == r['inputs'], (name, r['length'])


def test_the_reference_draws_what_it_says():
    meta = REFERENCE['meta']
    assert (meta['inputs_per_length'], meta['block']) == (1000, 100)
    assert meta['tracr_commit'].startswith('9ce2b8c')
    xs = inputs('hist', 20)
    assert [len(x) for x in xs[:500]] == [20] * 500 and all(1 <= len(x) <= 20 for x in xs)
    assert inputs('hist', 20) == xs  # a fixed seed


def test_tracrs_criterion_of_right():
    assert agrees(['x', 2], [None, 2], False) and not agrees([1, 2], [1, 3], False)
    assert agrees([0.5024], [0.5], True) and not agrees([0.51], [0.5], True)
    assert not agrees([None], [0.5], True)


def test_tracrs_compiled_models_were_recorded():
    assert REFERENCE['meta']['compiled']['mlp_exactness'] == 100
    for name in ('pair_balance', 'detect_pattern', 'count_less_freq', 'nary_sequencemap'):
        for L in lengths(name):
            run = REFERENCE['programs'][name][str(L)]['compiled']
            assert 'failed' in run or (run['inputs'], len(run['right'])) == (500, 5), (name, L)
            assert all(0 <= k <= BLOCK for k in run.get('right', [])), (name, L)
