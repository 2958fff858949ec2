"""A run directory from anyone is safe to open, and each file missing or damaged gets one line.

The line of each of its files, missing or damaged, says which file, what is wrong, what to do."""

import contextlib
import io
import json
import shutil
from pathlib import Path
import numpy as np
import pytest
import torch
from ttc_nb.cli import main
from ttc_nb.train.files import load_checkpoint, previous
from ttc_nb.errors import UnsafeCheckpoint
from ttc_nb.train.processes import Stop, Stopped
from ttc_nb.runs.registry import run_experiment, ensure_run, load_run
from conftest import one_line_error

SETS = ['ckpt_every=5']  # prefix-parity's ci preset, 40 updates, a checkpoint every 5


@pytest.fixture(autouse=True)
def cpu_and_quiet(monkeypatch):
    monkeypatch.setenv('TTC_DEVICE', 'cpu')
    monkeypatch.setenv('CI', 'true')


def ttc(*argv):
    "Run `ttc argv...` in this process; return (exit code, stdout, stderr)."
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in argv])
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue(), err.getvalue()


def records(run):
    "The run's metric records without their wall-clock times."
    return [
        {k: v for k, v in json.loads(line).items() if k != 'time'}
        for line in (run / 'metrics.jsonl').read_text().splitlines()
    ]


def weights(run):
    return load_checkpoint(run / 'checkpoint.pt')['model']


class StopAfter(Stop):
    "Asks `fit` to stop after `n` updates."

    def __init__(self, n):
        super().__init__()
        self.n = n

    def __call__(self, needed=0.0):
        self.n -= 1
        if self.n <= 0:
            self.reason = 'stopped for the test'
        return self.reason


# The stopped run has its checkpoints at 10 (previous) and 12 (latest).
@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    "A finished run, and the same run stopped at update 12."
    root = tmp_path_factory.mktemp('runs')
    run_experiment('prefix-parity', 'ci', SETS, out=root / 'finished', device='cpu', quiet=True)
    with pytest.raises(Stopped):
        run_experiment(
            'prefix-parity',
            'ci',
            SETS,
            out=root / 'stopped',
            device='cpu',
            quiet=True,
            stop=StopAfter(12),
        )
    assert [
        load_checkpoint(p)['update']
        for p in (root / 'stopped/checkpoint.pt', root / 'stopped/checkpoint.prev.pt')
    ] == [12, 10]
    return root / 'finished', root / 'stopped'


@pytest.fixture
def finished(runs, tmp_path):
    return Path(shutil.copytree(runs[0], tmp_path / 'finished'))


@pytest.fixture
def stopped(runs, tmp_path):
    return Path(shutil.copytree(runs[1], tmp_path / 'stopped'))


class Payload:
    "A pickled call that would create a file."

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (shutil.copyfile, (__file__, str(self.marker)))


def evil(path, marker):
    torch.save(dict(model={}, update=1, elapsed=0.0, world=1, extra=Payload(marker)), path)


def test_unsafe_checkpoint_is_refused_by_load_run_and_ensure_run(finished, stopped, tmp_path):
    marker = tmp_path / 'ran'
    evil(finished / 'checkpoint.pt', marker)
    with pytest.raises(UnsafeCheckpoint, match='holds more than tensors and plain values') as e:
        load_run(finished, 'cpu')
    assert str(e.value).startswith(
        f'{finished / "checkpoint.pt"} holds more than'
    ) and '\n' not in str(e.value)
    evil(
        stopped / 'checkpoint.pt', marker
    )  # unfinished: ensure_run resumes it, and a good previous checkpoint is there
    with pytest.raises(UnsafeCheckpoint, match='holds more than tensors and plain values') as e:
        ensure_run('prefix-parity', 'ci', SETS, out=stopped, device='cpu')
    assert str(e.value).startswith(f'{stopped / "checkpoint.pt"} holds more than')
    one_line_error(
        ttc('run', '--resume', '--out', stopped),
        stopped / 'checkpoint.pt',
        'holds more than tensors and plain values',
    )
    assert not marker.exists()
    assert (
        load_checkpoint(previous(stopped / 'checkpoint.pt'))['update'] == 10
    )  # refused, not skipped: nothing was touched


