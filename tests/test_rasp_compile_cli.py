"""`ttc rasp --compile` as a user meets it.

The compiled transformers print what the interpreter prints, `--analyse` prints the compiled model's
shape, the user's mistakes exit with one line and code 2, and without `--compile` the command still
starts without PyTorch."""

import json
import subprocess
import sys
from conftest import ttc, ttc_many, one_line_error
from ttc_nb.rasp.interpreter import library
from ttc_nb.rasp.compiler.assemble import compile_rasp, library_vocab


def test_values_equal_the_interpreters(tmp_path):
    (f := tmp_path / 'p.rasp').write_text(
        'flip = length - indices - 1;\nflipped = aggregate(select(indices, flip, ==), tokens);\n'
        'count = selector_width(select(tokens, tokens, ==));\n'
    )
    cases = [
        ('lib:sort', 'dcbad', ()),
        ('lib:hist2_bos', '§abbcab', ()),
        ('lib:dyck2_ptf', '({)}(}', ()),
        ('lib:frac_prevs', 'abba', ()),
        (f, 'yxzzy', ('--vocab', 'xyz')),
    ]
    rs = ttc_many(
        *[('rasp', p, '--input', x, '--json') for p, x, _ in cases]
        + [('rasp', p, '--input', x, '--json', '--compile', *v) for p, x, v in cases]
    )
    for c, interp, comp in zip(cases, rs[: len(cases)], rs[len(cases) :]):
        assert interp.returncode == 0 and comp.returncode == 0, (c, interp.stderr, comp.stderr)
        assert comp.stdout == interp.stdout, c  # the same line of JSON: values, types and names
    assert json.loads(rs[-1].stdout) == {
        'flip': [4, 3, 2, 1, 0],
        'flipped': list('yzzxy'),
        'count': [2, 1, 2, 2, 2],
    }


def test_name_and_plain_output(tmp_path):
    interp, comp = ttc_many(
        ('rasp', 'lib:dyck1_ptf', '--input', '(()'),
        ('rasp', 'lib:dyck1_ptf', '--input', '(()', '--compile'),
    )
    assert comp.returncode == 0 and comp.stdout == interp.stdout and comp.stdout.count('\n') == 5
    r = ttc('rasp', 'lib:dyck1_ptf', '--input', '(()', '--compile', '--json', '--name', 'balance')
    assert (
        r.returncode == 0
        and r.stdout == json.dumps(library('dyck1_ptf')('(()', 'balance')['balance']) + '\n'
    ), r.stderr


def test_analyse_json_is_the_compiled_models_shape():
    r = ttc('rasp', 'lib:most_freq_bos', '--compile', '--analyse', '--json', '--max-len', '8')
    m = compile_rasp(library('most_freq_bos'), library_vocab('most_freq_bos'), 8)
    assert json.loads(r.stdout) == {
        'layers': len(m.heads),
        'heads': m.heads,
        'd_model': m.d_model,
        'params': sum(p.numel() for p in m.parameters()),
    }
    assert json.loads(r.stdout)['layers'] == 3 and r.stdout.count('\n') == 1  # the analysis's 3


def test_errors_exit_2_with_one_line(tmp_path):
    (f := tmp_path / 'p.rasp').write_text('x = tokens == "a";\n')
    rs = ttc_many(
        ('rasp', f, '--compile', '--input', 'ab'),
        ('rasp', 'lib:sort', '--compile', '--input', 'abx'),
        ('rasp', 'lib:sort', '--compile', '--input', 'abcd', '--max-len', '3'),
        ('rasp', 'lib:sort', '--vocab', 'ab'),
        ('rasp', f, '--compile', '--vocab', 'ab', '--input', 'ab', '--name', 'nope'),
    )
    texts = [
        '--compile needs --vocab CHARS for a program file: the characters its inputs may hold',
        "the token 'x' of the input is not in the vocabulary 'abcd' (--vocab)",
        'the input has 4 tokens, more than --max-len 3',
        '--vocab and --max-len go with --compile',
        "the program has no s-op named 'nope'; its s-ops: x",
    ]
    for r, text in zip(rs, texts, strict=True):
        one_line_error(r, line=f'ttc: error: {text}')


def imports_torch(*argv, stdin='') -> bool:
    "Whether `ttc ARGV` imports PyTorch, run in a fresh Python."
    code = (
        f'import sys\nfrom ttc_nb.cli import main\nmain({list(argv)!r})\n'
        'print("torch" in sys.modules, file=sys.stderr)'
    )
    r = subprocess.run([sys.executable, '-c', code], input=stdin, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stderr.splitlines()[-1] == 'True'


def test_only_compile_imports_torch():
    assert not imports_torch('rasp', '-', stdin='x = indices + 1;')
    assert not imports_torch('rasp', 'lib:sort', '--input', 'abc', '--json')
    assert imports_torch(
        'rasp', 'lib:sort', '--input', 'abc', '--compile'
    )  # the check sees torch where it is imported
