"""Record the reference RASP interpreter's values for the programs of its four example files.

The values are for test_rasp_reference.py. The reference: Weiss, Goldberg and Yahav 2021,
"Thinking Like Transformers", arXiv 2106.06981; repository tech-srl/RASP, commit 61dde62, run from
its own folder. It needs antlr4-python3-runtime==4.9.1 and termcolor. Copies of the four example
files are the test fixtures in tests/rasp_reference/.
Usage: python tests/rasp_reference_record.py REFERENCE_FOLDER PYTHON
                                             [--out tests/rasp_reference.json]
Each name a file assigns is called on each input (`name("input");`) in the reference REPL; the JSON
keeps the values and type of each that prints a sequence. The case `library` loads no file: it calls
every name the reference REPL preloads, on inputs with ties and with nothing to select, for the test
of our own library's definitions.
It also runs the reference's own REPL tests (its tests/in/*.txt, with the small files they load) and
keeps every sequence they print, in order, with its type, and every number.
"""

import argparse
import json
import re
import subprocess
from pathlib import Path

# every name the reference REPL preloads, used: ties (max, min, sort), an atom that is absent, a
# selector that selects nothing
LIBRARY = (
    'a = sort(tokens, tokens); b = count(tokens, "l"); '
    'c = contains(tokens, "e"); d = has_focus(select(tokens, "a", ==));'
    'e = mark_last_instance(tokens, "l"); '
    'f = mark_first_instance(tokens, "l"); g = shift(tokens, 1, "_");'
    'h = max(indices, 2); i = min(indices, 2); '
    'j = average(indices); k = load_from_location(tokens, 1);'
    'l = selector_width(select(tokens, tokens, ==)); '
    'm = aggregate(select_from_last(tokens, "l"), indices);'
    'n = selector_width(select_next_identical(tokens)); '
    'o = aggregate(select_from_first(tokens, "l"), indices, -1);'
    'p = max(tokens, "h"); q = min(tokens, "h"); '
    'r = sort(indices, tokens); s = aggregate(full_s, indices);'
    't = selector_width(select_from_last(tokens, "l")); '
    'u = has_focus(select_from_first(tokens, "l"));'
    'v = load_from_location(indices, length - 1); '
    'w = aggregate(select_next_identical(tokens), indices, -1);'
    'x = max(indices + 0.5, 1.5); y = min(indices + 0.5, 1.5); '
    'z = average(indicator(tokens == "l")); aa = sort(tokens, -indices);'
    'ab = shift(indices, 2, 0); ac = min(indicator(tokens == "l"), 0); '
    'ad = has_focus(select(indices, indices, <));'
    'ae = length;'
)

# how numbers are printed and typed: arithmetic, division,
# rounding, comparisons, if, aggregates, selector widths
NUMBERS = (
    'a = indices + 1; b = indices / 3; c = indices * 0.5; '
    'd = (tokens == "a") + 1; e = (tokens == "a") * 1.5;'
    'f = aggregate(select(indices, indices, ==), indices); '
    'g = indices - 0.0; h = round(indices / 2); i = indices % 2;'
    'j = tokens if indices == 0 else "z"; k = length / 1; '
    'l = 1.0 if indices > 0 else 2.0; m = indicator(tokens == "a");'
    'n = indices * 1000.5; o = indices / 3000; p = indices * 100000.0; '
    'q = aggregate(select(indices, indices, <=), indices);'
    'r = min(indices, 1.5); s = min(indices, 0.5); t = indices if indices == 9 else 2.5; '
    'u = selector_width(select(indices, indices, <));'
    'v = not (indices > 1); w = (indices > 1) and (indices < 3); x = max(indices, 1);'
)

# case: (file, statements run after loading it, the s-ops to
# call (*: every name the file assigns at its top), inputs)
CASES = {
    'library': (
        None,
        LIBRARY,
        'a b c d e f g h i j k l m n o p q r s t u v w x y z aa ab ac ad ae',
        ['hello', 'abcab', 'l', 'aaa', 'xyz', 'lol', 'bbaa', 'llama'],
    ),
    'numbers': (
        None,
        NUMBERS,
        'a b c d e f g h i j k l m n o p q r s t u v w x',
        ['abc', 'a', 'bacab'],
    ),
    'rasplib': (
        'rasplib.rasp',
        'a = sort(tokens, tokens); b = count(tokens, "l"); '
        'c = contains(tokens, "e"); d = has_focus(select(tokens, "a", ==));'
        'e = mark_last_instance(tokens, "l"); '
        'f = mark_first_instance(tokens, "l"); g = shift(tokens, 1, "_");'
        'h = max(indices, 2); i = min(indices, 2); '
        'j = average(indices); k = load_from_location(tokens, 1);'
        'l = selector_width(select(tokens, tokens, ==)); '
        'm = aggregate(select_from_last(tokens, "l"), indices);'
        'n = selector_width(select_next_identical(tokens));',
        'length a b c d e f g h i j k l m n',
        ['hello', 'abcab', 'l'],
    ),
    'paper_examples': (
        'paper_examples.rasp',
        '',
        '*',
        ['§hello', '§aabbbcd', '(()', '({[]})', '([)]', '{(})[]', '§dnvdmnvs'],
    ),
    'long_addition': ('long_addition.rasp', '', '*', ['12+34', '999+1', '4321+8765', '5+5', '0+0']),
    'rover': (
        'rover.rasp',
        '',
        '*',
        ['example0', 'example3', 'example9', 'example11', 'example15', 'example21'],
    ),
    'rover res': ('rover.rasp', '', 'res', [f'example{i}' for i in range(22)]),
}
SEP = '"@@"'  # a value printed between two calls, to tell their output apart


