"""`ttc atlas` as a user meets it: the table of the committed headline runs, and one-line errors.

The table has a row for every method."""

import builtins
import importlib
import io
import json
import os
from pathlib import Path
import pytest
from conftest import ttc, ROOT, one_line_error
from ttc_nb.report.atlas import HEADLINE

METHODS = {
    'ACT',
    'PonderNet',
    'prefix parity',
    'RRN',
    'DEQ',
    'TRM',
    'RRN, hard puzzles',
    'DEQ, hard puzzles',
    'learned adjacencies',
    'top-layer recurrence',
    'looped transformer',
    'RASP depth',
}


def test_atlas_of_the_committed_runs(tmp_path):
    r = ttc('atlas', '--json', '--out', tmp_path / 'atlas')
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert len(r.stdout.strip().splitlines()) == 1 and {x['method'] for x in rows} == METHODS
    assert sorted(p.name for p in (tmp_path / 'atlas').iterdir()) == [
        'atlas.json',
        'atlas.md',
        'curves.png',
        'gains.png',
    ]
    act = next(x for x in rows if x['method'] == 'ACT')
    assert (act['k_train'], act['1x'], act['8x']) == (
        100,
        0.2,
        0.2,
    )  # 8x from the checkpoint (more_iterations.json)
    looped = next(x for x in rows if x['method'] == 'looped transformer')
    assert (looped['4x'], looped['8x']) == (
        None,
        None,
    )  # no checkpoint: not measured, never a guess
    assert 'not measured' in (tmp_path / 'atlas' / 'atlas.md').read_text()


def test_a_bad_directory_is_skipped_while_a_run_remains(tmp_path):
    run = ROOT / 'nbs/results/prefix-parity'
    r = ttc('atlas', run, tmp_path, '--json', '--out', tmp_path / 'a')
    assert r.returncode == 0, r.stderr
    assert (
        r.stderr == f'ttc: warning: skipped: {tmp_path} is not a run directory (no config.json)\n'
    )
    assert {x['method'] for x in json.loads(r.stdout)} == {'prefix-parity'}


def test_errors_when_no_run_remains(tmp_path):
    (tmp_path / 'run').mkdir()
    (tmp_path / 'run' / 'config.json').write_text(
        (ROOT / 'nbs/results/prefix-parity/config.json').read_text()
    )
    one_line_error(
        ttc('atlas', tmp_path, '--out', tmp_path / 'a'), 'is not a run directory (no config.json)'
    )
    one_line_error(
        ttc('atlas', tmp_path / 'run', '--out', tmp_path / 'a'),
        'has no compute curve (no curve.json): ttc eval',
    )


def test_the_headline_runs_need_their_results_folder(tmp_path):
    "Outside a checkout the headline runs are where --results says; a missing folder is one line."
    one_line_error(
        ttc('atlas', '--results', tmp_path / 'none', '--out', tmp_path / 'a'),
        f'no committed runs at {tmp_path / "none"}: name the run directories, '
        'or give the results folder of a checkout with --results',
    )
    r = ttc(
        'atlas', '--json', '--results', ROOT / 'nbs/results', '--out', tmp_path / 'a', cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) > len(METHODS)


# The report module of each method's reproduction rows.
PAGES = {
    'ACT': 'act',
    'PonderNet': 'act',
    'RRN': 'rrn',
    'DEQ': 'deq',
    'TRM': 'trm',
    'RRN, hard puzzles': 'trm',
    'DEQ, hard puzzles': 'trm',
    'learned adjacencies': 'pgadj',
    'top-layer recurrence': 'recurrence',
    'looped transformer': 'looped',
    'RASP depth': 'rasp',
    'prefix parity': 'prefix_parity',
}


def read_while(monkeypatch, call):
    "The files opened while `call()` runs: every read goes through `io.open`."
    opened = []
    io_open = io.open

    def spy(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)):
            opened.append(Path(file).resolve())
        return io_open(file, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(io, 'open', spy)
        m.setattr(builtins, 'open', spy)
        call()
    return opened


@pytest.mark.parametrize('method', sorted(PAGES))
def test_each_headline_run_is_one_its_page_reproduction_rows_read(method, monkeypatch):
    "The atlas shows for a method a run that the method's reproduction rows rest on."
    results = (ROOT / 'nbs' / 'results').resolve()
    report = importlib.import_module(f'ttc_nb.report.{PAGES[method]}')
    opened = read_while(monkeypatch, lambda: report.reproduction(results))
    headline = HEADLINE[method]
    for run in headline if isinstance(headline, tuple) else (headline,):
        run = results / run
        assert any(run in f.parents for f in opened), (
            f'the atlas shows {run} for {method}, which ttc_nb.report.{PAGES[method]}'
            '.reproduction never reads'
        )


def test_the_spy_sees_a_read(monkeypatch, tmp_path):
    (tmp_path / 'a.json').write_text('1')
    assert read_while(monkeypatch, lambda: (tmp_path / 'a.json').read_text()) == [
        (tmp_path / 'a.json').resolve()
    ]
    assert set(PAGES) == METHODS == set(HEADLINE)