@pytest.mark.parametrize('damage', ['cut short', 'empty', 'missing', 'not a zip'])
def test_a_damaged_latest_checkpoint_resumes_from_the_previous(damage, runs, stopped):
    ck = stopped / 'checkpoint.pt'
    if damage == 'cut short':
        ck.write_bytes(ck.read_bytes()[:-100])
    elif damage == 'empty':
        ck.write_bytes(b'')
    elif damage == 'missing':
        ck.unlink()  # a kill between keeping the previous and writing the latest
    else:
        ck.write_bytes(b'{"update": 12}')
    code, out, err = ttc('run', '--resume', '--out', stopped)
    assert code == 0, err
    why = {
        'cut short': 'is cut short or is not a checkpoint (no zip directory at its end)',
        'empty': 'is empty',
        'missing': 'is missing',
        'not a zip': 'is cut short or is not a checkpoint (no zip directory at its end)',
    }[damage]
    assert (
        err == f'ttc: warning: {ck} {why}; using {previous(ck)}, the checkpoint saved before it\n'
    )
    assert records(stopped) == records(runs[0])
    assert all(torch.equal(v, weights(runs[0])[k]) for k, v in weights(stopped).items())
    assert sorted(p.name for p in stopped.glob('checkpoint*')) == [
        'checkpoint.pt'
    ]  # finished: the weights only


def test_both_checkpoints_damaged(stopped):
    (stopped / 'checkpoint.pt').write_bytes(b'')
    previous(stopped / 'checkpoint.pt').write_bytes(
        previous(stopped / 'checkpoint.pt').read_bytes()[:1000]
    )
    one_line_error(
        ttc('run', '--resume', '--out', stopped),
        f'{stopped / "checkpoint.pt"} is empty, and {stopped / "checkpoint.prev.pt"} is cut short',
        'train the run again with the command in its config.json',
    )


def test_a_torn_last_log_line_is_dropped_and_the_run_resumes_exactly(runs, stopped):
    with open(stopped / 'metrics.jsonl', 'a') as f:
        f.write('{"update": 99999, "loss": 0.5')  # a kill in the middle of an append
    code, _, err = ttc('run', '--resume', '--out', stopped)
    assert (code, err) == (0, '')
    assert records(stopped) == records(runs[0])


def test_a_damaged_log_line_before_the_last_is_named(finished, stopped):
    for run, argv in (
        (finished, ('report', finished)),
        (stopped, ('run', '--resume', '--out', stopped)),
    ):
        rows = (run / 'metrics.jsonl').read_text().splitlines()
        (run / 'metrics.jsonl').write_text('\n'.join([rows[0][:20], *rows]) + '\n')
        one_line_error(
            ttc(*argv),
            f'{run / "metrics.jsonl"} has a damaged line 1',
            'delete that line to keep the rest of the log',
        )


def test_a_lost_summary_and_curve_are_rebuilt_by_resuming_without_training(runs, finished):
    (finished / 'summary.json').write_text('{"experiment": "prefix-par')
    one_line_error(
        ttc('report', finished),
        f'{finished / "summary.json"} is damaged (',
        f'rebuild it with: ttc run --resume --out {finished}',
    )
    (finished / 'curve.json').write_text('[]')
    one_line_error(
        ttc('report', finished),
        f'{finished / "curve.json"} is damaged (not what ttc writes there)',
        f'recompute it with: ttc eval {finished}',
    )
    log = (finished / 'metrics.jsonl').read_text()
    code, _, err = ttc('run', '--resume', '--out', finished)
    assert code == 0, err
    assert (finished / 'metrics.jsonl').read_text() == log  # nothing trained again
    summary = lambda d: {
        k: v
        for k, v in json.loads((d / 'summary.json').read_text()).items()
        if k not in ('env', 'wall_time_s', 'updates_per_s')
    }
    assert summary(finished) == summary(runs[0])
    assert json.loads((finished / 'curve.json').read_text()) == json.loads(
        (runs[0] / 'curve.json').read_text()
    )


def config_with(run, **change):
    saved = json.loads((run / 'config.json').read_text())
    (run / 'config.json').write_text(json.dumps(saved | dict(config=saved['config'] | change)))


@pytest.mark.parametrize(
    'damage,needles',
    [
        ('missing', ['config.json is missing: train the run again with ttc run']),
        (
            'not JSON',
            ['config.json is damaged (Expecting value', 'train the run again with ttc run'],
        ),
        (
            'not a config',
            [
                'config.json is damaged (not what ttc writes there): '
                'train the run again with ttc run'
            ],
        ),
        (
            'out of range',
            [
                'config.json records a config that prefix-parity does not '
                'allow (width must be an integer of at least 1, got -5)'
            ],
        ),
        (
            'unknown key',
            ['config.json records a config that prefix-parity does not allow (', 'depth'],
        ),
    ],
)
def test_a_damaged_config_is_named_by_eval_report_and_resume(damage, needles, finished):
    cfg = finished / 'config.json'
    if damage == 'missing':
        cfg.unlink()
    elif damage == 'not JSON':
        cfg.write_text('')
    elif damage == 'not a config':
        cfg.write_text('[1, 2]')
    elif damage == 'out of range':
        config_with(finished, width=-5)
    else:
        config_with(finished, depth=3)
    one_line_error(ttc('eval', finished), str(finished), *needles)
    if damage == 'missing':
        one_line_error(ttc('report', finished), 'is not a run directory (no config.json)')
        one_line_error(ttc('run', '--resume', '--out', finished), 'holds no run (no config.json)')
    else:
        if damage in ('not JSON', 'not a config'):
            one_line_error(ttc('report', finished), *needles)
        one_line_error(ttc('run', '--resume', '--out', finished), *needles)


