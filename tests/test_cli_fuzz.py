"""Random command lines drawn from `ttc`'s grammar, good and bad, each end in exit code 0 or 2.

Exit code 2 comes with exactly one line on standard error: never a traceback, never another
exception. `run` is drawn with `--dry-run`, which checks everything and trains nothing."""

import contextlib
import dataclasses
import io
import random
import shutil
from pathlib import Path
import pytest
import torch
from ttc_nb.cli import main
from ttc_nb.runs.registry import all_experiments, run_experiment

EXPERIMENTS = all_experiments()
DRAWS = 250

VALUES = [
    '0',
    '1',
    '7',
    '1000',
    '-1',
    '-5',
    '0.5',
    '1e-3',
    '-0.1',
    '1e308',
    '1e400',
    'nan',
    'inf',
    '-inf',
    'abc',
    'cosine',
    'constant',
    'minimal',
    '7-10',
    '1' + '0' * 400,
    '',
    ' ',
    '1,2',
    '1,,2',
    ',',
    '1,x',
    '0,1',
    '3,3',
    'true',
    'false',
    'yes',
    'no',
    'maybe',
    '2**40',
    '٣',
]
DURATIONS = [
    '90s',
    '9m',
    '2h',
    '1h30m',
    '0s',
    '1.5m',
    '9 min',
    '-1s',
    '',
    'abc',
    '1.5',
    '10',
    'm',
    '1h30',
]
STEPS = ['1', '1,2,4', '8,1', '2,2', '32', '0', '-1', '1,x', '', ',', '1,,2', '1.5', 'four']
DEVICES = ['cpu', 'cuda', 'cuda:1', 'mps', 'tpu', 'meta', '', 'cpu:0']


class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (shutil.copyfile, (__file__, str(self.marker)))


@pytest.fixture(scope='module')
def paths(tmp_path_factory):
    "Run directories good, damaged and unsafe, an empty directory, a file and a path to nothing."
    root = tmp_path_factory.mktemp('fuzz')
    good, _ = run_experiment('prefix-parity', 'ci', out=root / 'good', device='cpu', quiet=True)

    def copy(name, file, content):
        d = Path(shutil.copytree(good, root / name))
        if isinstance(content, bytes):
            (d / file).write_bytes(content)
        else:
            (d / file).write_text(content)
        return d

    ckpt = (good / 'checkpoint.pt').read_bytes()
    log = (good / 'metrics.jsonl').read_text()
    dirs = [
        good,
        copy('bad-config', 'config.json', '{"exp'),
        copy(
            'odd-config',
            'config.json',
            '{"experiment": "prefix-parity", "preset": "ci", "config": {"width": -5}}',
        ),
        copy('bad-ckpt', 'checkpoint.pt', ckpt[: len(ckpt) // 2]),
        copy('empty-ckpt', 'checkpoint.pt', b''),
        copy('bad-curve', 'curve.json', '[]'),
        copy('bad-summary', 'summary.json', '{'),
        copy('bad-log', 'metrics.jsonl', '{"upd\n' + log),
        copy('torn-log', 'metrics.jsonl', log + '{"update": 99999, "loss": 0.5'),
    ]
    unsafe = Path(shutil.copytree(good, root / 'unsafe'))
    torch.save(dict(model={}, extra=Payload(root / 'ran')), unsafe / 'checkpoint.pt')
    (root / 'empty').mkdir()
    return root, [*dirs, unsafe, root / 'empty', good / 'env.json', root / 'nothing']


@pytest.fixture(autouse=True)
def cpu_and_quiet(monkeypatch):
    monkeypatch.setenv('TTC_DEVICE', 'cpu')
    monkeypatch.setenv('CI', 'true')


def draw(rng, paths):
    "One random argument list of `ttc`."
    pick = lambda xs: xs[rng.randrange(len(xs))]
    maybe = lambda p=0.5: rng.random() < p
    # a report draws its plots, a third of a second each, and takes few arguments to vary
    command = pick(['run'] * 11 + ['eval'] * 4 + ['report'] + ['list'] * 2)
    if command == 'list':
        return ['list', *pick([[], [], ['extra'], ['--help'], ['--frobnicate']])]
    if command in ('eval', 'report'):
        argv = [command, str(pick(paths))]
        if command == 'eval' and maybe():
            argv += ['--steps', pick(STEPS)]
        if command == 'eval' and maybe(0.2):
            argv += ['--device', pick(DEVICES)]
        return argv + pick([[]] * 8 + [['--frobnicate'], ['extra']])
    name = pick(sorted(EXPERIMENTS) + ['nope', '', 'PREFIX-PARITY', 'prefix_parity'])
    argv = ['run'] + ([name] if maybe(0.85) else [])
    if maybe(0.7):
        presets = list(EXPERIMENTS[name].presets) if name in EXPERIMENTS else ['ci']
        argv += ['--preset', pick(presets + ['tpu', '', 'CI'])]
    keys = (
        [f.name for f in dataclasses.fields(EXPERIMENTS[name].Config)]
        if name in EXPERIMENTS
        else ['lr', 'width']
    )
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        key = pick(keys + ['depth', 'lr ', 'LR', ''])
        argv += ['--set', pick([f'{key}={pick(VALUES)}'] * 9 + [key])]
    if maybe(0.4):
        argv += ['--out', str(pick(paths))]
    if maybe(0.25):
        argv += ['--resume']
    if maybe(0.15):
        argv += ['--time-limit', pick(DURATIONS)]
    if maybe(0.1):
        argv += ['--nproc', pick(['1', '2', '0', 'x'])]
    if maybe(0.1):
        argv += ['--compile']
    if maybe(0.1):
        argv += ['--device', pick(DEVICES)]
    return argv + ['--dry-run']


def ttc(argv):
    "Run `ttc argv` in this process: (exit code, stdout, stderr)."
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue(), err.getvalue()


def test_every_command_line_exits_0_or_2_with_one_line(paths):
    root, pool = paths
    rng, codes = random.Random(0), {0: 0, 2: 0}
    for _ in range(DRAWS):
        argv = draw(rng, pool)
        code, out, err = ttc(argv)
        assert code in (0, 2), (argv, code, err)
        assert 'Traceback' not in err + out, (argv, err)
        if code == 2:
            assert len(err.splitlines()) == 1 and err.strip(), (argv, err)
        codes[code] += 1
    print(f'{DRAWS} command lines: {codes[0]} exited 0, {codes[2]} exited 2 with one line')
    assert min(codes.values()) > DRAWS // 10, codes  # both outcomes are well represented
    assert not (root / 'ran').exists()
    assert not (root / 'nothing').exists() and not list(
        (root / 'empty').iterdir()
    )  # a dry run creates nothing
