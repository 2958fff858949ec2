"""The RASP parser and interpreter under random input fail with nothing but a located RASPError.

The input: random bytes, random token soups, mutilated library programs (and the reference's example
programs) and random well-formed programs, with the whole of the reference's language: loops,
comprehensions, dicts, indexing, several values, the REPL's commands. Nothing may fail with anything
but a RASPError, which names a line and column."""

import random
import re
from pathlib import Path
import pytest
from ttc_nb.errors import RASPError
from ttc_nb.rasp.interpreter import Program, LIB
from ttc_nb.rasp.programs import PROGRAMS, PRELUDE

TOKENS = [
    'tokens',
    'indices',
    'length',
    'select',
    'aggregate',
    'selector_width',
    'round',
    'indicator',
    'def',
    'return',
    'if',
    'else',
    'and',
    'or',
    'not',
    'in',
    'True',
    'False',
    'TRUE',
    'x',
    'f',
    '0',
    '1',
    '2.5',
    '"a"',
    "'§'",
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    ',',
    ';',
    '=',
    '==',
    '!=',
    '<',
    '<=',
    '>',
    '>=',
    '+',
    '-',
    '*',
    '/',
    '%',
    '^',
    '**',
    '#',
    'for',
    ':',
    'range',
    'zip',
    'len',
    'load',
    '"nowhere"',
    'set',
    'show',
    'example',
    'examples',
    'on',
    'off',
    'full',
    'seq',
    'display',
    'exit',
    'tokens_int',
    'tokens_bool',
    'out',
    'sort',
    'count',
]


# It must say where when it comes from the text.
def run(text, xs='§ab(a)'):
    "Parse, run and evaluate `text`: only RASPError may escape."
    try:
        Program(text, LIB)(xs)
    except RASPError as e:
        assert e.where is None or re.match(r'line \d+, column \d+', str(e)), str(e)


@pytest.mark.parametrize('seed', range(4))
def test_random_bytes(seed):
    rng = random.Random(seed)
    for _ in range(250):
        run(bytes(rng.randrange(256) for _ in range(rng.randrange(60))).decode('latin-1'))


@pytest.mark.parametrize('seed', range(4))
def test_token_soup(seed):
    rng = random.Random(seed)
    for _ in range(400):
        run(' '.join(rng.choice(TOKENS) for _ in range(rng.randrange(1, 25))))


EXAMPLES = Path(__file__).parent / 'rasp_reference'  # the reference's example files
SOURCES = {
    **{n: PRELUDE + t for n, t in PROGRAMS.items()},
    **{f: (EXAMPLES / f).read_text() for f in ('paper_examples.rasp', 'long_addition.rasp')},
}


# The programs: the library's (with the prelude, as text) and two of the reference's examples.
@pytest.mark.parametrize('name', sorted(SOURCES))
def test_mutilated_programs(name):
    "Programs with tokens deleted, duplicated, swapped or replaced."
    rng = random.Random(name)
    toks = re.findall(r'"[^"]*"|\w+|[^\s\w]', SOURCES[name])
    for _ in range(60):
        t = list(toks)
        for _ in range(rng.randrange(1, 4)):
            i, op = rng.randrange(len(t)), rng.randrange(4)
            if op == 0:
                del t[i]
            elif op == 1:
                t.insert(i, t[i])
            elif op == 2:
                j = rng.randrange(len(t))
                t[i], t[j] = t[j], t[i]
            else:
                t[i] = rng.choice(TOKENS)
        run(' '.join(t), rng.choice(['§hello', '({)}', 'a', '§aab']))


