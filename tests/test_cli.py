"""The `ttc` command line as a user meets it.

Exit codes, one-line errors, and a run from start to report."""

import json
import pytest
from conftest import ttc, ttc_many, ttc_process, one_line_error
from ttc_nb.train.fit import loss_ratio


def test_help():
    for r in ttc_many(
        ('--help',), ('run', '--help'), ('eval', '--help'), ('report', '--help'), ('list', '--help')
    ):
        assert r.returncode == 0 and 'usage: ttc' in r.stdout, r.stderr


def test_the_installed_script_runs_and_fails_in_one_line():
    "The other tests fork `ttc` from a server; this one runs the console script a user runs."
    r = ttc_process('list')
    assert r.returncode == 0 and 'prefix-parity' in r.stdout, r.stderr
    one_line_error(ttc_process('run', 'nope'), "invalid choice: 'nope'")


def test_list_names_every_experiment_with_presets():
    r = ttc('list')
    assert r.returncode == 0
    assert any(
        line.startswith('prefix-parity') and '[ci|cpu|gpu]' in line
        for line in r.stdout.splitlines()
    )


USER_ERRORS = [
    (('run', 'nope'), ["invalid choice: 'nope'", 'prefix-parity']),
    (('run', 'prefix-parity', '--preset', 'huge'), ["unknown preset 'huge'", 'ci, cpu, gpu']),
    (
        ('run', 'prefix-parity', '--preset', 'ci', '--set', 'lr'),
        ["'lr' is not of the form key=value"],
    ),
    (
        ('run', 'prefix-parity', '--preset', 'ci', '--set', 'depth=3'),
        ["unknown key 'depth'", 'valid keys:', 'width'],
    ),
    (
        ('run', 'prefix-parity', '--preset', 'ci', '--set', 'updates=1e3'),
        ["bad value '1e3' for updates: expected int"],
    ),
    (('run', 'prefix-parity', '--resume'), ['--resume needs the run directory']),
    (
        ('run', 'sudoku-rrn', '--preset', 'ci', '--set', 'bands=hard'),
        ["sudoku-rrn: a band is 'minimal' or a range of givens LOW-HIGH", "got 'hard'"],
    ),
    (
        ('run', 'sudoku-rrn', '--preset', 'ci', '--set', 'givens=50,60'),
        ['givens must be a number or a range (low, high) within 0..16, got (50, 60)'],
    ),
    (
        ('run', 'sudoku-rrn', '--preset', 'ci', '--set', 'alpha=1.5'),
        ['alpha must be a number from 0.0 to 1.0, got 1.5'],
    ),
    (
        ('run', 'sudoku-rrn', '--preset', 'ci', '--set', 'min_steps=9'),
        ['min_steps must be 0 (always train_steps) or 1 to train_steps=4, got 9'],
    ),
    (
        ('run', 'sudoku-deq', '--preset', 'ci', '--set', 'backward=adjoint'),
        ["backward must be one of 'implicit', 'phantom', 'unrolled', got 'adjoint'"],
    ),
    (
        ('run', 'sudoku-deq', '--preset', 'ci', '--set', 'method=newton'),
        ["method must be one of 'anderson', 'broyden', 'iterate', got 'newton'"],
    ),
    (
        ('run', 'sudoku-deq', '--preset', 'ci', '--set', 'fallback=newton'),
        ["fallback must be one of '', 'anderson', 'broyden', 'iterate', got 'newton'"],
    ),
    (
        ('run', 'sudoku-deq', '--preset', 'ci', '--set', 'rho_reg=-1'),
        ['rho_reg must be a number of at least 0.0, got -1.0'],
    ),
    (('run',), ['name the experiment to run, or resume one with --resume --out DIR']),
    (('run', 'prefix-parity', '--time-limit', '10 minutes'), ["'10 minutes' is not a duration"]),
    (('frobnicate',), ["invalid choice: 'frobnicate'"]),
    (('eval', 'no/such/run'), ['has no checkpoint.pt']),
    (('report', 'no/such/run'), ['is not a run directory']),
]


@pytest.fixture(scope='module')
def user_errors():
    "Every case of USER_ERRORS run, several at a time: {args: CompletedProcess}."
    return dict(zip([a for a, _ in USER_ERRORS], ttc_many(*[a for a, _ in USER_ERRORS])))


@pytest.mark.parametrize('args,needles', USER_ERRORS)
def test_user_errors_exit_2_with_one_line(args, needles, user_errors):
    one_line_error(user_errors[args], *needles)


def test_run_eval_report(tmp_path):
    out = tmp_path / 'run'
    r = ttc('run', 'prefix-parity', '--preset', 'ci', '--out', out)
    assert r.returncode == 0, r.stderr
    assert f'results: {out}' in r.stdout
    ratio, why = loss_ratio(out)
    assert ratio <= 0.95, why  # it learned, not only ran: its training loss fell by 5% at least
    for f in [
        'config.json',
        'env.json',
        'metrics.jsonl',
        'checkpoint.pt',
        'curve.json',
        'summary.json',
        'learning.png',
        'compute_curve.png',
    ]:
        assert (out / f).stat().st_size > 0, f
    s = json.loads((out / 'summary.json').read_text())
    assert s['experiment'] == 'prefix-parity' and s['preset'] == 'ci' and s['wall_time_s'] > 0
    assert {'torch', 'python', 'commit', 'device'} <= set(s['env'])
    held, combined, zero = ttc_many(
        ('run', 'prefix-parity', '--preset', 'ci', '--out', out),
        ('run', 'prefix-parity', '--out', out, '--resume', '--set', 'lr=1'),
        ('eval', out, '--steps', '0,4'),
    )
    one_line_error(held, 'already holds a run')
    one_line_error(combined, 'cannot be combined with --resume')
    one_line_error(zero, 'at least 1')
    r = ttc('eval', out, '--steps', '1,3,50')
    assert r.returncode == 0, r.stderr
    assert [c['steps'] for c in json.loads((out / 'curve.json').read_text())][:3] == [1, 3, 50]
    assert 'exact' in r.stdout.splitlines()[0]
    (out / 'compute_curve.png').unlink()
    r = ttc('report', out)
    assert r.returncode == 0 and (out / 'compute_curve.png').exists(), r.stderr
    assert '"wall_time_s"' in r.stdout


def test_compile_trains_the_same_network(tmp_path):
    "`--compile` runs the loop body under torch.compile: the same run, to float tolerance."
    for r in ttc_many(
        *[
            (
                'run',
                'prefix-parity',
                '--preset',
                'ci',
                '--out',
                tmp_path / name,
                *(['--compile'] if name == 'compiled' else []),
            )
            for name in ('eager', 'compiled')
        ]
    ):
        assert r.returncode == 0, r.stderr
    eager, comp = (
        json.loads((tmp_path / n / 'summary.json').read_text()) for n in ('eager', 'compiled')
    )
    assert comp['config']['compile'] is True and eager['config']['compile'] is False
    for a, b in zip(eager['curve'], comp['curve']):
        assert a['steps'] == b['steps'] and abs(a['acc'] - b['acc']) < 0.02, (a, b)
