"""`ttc rasp` as a user meets it: values on stdout, one JSON line with --json, the analysis.

Also a REPL on standard input, and errors as the message with exit code 2, never a traceback."""

import json
from conftest import ttc
from ttc_nb.rasp.programs import SORT


def test_file_prints_every_sop(tmp_path):
    (f := tmp_path / 'sort.rasp').write_text(SORT)
    r = ttc('rasp', f, '--input', '§hello')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        'num_smaller = [5, 1, 0, 2, 3, 4]',
        'target_pos = [0, 2, 1, 3, 4, 5]',
        'sort = [§, e, h, l, l, o]',
    ]


def test_json_of_one_and_of_all(tmp_path):
    (f := tmp_path / 'p.rasp').write_text(
        'a = indices / 2; b = indices > 0; c = tokens; d = indices + 1;'
    )
    r = ttc('rasp', f, '--input', 'xyz', '--json')
    assert json.loads(r.stdout) == {
        'a': [0.0, 0.5, 1.0],
        'b': [False, True, True],
        'c': ['x', 'y', 'z'],
        'd': [1, 2, 3],
    }
    assert r.stdout.count('\n') == 1
    r = ttc('rasp', f, '--input', 'xyz', '--json', '--name', 'd')
    assert r.stdout == '[1, 2, 3]\n' and r.returncode == 0


def test_standard_input():
    r = ttc(
        'rasp',
        '-',
        '--input',
        'abc',
        input='r = aggregate(select(indices, length - indices - 1, ==), tokens);',
    )
    assert r.stdout == 'r = [c, b, a]\n', r.stderr


def test_analyse_json():
    # By hand, from the program (rasp_lang.PROGRAMS['hist2_bos']): layer 1 attends with two
    # different selectors of tokens and indices alone, `hist`'s select(tokens, tokens, ==) and
    # has_earlier_copy_bos's (tokens ==) and (indices <); layer 2 with `same_count`, which reads
    # both results: heads [2, 1].
    r = ttc('rasp', 'lib:hist2_bos', '--analyse', '--json', '--name', 'hist2_bos')
    assert json.loads(r.stdout) == {'layers': 2, 'heads': [2, 1], 'sops': {'hist2_bos': 2}}


def test_repl_reads_until_exit():
    r = ttc(
        'rasp',
        '--input',
        'ab',
        input='x = indices + 1;\ndef f(s) {\n return s * 10;\n}\nf(x);\nnope;\nexit\nx;\n',
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout.replace('>> ', '').replace('.. ', '').splitlines()
    assert out == [
        'x = [1, 2] (ints)',
        '[10, 20] (ints)',
        "line 1, column 1: unknown name 'nope'",
        '    nope;',
        '    ^',
    ]


def test_repl_ends_at_end_of_input():
    r = ttc('rasp', input='indices;\n')
    assert r.returncode == 0 and '[0, 1, 2, 3, 4]' in r.stdout  # the default input: hello


def errors(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == '' and 'Traceback' not in r.stderr and r.stderr.startswith('ttc: error: ')
    for n in needles:
        assert n in r.stderr, r.stderr


def test_errors_exit_2_with_place_and_text(tmp_path):
    (f := tmp_path / 'bad.rasp').write_text(
        'x = 1;\ny = aggregate(select(indices, indices, <), tokens);\n'
    )
    r = ttc('rasp', f, '--input', 'abc')
    errors(
        r,
        'line 2, column 5: aggregate cannot average values that are not numbers',
        '    y = aggregate(',
    )
    (f := tmp_path / 'syntax.rasp').write_text('def f(a) {\n  return a +;\n}\n')
    errors(ttc('rasp', f), "line 2, column 13: expected an expression, found ';'")
    errors(ttc('rasp', f.with_name('missing.rasp')), 'cannot read')
    errors(ttc('rasp', 'lib:nope'), "no library program 'nope'")
    errors(
        ttc('rasp', 'lib:sort', '--name', 'nope'),
        "the program has no s-op named 'nope'; its s-ops: sort",
    )
    errors(ttc('rasp', 'lib:sort', '--input', ''), 'the input is empty')
    errors(ttc('rasp', '--analyse'), '--name, --json, --analyse and --draw need a program FILE')
