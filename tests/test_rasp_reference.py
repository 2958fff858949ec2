"""The reference interpreter's four example files, run here, give the values the reference gave.

The files are tech-srl/RASP at 61dde62, kept as fixtures in tests/rasp_reference. Every s-op the
reference computed on each input, recorded by tests/rasp_reference_record.py in
tests/rasp_reference.json, has the same values and the same type (ints, floats, bools, strings)
here. So does every name of our own library, against the reference's library (the case `library`,
which loads no file), and so do 24 statements of arithmetic, division, rounding, comparisons, `if`
and aggregates (the case `numbers`), printed as the reference prints them. And the reference's own
REPL tests (its tests/in/*.txt) print here the sequences and numbers the reference prints, recorded
the same way, but for the three files of `DIFFERENT`, which differ on purpose."""

import contextlib
import io
import json
import os
import re
import shutil
from pathlib import Path
import pytest
import ttc_nb.rasp.ops as R
from ttc_nb.rasp.interpreter import Program, LIB
from ttc_nb.rasp.repl import kind, repl, format_element

EXAMPLES = Path(__file__).parent / 'rasp_reference'  # the reference's files
RECORDED = json.loads((Path(__file__).parent / 'rasp_reference.json').read_text())['files']


# T and F for booleans, floats to three decimals.
def printed(v) -> list:
    "The values as our REPL prints them, element by element."
    return [format_element(x) for x in v.tolist()]


def same(ours: list, theirs: list, kind_: str) -> bool:
    # in floats, the reference prints a value that came to it as an int without its point (a mean
    # over one selected int, an if's or min's int branch): [0, 0.5, 1.0] where we print [0.0, 0.5,
    # 1.0]. The same numbers, to three decimals both.
    if kind_ == 'floats':
        return [float(a) for a in ours] == [float(b) for b in theirs]
    return ours == theirs


@pytest.mark.parametrize('case', sorted(RECORDED))
def test_example_file(case):
    rec = RECORDED[case]
    if rec['file'] is None:
        p = Program(rec['statements'], LIB)
    else:
        path = EXAMPLES / rec['file']
        p = Program(path.read_text() + '\n' + rec['statements'], LIB, str(path))
    for name, xs in rec['inputs'].items():
        for sop, (values, type_) in rec['values'][name].items():
            v = R.evaluate(p[sop], xs)
            theirs = values.split(', ') if values else []
            # a string token may hold ', ': compare the joined text then
            ours = printed(v)
            assert same(ours, theirs, type_) or ', '.join(ours) == values, (
                case,
                name,
                sop,
                ours,
                values,
            )
            assert kind(v) == type_, (case, name, sop, kind(v), type_)


# the names the reference REPL preloads (its rasplib.rasp)
REFERENCE_NAMES = {
    'full_s',
    'length',
    'selector_width',
    'has_focus',
    'count',
    'contains',
    'max',
    'min',
    'average',
    'load_from_location',
    'shift',
    'mark_last_instance',
    'mark_first_instance',
    'select_from_last',
    'select_from_first',
    'sort',
    'select_next_identical',
}


# A name may be built in rather than in our library.
def test_every_reference_library_name_is_ours_and_checked():
    "Each name the reference preloads is in our library and is called in the case `library`."
    assert REFERENCE_NAMES - {'length', 'selector_width'} <= set(LIB)
    assert REFERENCE_NAMES <= set(re.findall(r'\w+', RECORDED['library']['statements']))


# rasplib.rasp defines library names anew.
def test_the_reference_library_loads_as_a_file():
    "rasplib.rasp loads, and a program written against it runs with its definitions."
    p = Program(
        'load "rasplib.rasp"; a = sort(tokens, tokens); b = length;', LIB, str(EXAMPLES / 'x.rasp')
    )
    assert p.interp.names['sort'] is not LIB['sort']
    assert p('hello') == {'length': [5] * 5, 'a': list('ehllo'), 'b': [5] * 5}


# The reference's REPL tests whose printed values differ here, on purpose:
DIFFERENT = {
    'set_reserved.txt': (
        'a program may redefine a library name (length = 6; and so on), which the reference refuses'
    ),
    'some_errors.txt': (
        "statements run one by one: `tokens;;` shows tokens before the error of the lone ';', "
        'which the reference refuses whole; and tokens_asis(["a", 3]) gives the values, '
        'which it refuses'
    ),
    'load_nesteds.txt': (
        'a loaded file runs up to its first error (here its line 5), where the reference goes on'
    ),
}
REPL = json.loads((Path(__file__).parent / 'rasp_reference.json').read_text())['repl']


def repl_output(text, folder):
    "What our REPL prints for the lines of `text`, run in `folder`."
    lines = iter(text.splitlines())

    def read(prompt):
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    here = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out := io.StringIO()):
            repl('hello', read)
    finally:
        os.chdir(here)
    return out.getvalue()


# What it prints: the sequences (values and type) and the numbers. A `load` shows here the values of
# the file's s-ops, which the reference names without values: those come first.
@pytest.mark.parametrize('name', sorted(set(REPL['tests']) - set(DIFFERENT)))
def test_reference_repl_tests(name, tmp_path):
    "What the reference prints for its REPL test `name`, we print too, in order."
    for file, text in REPL['loaded'].items():
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text(text)
    for f in ('paper_examples.rasp', 'rover.rasp'):
        shutil.copy(EXAMPLES / f, tmp_path / f)
        shutil.copy(EXAMPLES / f, tmp_path / 'tests' / 'rasps' / f)
    test = REPL['tests'][name]
    out = repl_output(test['input'], tmp_path)
    ours = [[v, k] for v, k in re.findall(r'\[(.*)\] \((\w+)\)$', out, re.M)]
    theirs = test['sequences']
    if 'load' not in test['input']:
        assert ours == theirs, (ours, theirs)
    else:
        assert ours[len(ours) - len(theirs) :] == theirs, (ours, theirs)
    assert re.findall(r'^(?:\w+ = )?(-?\d+(?:\.\d+)?)$', out, re.M) == test['numbers'], out
