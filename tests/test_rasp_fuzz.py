"""The RASP parser and interpreter under random input: random bytes, random token soups, mutilated library programs and
random well-formed programs. Nothing may fail with anything but a RASPError, which names a line and column."""
import random, re
import pytest
from ttc_nb.rasp import RASPError
from ttc_nb.rasp_lang import Program, PROGRAMS, PRELUDE, LIB

TOKENS = ['tokens', 'indices', 'length', 'select', 'aggregate', 'selector_width', 'round', 'indicator', 'def', 'return',
          'if', 'else', 'and', 'or', 'not', 'in', 'True', 'False', 'TRUE', 'x', 'f', '0', '1', '2.5', '"a"', "'§'",
          '(', ')', '[', ']', '{', '}', ',', ';', '=', '==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', '^', '**', '#']

def run(text, xs='§ab(a)'):
    "Parse, run and evaluate `text`: only RASPError may escape, and it must say where when it comes from the text."
    try: Program(text, LIB)(xs)
    except RASPError as e:
        assert e.where is None or re.match(r'line \d+, column \d+', str(e)), str(e)

@pytest.mark.parametrize('seed', range(4))
def test_random_bytes(seed):
    rng = random.Random(seed)
    for _ in range(250): run(bytes(rng.randrange(256) for _ in range(rng.randrange(60))).decode('latin-1'))

@pytest.mark.parametrize('seed', range(4))
def test_token_soup(seed):
    rng = random.Random(seed)
    for _ in range(400): run(' '.join(rng.choice(TOKENS) for _ in range(rng.randrange(1, 25))))

@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_mutilated_programs(name):
    "Library programs (with the prelude, as text) with tokens deleted, duplicated, swapped or replaced."
    rng = random.Random(name)
    toks = re.findall(r'"[^"]*"|\w+|[^\s\w]', PRELUDE + PROGRAMS[name])
    for _ in range(60):
        t = list(toks)
        for _ in range(rng.randrange(1, 4)):
            i, op = rng.randrange(len(t)), rng.randrange(4)
            if op == 0: del t[i]
            elif op == 1: t.insert(i, t[i])
            elif op == 2: j = rng.randrange(len(t)); t[i], t[j] = t[j], t[i]
            else: t[i] = rng.choice(TOKENS)
        run(' '.join(t), rng.choice(['§hello', '({)}', 'a', '§aab']))

def expression(rng, depth):
    "A random expression over s-ops, selectors and constants, not always well-typed."
    if depth == 0: return rng.choice(['tokens', 'indices', 'length', '1', '0', '"a"', '2.5', 'True', '[1, 2, 3]', 's', 'v'])
    e = lambda: expression(rng, depth - 1)
    return rng.choice([
        lambda: f'({e()} {rng.choice(["+", "-", "*", "/", "%", "^", "==", "<", ">=", "!=", "and", "or"])} {e()})',
        lambda: f'(not {e()})', lambda: f'(-{e()})',
        lambda: f'select({e()}, {e()}, {rng.choice(["==", "<", "<=", ">", "!=", "TRUE", "FALSE"])})',
        lambda: f'aggregate({e()}, {e()})', lambda: f'aggregate({e()}, {e()}, {e()})',
        lambda: f'selector_width({e()})', lambda: f'round({e()})', lambda: f'indicator({e()})',
        lambda: f'({e()} if {e()} else {e()})', lambda: f'({e()} in ["a", "b"])', lambda: f'g({e()})'])()

@pytest.mark.parametrize('seed', range(6))
def test_random_programs(seed):
    rng = random.Random(seed)
    for _ in range(120):
        text = (f's = select(indices, indices, <=);\nv = indices;\ndef g(a) {{ b = {expression(rng, 2)}; return a; }}\n'
                f'y = {expression(rng, 3)};\nz = {expression(rng, 2)};')
        run(text, rng.choice(['§ab', 'abc', 'x', 'hello world']))

def test_deep_nesting_is_an_error():
    for text in ['x = ' + '(' * 5000 + '1' + ')' * 5000 + ';', 'x = ' + '-' * 5000 + '1;', 'x = ' + '+'.join(['indices'] * 5000) + ';',
                 'x = ' + 'f(' * 3000 + '1' + ')' * 3000 + ';']:
        with pytest.raises(RASPError, match='nests more than'): Program(text)
