"""`ttc atlas` as a user meets it: the table of the committed headline runs, and one-line errors.

The table has a row for every method."""

import json
from conftest import ttc, ROOT, one_line_error

METHODS = {
    'ACT',
    'PonderNet',
    'prefix parity',
    'RRN',
    'DEQ',
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
        0.399,
        0.399,
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