# The names come in order, each once.
def top_names(text) -> list:
    "The names a program assigns at the start of a line, outside its functions' bodies."
    found = [
        n.strip()
        for m in re.findall(r'^([A-Za-z_][\w ,]*?)\s*=(?!=)', text, re.M)
        for n in m.split(',')
    ]
    return list(dict.fromkeys(found))


# rasplib is loaded already; a file of None loads none.
def session(file, extra, names, inputs, examples):
    "The REPL input: load the file, run `extra`, call each name on each input, SEP after each."
    lines = [] if file in (None, 'rasplib.rasp') else [f'load "{file[:-5]}";']
    lines += [x.strip() + ';' for x in extra.split(';') if x.strip()] + [
        'full seq display off'
    ]  # rover turns it on
    lines += [
        f'{n}({json.dumps(examples.get(x, x), ensure_ascii=False)});\n{SEP};'
        for x in inputs
        for n in names
    ]
    return '\n'.join(lines) + '\n'


# A value printed as [v]*n is written out.
def sequences(text) -> list:
    "Every sequence the reference REPL prints in `text`, in order, as [values text, type]."
    return [
        [', '.join([v] * int(times[1:])) if times else v, kind]
        for v, times, kind in re.findall(r'= +\[(.*)\](\*\d+)? \((\w+)\)', text)
    ]


# For each test: its input, and the sequences and the numbers the reference prints for it.
def record_repl_tests(folder, python) -> dict:
    "The reference's REPL tests with what the reference prints for each, and the files they load."
    tests = {}
    for f in sorted((Path(folder) / 'tests' / 'in').glob('*.txt')):
        r = subprocess.run(
            [python, '-m', 'RASP_support'],
            stdin=f.open(),
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=600,
        )
        tests[f.name] = dict(
            input=f.read_text(),
            sequences=sequences(r.stdout),
            numbers=re.findall(r'value: \w+ = +(-?\d+(?:\.\d+)?)\n', r.stdout),
        )
    loaded = {
        f'tests/rasps/{p.name}': p.read_text()
        for p in sorted((Path(folder) / 'tests' / 'rasps').glob('*.rasp'))
        if p.name != 'rover.rasp'
    }
    return dict(tests=tests, loaded=loaded)


# values: {input: {name: [values text, type]}}; a name whose call prints no sequence (a constant, a
# selector, an error) is left out.
def record(folder, python):
    "The reference's printed values: {case: {file, statements, inputs, values}}."
    rover = (Path(folder) / 'rover.rasp').read_text()
    examples = dict(re.findall(r'(example\d+) = "([^"]*)";', rover))  # rover's inputs, by name
    out = {}
    for case, (file, extra, names, inputs) in CASES.items():
        names = top_names((Path(folder) / file).read_text()) if names == '*' else names.split()
        r = subprocess.run(
            [python, '-m', 'RASP_support'],
            input=session(file, extra, names, inputs, examples),
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=600,
        )
        chunks = r.stdout.split('value: out =  "@@"')[:-1]
        assert len(chunks) == len(inputs) * len(names), (case, len(chunks), r.stdout[-2000:])
        values = {}
        for (x, n), chunk in zip([(x, n) for x in inputs for n in names], chunks):
            if got := sequences(chunk):
                values.setdefault(x, {})[n] = got[-1]
        out[case] = dict(
            file=file,
            statements=extra,
            inputs={x: examples.get(x, x) for x in inputs},
            values=values,
        )
    return out


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('folder')
    p.add_argument('python')
    p.add_argument('--out', default='tests/rasp_reference.json')
    a = p.parse_args()
    res = dict(
        made_by=(
            'python tests/rasp_reference_record.py '
            'REFERENCE_FOLDER PYTHON (tech-srl/RASP at 61dde62)'
        ),
        files=record(a.folder, a.python),
        repl=record_repl_tests(a.folder, a.python),
    )
    Path(a.out).write_text(json.dumps(res, indent=1, ensure_ascii=False) + '\n')