@pytest.mark.parametrize('damage', ['cut short', 'empty', 'not a zip', 'no weights'])
def test_a_damaged_finished_checkpoint_is_named_by_eval(damage, finished):
    ck = finished / 'checkpoint.pt'
    if damage == 'cut short':
        ck.write_bytes(ck.read_bytes()[:2000])
    elif damage == 'empty':
        ck.write_bytes(b'')
    elif damage == 'not a zip':
        ck.write_text('checkpoint')
    else:
        torch.save(dict(update=40), ck)
    why = {
        'cut short': 'is cut short or is not a checkpoint',
        'empty': 'is empty',
        'not a zip': 'is cut short or is not a checkpoint',
        'no weights': "is not a checkpoint of a run (it has no 'model')",
    }[damage]
    one_line_error(
        ttc('eval', finished),
        f'{ck} {why}',
        'train the run again with the command in its config.json',
    )


@pytest.mark.parametrize(
    'setting,message',
    [
        ('width=-5', 'width must be an integer of at least 1, got -5'),
        ('batch_size=0', 'batch_size must be an integer of at least 1, got 0'),
        ('lr=nan', 'lr must be a finite number above 0, got nan'),
        ('test_steps=', 'test_steps must be one or more integers, each at least 1, got ()'),
    ],
)
def test_a_setting_out_of_range_is_refused_before_any_work(setting, message, tmp_path):
    one_line_error(
        ttc('run', 'prefix-parity', '--preset', 'ci', '--set', setting, '--out', tmp_path / 'run'),
        message,
    )
    assert not (tmp_path / 'run').exists()


def test_dry_run_prints_the_config_and_creates_nothing(tmp_path):
    code, out, err = ttc(
        'run',
        'prefix-parity',
        '--preset',
        'ci',
        '--set',
        'lr=0.01',
        '--out',
        tmp_path / 'run',
        '--dry-run',
    )
    assert (code, err) == (0, '')
    plan = json.loads(out)
    assert (
        plan['experiment'],
        plan['preset'],
        plan['run_dir'],
        plan['config']['lr'],
        plan['config']['updates'],
    ) == ('prefix-parity', 'ci', str(tmp_path / 'run'), 0.01, 40)
    assert not (tmp_path / 'run').exists()


# Older: from before the random states were tensors, with NumPy's state as NumPy holds it.
def old_checkpoint(path):
    "Rewrite the checkpoint at `path` as an older run in one process wrote it."
    c = load_checkpoint(path)
    rng = c['rng'][0]
    name, keys, *rest = rng['numpy']
    torch.save(
        dict(
            model=c['model'],
            opt=c['opt'],
            sched=c['sched'],
            gen=c['gen'][0],
            rng=rng | dict(numpy=(name, keys.numpy().astype(np.uint32), *rest)),
            update=c['update'],
            skipped=c['skipped'],
            elapsed=c['elapsed'],
        ),
        path,
    )


def test_an_older_checkpoint_converted_with_trust_resumes_exactly(runs, stopped):
    for ck in (stopped / 'checkpoint.pt', previous(stopped / 'checkpoint.pt')):
        old_checkpoint(ck)
    one_line_error(
        ttc('run', '--resume', '--out', stopped),
        'holds more than tensors and plain values (numpy.',
        'ttc convert-checkpoint',
    )
    one_line_error(
        ttc('convert-checkpoint', stopped / 'checkpoint.pt'),
        'pass --trust (trust=True) only if you trust where it came from',
    )
    for ck in (stopped / 'checkpoint.pt', previous(stopped / 'checkpoint.pt')):
        assert ttc('convert-checkpoint', ck, '--trust')[:2] == (
            0,
            f'{ck}: converted; it loads with weights_only=True now\n',
        )
    assert ttc('convert-checkpoint', stopped / 'checkpoint.pt')[:2] == (
        0,
        f'{stopped / "checkpoint.pt"} loads with weights_only=True already: nothing to convert\n',
    )
    code, _, err = ttc('run', '--resume', '--out', stopped)
    assert code == 0, err
    assert records(stopped) == records(runs[0])
    assert all(torch.equal(v, weights(runs[0])[k]) for k, v in weights(stopped).items())
