"""The reference interpreter's four example files (tech-srl/RASP at 61dde62, kept in ttc_nb/rasp_examples), run here: every
s-op the reference computed on each input, recorded by tests/rasp_reference_record.py in tests/rasp_reference.json, has the
same values and the same type (ints, floats, bools, strings) here."""
import json, math
from pathlib import Path
import pytest
import ttc_nb.rasp as R
from ttc_nb.rasp_lang import Program, LIB, EXAMPLES
from ttc_nb.rasp_analysis import kind

RECORDED = json.loads((Path(__file__).parent/'rasp_reference.json').read_text())['files']

def printed(v) -> list:
    "The values as the reference prints them, element by element: T and F for booleans."
    return ['T' if x is True else 'F' if x is False else str(x) for x in v.tolist()]

def same(ours:list, theirs:list, kind_:str) -> bool:
    if kind_ == 'floats': return all(math.isclose(float(a), float(b), abs_tol=1e-9) for a, b in zip(ours, theirs))
    return ours == theirs

@pytest.mark.parametrize('file', sorted(RECORDED))
def test_example_file(file):
    rec = RECORDED[file]
    path = EXAMPLES/file
    p = Program(path.read_text() + '\n' + rec['statements'], LIB, str(path))
    for name, xs in rec['inputs'].items():
        for sop, (values, type_) in rec['values'][name].items():
            v = R.evaluate(p[sop], xs)
            theirs = values.split(', ') if values else []
            # a string token may hold ', ': compare the joined text then
            ours = printed(v)
            assert same(ours, theirs, type_) or ', '.join(ours) == values, (file, name, sop, ours, values)
            assert kind(v) == type_, (file, name, sop, kind(v), type_)
