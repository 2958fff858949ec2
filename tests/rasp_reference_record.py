"""Record the reference RASP interpreter's values for the programs of its four example files, for test_rasp_reference.py.

The reference: Weiss, Goldberg and Yahav (2021), "Thinking Like Transformers", arXiv 2106.06981; repository tech-srl/RASP,
commit 61dde62, run from its own folder. It needs antlr4-python3-runtime==4.9.1 and termcolor.
Usage: python tests/rasp_reference_record.py REFERENCE_FOLDER PYTHON [--out tests/rasp_reference.json]
Each s-op is called on each input (`name("input");`) in the reference REPL; the JSON keeps the printed values and type.
It also runs the reference's own REPL tests (its tests/in/*.txt, with the small files they load) and keeps every sequence
they print, in order, with its type, and every number.
"""
import argparse, json, re, subprocess
from pathlib import Path

# file: (statements run after loading it, the s-ops to call, inputs)
CASES = {
    'rasplib.rasp': ('a = sort(tokens, tokens); b = count(tokens, "l"); c = contains(tokens, "e"); d = has_focus(select(tokens, "a", ==));'
                     'e = mark_last_instance(tokens, "l"); f = mark_first_instance(tokens, "l"); g = shift(tokens, 1, "_");'
                     'h = max(indices, 2); i = min(indices, 2); j = average(indices); k = load_from_location(tokens, 1);'
                     'l = selector_width(select(tokens, tokens, ==)); m = aggregate(select_from_last(tokens, "l"), indices);'
                     'n = selector_width(select_next_identical(tokens));',
                     'length a b c d e f g h i j k l m n', ['hello', 'abcab', 'l']),
    'paper_examples.rasp': ('', 'hist_bos hist_nobos reverse sort_bos hist2_bos sort_by_most_freq dyck1_ptf dyck2_ptf dyck3_ptf',
                            ['§hello', '§aabbbcd', '(()', '({[]})', '([)]', '{(})[]', '§dnvdmnvs']),
    'long_addition.rasp': ('', 'val1 val2 carries longsum', ['12+34', '999+1', '4321+8765', '5+5', '0+0']),
    'rover.rasp': ('', 'res', [f'example{i}' for i in range(22)]),
}

def session(file, extra, names, inputs, examples):
    "The REPL input: load the file (rasplib is loaded already), run `extra`, call each s-op on each input."
    lines = [] if file == 'rasplib.rasp' else [f'load "{file[:-5]}";']
    lines += [x.strip() + ';' for x in extra.split(';') if x.strip()]
    lines += [f'{n}({json.dumps(examples.get(x, x), ensure_ascii=False)});' for x in inputs for n in names.split()]
    return '\n'.join(lines) + '\n'

def sequences(text) -> list:
    "Every sequence the reference REPL prints in `text`, in order, as [values text, type]; [v]*n written out."
    return [[', '.join([v] * int(times[1:])) if times else v, kind]
            for v, times, kind in re.findall(r'= +\[(.*)\](\*\d+)? \((\w+)\)', text)]

def record_repl_tests(folder, python) -> dict:
    "The reference's REPL tests: each one's input, the sequences and the numbers the reference prints for it; and the files they load."
    tests = {}
    for f in sorted((Path(folder)/'tests'/'in').glob('*.txt')):
        r = subprocess.run([python, '-m', 'RASP_support'], stdin=f.open(), capture_output=True, text=True, cwd=folder, timeout=600)
        tests[f.name] = dict(input=f.read_text(), sequences=sequences(r.stdout),
                             numbers=re.findall(r'value: \w+ = +(-?\d+(?:\.\d+)?)\n', r.stdout))
    loaded = {f'tests/rasps/{p.name}': p.read_text() for p in sorted((Path(folder)/'tests'/'rasps').glob('*.rasp')) if p.name != 'rover.rasp'}
    return dict(tests=tests, loaded=loaded)

def record(folder, python):
    "The reference's printed values: {file: {input: {name: [values text, type]}}}."
    rover = (Path(folder)/'rover.rasp').read_text()
    examples = dict(re.findall(r'(example\d+) = "([^"]*)";', rover))      # rover's inputs, by name
    out = {}
    for file, (extra, names, inputs) in CASES.items():
        text = session(file, extra, names, inputs, examples)
        r = subprocess.run([python, '-m', 'RASP_support'], input=text, capture_output=True, text=True, cwd=folder, timeout=600)
        # a sequence of one value repeated n times prints as [v]*n
        got = [(v if not times else ', '.join([v] * int(times[1:])), kind)
               for v, times, kind in re.findall(r'\t = +\[(.*)\](\*\d+)? \((\w+)\)[^\n]*\n', r.stdout)]
        calls = [(x, n) for x in inputs for n in names.split()]
        assert len(got) == len(calls), (file, len(got), len(calls), r.stdout[-2000:])
        out[file] = {'statements': extra, 'inputs': {x: examples.get(x, x) for x in inputs}, 'values': {}}
        for (x, n), (vals, kind) in zip(calls, got): out[file]['values'].setdefault(x, {})[n] = [vals, kind]
    return out

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('folder'); p.add_argument('python'); p.add_argument('--out', default='tests/rasp_reference.json')
    a = p.parse_args()
    res = dict(made_by=f'python tests/rasp_reference_record.py REFERENCE_FOLDER PYTHON (tech-srl/RASP at 61dde62)', files=record(a.folder, a.python),
               repl=record_repl_tests(a.folder, a.python))
    Path(a.out).write_text(json.dumps(res, indent=1, ensure_ascii=False) + '\n')
