"""A run flows one way: what `ttc run` writes, it hands on, and never reads back.

Each test trains a `ci` run in this process with every file access recorded: a file opened to write
(or append), or renamed into place as `atomic_write` does, is written; a file opened to read, or
loaded with `torch.load`, is read. A path read after this process wrote it is a value that was in
memory and went through the disk for nothing: `fit` knew its training seconds, `run_experiment`
its summary, curve and records.
"""

import builtins
import io
import os
import pytest
import torch

from ttc_nb.cli import main
from ttc_nb.runs.registry import ensure_run, run_experiment
from ttc_nb.train.processes import Stop, Stopped


class Accesses:
    "Every path this process writes or reads while entered, in order, as ('write' or 'read', path)."

    def __init__(self, monkeypatch):
        self.events, self.mp = [], monkeypatch

    def note(self, kind, path):
        if isinstance(path, (str, bytes, os.PathLike)):
            self.events.append((kind, os.path.abspath(os.fsdecode(path))))

    def __enter__(self):
        opened, replace, load = io.open, os.replace, torch.load

        def open_(file, mode='r', *args, **kw):
            self.note('write' if set(mode) & set('wax+') else 'read', file)
            return opened(file, mode, *args, **kw)

        def replace_(src, dst, *args, **kw):
            replace(src, dst, *args, **kw)
            self.note('write', dst)

        def load_(f, *args, **kw):
            self.note('read', f)
            return load(f, *args, **kw)

        for owner, name, f in [
            (builtins, 'open', open_),
            (io, 'open', open_),  # what `Path.open`, `Path.read_text` and `zipfile` call
            (os, 'replace', replace_),
            (torch, 'load', load_),
        ]:
            self.mp.setattr(owner, name, f)
        return self

    def __exit__(self, *exc):
        self.mp.undo()

    def read_back(self):
        "The paths read after this process wrote them, anywhere, each once, in order."
        written, back = set(), []
        for kind, path in self.events:
            if kind == 'write':
                written.add(path)
            elif path in written and path not in back:
                back.append(path)
        return back


def run_cli(*args):
    "`ttc ARGS` in this process, on CPU; its exit code."
    try:
        return main([*map(str, args), '--device', 'cpu']) or 0
    except SystemExit as e:
        return e.code


def test_the_accesses_are_recorded(tmp_path, monkeypatch):
    "The check can fail: a file written, then read back, is caught, however it is read."
    with Accesses(monkeypatch) as a:
        (tmp_path / 'a.txt').write_text('a')
        torch.save({}, tmp_path / 'b.pt')
        os.replace(tmp_path / 'b.pt', tmp_path / 'c.pt')
        (tmp_path / 'a.txt').read_text()
        torch.load(tmp_path / 'c.pt')
    assert a.read_back() == [str(tmp_path / 'a.txt'), str(tmp_path / 'c.pt')]


def test_ttc_run_reads_back_nothing_it_wrote(tmp_path, monkeypatch, capsys):
    with Accesses(monkeypatch) as a:
        code = run_cli('run', 'prefix-parity', '--preset', 'ci', '--out', tmp_path / 'run')
    out = capsys.readouterr().out
    assert code == 0
    assert 'wall time' in out and 'length 16' in out  # the curve and time, from the summary
    assert not (back := a.read_back()), f'read back after writing: {back}'


def test_a_stopped_run_reads_back_nothing_it_wrote(tmp_path, monkeypatch, capsys):
    with Accesses(monkeypatch) as a:
        code = run_cli(
            'run',
            'prefix-parity',
            '--preset',
            'ci',
            '--out',
            tmp_path / 'run',
            '--time-limit',
            '0s',
        )
    assert code == 0
    assert 'stopped at update 1 of 40' in capsys.readouterr().err
    assert not (back := a.read_back()), f'read back after writing: {back}'


def test_ensure_run_returns_the_summary_it_trained_without_reading_it_back(tmp_path, monkeypatch):
    with Accesses(monkeypatch) as a:
        s = ensure_run('prefix-parity', 'ci', out=tmp_path / 'run', device='cpu')
    assert s['finished'] and s['config']['updates'] == 40
    assert not (back := a.read_back()), f'read back after writing: {back}'


def test_the_seconds_of_a_resumed_run_are_summed_over_its_sessions(tmp_path):
    run = tmp_path / 'run'
    with pytest.raises(Stopped) as e:  # the deadline has passed: stopped after update 1
        run_experiment('prefix-parity', 'ci', out=run, device='cpu', quiet=True, stop=Stop(0.0))
    first = e.value.elapsed
    assert first > 0
    _, s = run_experiment(out=run, resume=True, device='cpu', quiet=True)
    assert s['wall_time_s'] >= round(first, 2)
    assert s['wall_time_s'] == round(torch.load(run / 'checkpoint.pt')['elapsed'], 2)
