"""The compiled RASP programs equal the interpreter, and what the compiler refuses, it names.

Each library program that compiles to a model small enough for CI is checked on random inputs at a
small size."""

import numpy as np
import pytest
import ttc_nb.rasp.ops as R
from ttc_nb.errors import RASPError
from ttc_nb.rasp.interpreter import library
from ttc_nb.rasp.programs import PROGRAMS
from ttc_nb.rasp.train import sample_inputs
from ttc_nb.rasp.compiler.assemble import compile_rasp, library_vocab


@pytest.mark.parametrize('name', list(PROGRAMS))
def test_library_program_is_exact(name):
    p = library(name)
    xs = sample_inputs(name, 50, 4, 1, 8 - name.endswith('_bos'), np.random.default_rng(1))
    got, want = (
        compile_rasp(p, library_vocab(name), 8).run(xs),
        [R.evaluate(p.output, x) for x in xs],
    )
    assert [(g.tolist(), g.dtype) for g in got] == [(w.tolist(), w.dtype) for w in want]


def test_hist_is_exact_at_every_width_up_to_40():
    m, p = compile_rasp(library('hist'), 'ab', 40), library('hist')
    xs = ['a' * n for n in range(1, 41)] + ['ab' * (n // 2) + 'a' * (n % 2) for n in range(1, 41)]
    assert [v.tolist() for v in m.run(xs)] == [R.evaluate(p.output, x).tolist() for x in xs]


def test_refusals_name_the_reason():
    m = compile_rasp(library('sort'), 'ab', 4)
    with pytest.raises(RASPError, match='has 5 tokens'):
        m.run(['aaaaa'])
    with pytest.raises(RASPError, match="the token 'c'"):
        m.run(['abc'])
    wide = ''.join(chr(0x100 + i) for i in range(400))  # 400 tokens at 64 positions
    with pytest.raises(RASPError, match='more than 20000 combinations of values'):
        compile_rasp(R.Map(lambda t, i: f'{t}{i}', R.tokens, R.indices), wide, 64)