def expression(rng, depth):
    "A random expression over s-ops, selectors and constants, not always well-typed."
    if depth == 0:
        return rng.choice(
            ['tokens', 'indices', 'length', '1', '0', '"a"', '2.5', 'True', '[1, 2, 3]', 's', 'v']
        )
    e = lambda: expression(rng, depth - 1)
    return rng.choice(
        [
            lambda: (
                f'({e()} '
                f'{rng.choice(["+", "-", "*", "/", "%", "^", "==", "<", ">=", "!=", "and", "or"])} '
                f'{e()})'
            ),
            lambda: f'(not {e()})',
            lambda: f'(-{e()})',
            lambda: (
                f'select({e()}, {e()}, {rng.choice(["==", "<", "<=", ">", "!=", "TRUE", "FALSE"])})'
            ),
            lambda: f'aggregate({e()}, {e()})',
            lambda: f'aggregate({e()}, {e()}, {e()})',
            lambda: f'selector_width({e()})',
            lambda: f'round({e()})',
            lambda: f'indicator({e()})',
            lambda: f'({e()} if {e()} else {e()})',
            lambda: f'({e()} in ["a", "b"])',
            lambda: f'g({e()})',
            lambda: f'[{e()} for i in range(2)]',
            lambda: f'{{"a": {e()}, 1: {e()}}}',
            lambda: f'{{k: {e()} for k in ["x", "y"]}}',
            lambda: f'{e()}[{rng.choice(["0", "-1", "indices", "tokens", "1.5", e()])}]',
            lambda: f'"abcdefgh"[{e()}]',
            lambda: f'{{"a": 1, "b": 2}}[{e()}]',
            lambda: f'len({e()})',
            lambda: f'zip({e()}, [1, 2])',
            lambda: f'range({e()})',
            lambda: f'{e()}({rng.choice([repr("ab"), "[1, 2]", e()])})',
            lambda: f'h({e()})[0]',
            lambda: rng.choice(['tokens_int', 'tokens_bool', 'tokens_float', 'out', 'i']),
        ]
    )()


@pytest.mark.parametrize('seed', range(6))
def test_random_programs(seed):
    rng = random.Random(seed)
    repl_commands = [
        'set example [1, 2]',
        'examples off',
        'full seq display on',
        'show example',
        '',
    ]
    for _ in range(120):
        text = (
            's = select(indices, indices, <=);\nv = indices;\n'
            f'def g(a) {{ b = {expression(rng, 2)}; return a; }}\n'
            f'def h(a) {{ for i in {rng.choice(["range(2)", "[1, 2]", "{1: 2}", "s"])} '
            f'{{ a = {expression(rng, 1)}; }} return a, i; }}\n'
            f'{rng.choice(repl_commands)}\n'
            f'y = {expression(rng, 3)};\nz, w = {expression(rng, 2)}, '
            f'{expression(rng, 1)};\np, q = h({expression(rng, 1)});\n'
            f'{expression(rng, 2)};\nr = out;'
        )
        run(text, rng.choice(['§ab', 'abc', 'x', 'hello world']))


def test_deep_nesting_is_an_error():
    for text in [
        'x = ' + '(' * 5000 + '1' + ')' * 5000 + ';',
        'x = ' + '-' * 5000 + '1;',
        'x = ' + '+'.join(['indices'] * 5000) + ';',
        'x = ' + 'f(' * 3000 + '1' + ')' * 3000 + ';',
    ]:
        with pytest.raises(RASPError, match='nests more than'):
            Program(text)


# The statement is over the s-op x and the constant k.
def statement(rng):
    "A random well-typed statement of the reference's language beyond the paper's."
    n = rng.randrange(1, 4)
    return rng.choice(
        [
            f'for i in range({n}) {{ x = x + i; k = k + i; }}',
            'for a, b in zip([1, 2], [3, 4]) { x = x * a - b; }',
            f'd = {{j: indices + j for j in range({n})}}; x = x + d[{n - 1}];',
            'l = [x * j for j in [1, 2]]; x = l[0] + l[-1];',
            'a, b = x, indices; x = a + b;',
            'p, q = two(x); x = p - q;',
            f'c = "abcdefgh"[indices + {n}]; x = x + (c == "d");',
            'x = x + tokens_int[0] + tokens_int[-1];',
            'x = x + {"0": 1, "1": 2, "2": 3, "3": 4}[tokens];',
            'x = x + len([k, k]);',
            'set example "3210"',
            'x;',
            'x; x = out + k;',
            'x = x + (1 if k > 2 else 0);',
        ]
    )


# Beyond the paper's: its loops, comprehensions, dicts, indexing and several values.
@pytest.mark.parametrize('seed', range(4))
def test_random_well_typed_programs(seed):
    "Programs that use the reference's language beyond the paper's correctly run without error."
    rng = random.Random(seed)
    for _ in range(40):
        text = 'x = indices; k = 1;\ndef two(s) { return s + 1, s * 2; }\n' + '\n'.join(
            statement(rng) for _ in range(rng.randrange(1, 8))
        )
        p = Program(text, LIB)
        assert len(p('0123', 'x')['x']) == 4, text
