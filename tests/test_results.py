"""The committed results are light.

Weights-only checkpoints that something loads, logs of at most 200 kB, only the plots a page shows,
and a command that rebuilds each run's config."""

import json
import sys
from dataclasses import asdict
from pathlib import Path
import torch
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import slim_results as S
from ttc_nb.runs.registry import stale_runs

FILES = S.tracked()  # the committed files under nbs/results that are still on disk


def named(name):
    return [f for f in FILES if Path(f).name == name]


def test_no_file_over_5mb():
    assert [f for f in FILES if (ROOT / f).stat().st_size > S.MAX_FILE] == []


def test_checkpoints_hold_weights_only():
    assert (
        named('checkpoint.pt')
        and [w for f in named('checkpoint.pt') if (w := S.checkpoint_problem(ROOT / f))] == []
    )


def test_every_checkpoint_is_loaded():
    load = S.loaders()
    assert [f for f in named('checkpoint.pt') if str(Path(f).parent) not in load] == []


def test_metrics_logs_at_most_200kb():
    assert [f for f in named('metrics.jsonl') if (ROOT / f).stat().st_size > S.MAX_METRICS] == []


def test_plots_only_where_a_page_shows_them():
    shown = S.shown_plots()
    assert 'nbs/results/rrn/cpu/compute_curve.png' in shown  # README.md's
    assert [f for f in FILES if Path(f).name in S.PLOTS and f not in shown] == []


def test_every_config_has_the_command_that_rebuilds_it():
    assert len(named('config.json')) > 100
    assert [w for f in named('config.json') if (w := S.command_problem(ROOT / f))] == []


NOTEBOOK = [
    "RESULTS = Path('results/m')\nNAMES = ('b', 'c')",
    "for name in ('a',): load_run(RESULTS/name, 'cpu')",  # a loop over a literal tuple
    "for name in NAMES: load_run(RESULTS/name, 'cpu')",  # over a name bound to one
    "def probe(run): return load_run(Path('results/m')/run)\n"
    "x = {k: probe(r) for k, r in {'one': 'sub/d'}.items()}",
    # fills a committed cache: not a load
    "if not (RESULTS/'cache.json').exists(): load_run(RESULTS/'e')",
    "runs = {s: load_run(RESULTS/'g'/f'seed={s}') for s in (1, 2)}",  # ints in an f-string
    '!ls results',
]


# The notebook is `NOTEBOOK`; the run directories are under nbs/results/m.
def fake_tree(root, runs):
    "A repository at `root` with one notebook and a run directory per name in `runs`."
    (root / 'nbs').mkdir(parents=True)
    cells = [
        dict(cell_type='code', source=c, metadata={}, outputs=[], execution_count=None)
        for c in NOTEBOOK
    ]
    (root / 'nbs' / 'a.ipynb').write_text(
        json.dumps(dict(cells=cells, metadata={}, nbformat=4, nbformat_minor=5))
    )
    for r in runs:
        d = root / 'nbs' / 'results' / 'm' / r
        d.mkdir(parents=True)
        torch.save(
            dict(model={'w': torch.tensor([1.0, float('nan')])}, opt={}, update=3, elapsed=1.5),
            d / 'checkpoint.pt',
        )
    return sorted(
        str(p.relative_to(root)) for p in (root / 'nbs' / 'results').rglob('*') if p.is_file()
    )


def test_the_scanner_resolves_loops_and_parameters_and_fails_on_an_unloaded_checkpoint(tmp_path):
    files = fake_tree(tmp_path, ['a', 'b', 'c', 'sub/d', 'e', 'f', 'g/seed=1', 'g/seed=2'])
    load = S.loaded_in(S.sources(tmp_path))
    assert set(load) == {
        f'nbs/results/m/{r}' for r in ('a', 'b', 'c', 'sub/d', 'g/seed=1', 'g/seed=2')
    }
    unloaded = [
        w for w in S.rule_problems(files, tmp_path, load=load, shown=set()) if 'loads it' in w
    ]
    assert unloaded == [
        f'nbs/results/m/{r}/checkpoint.pt: no notebook, test or benchmark loads it'
        for r in ('e', 'f')
    ]


def test_slim_keeps_the_weights_of_a_loaded_run_alone_and_removes_the_rest(tmp_path):
    fake_tree(tmp_path, ['a', 'e'])
    from ttc_nb.runs.registry import get_experiment

    cfg = get_experiment('prefix-parity').config('ci', ['updates=41'])
    log = [json.dumps(dict(update=i, loss=0.5, lr=1e-3)) + '\n' for i in range(1, 30001)]
    log.insert(
        15000, json.dumps(dict(update=15000, valid_exact=0.5)) + '\n'
    )  # 1.2 MB, one evaluation record
    for r in ('a', 'e'):
        d = tmp_path / 'nbs' / 'results' / 'm' / r
        (d / 'config.json').write_text(
            json.dumps(dict(experiment='prefix-parity', preset='ci', config=asdict(cfg)), indent=2)
        )
        (d / 'summary.json').write_text(json.dumps(dict(finished=True), indent=2))
        (d / 'metrics.jsonl').write_text(''.join(log))
        (d / 'learning.png').write_bytes(b'png')
    load = S.loaded_in(S.sources(tmp_path))
    for r in ('a', 'e'):
        S.slim(f'nbs/results/m/{r}', tmp_path, load=load, shown=set(), say=lambda m: None)
    files = sorted(
        str(p.relative_to(tmp_path))
        for p in (tmp_path / 'nbs' / 'results').rglob('*')
        if p.is_file()
    )
    assert S.rule_problems(files, tmp_path, load=load, shown=set()) == []
    a, e = tmp_path / 'nbs' / 'results' / 'm' / 'a', tmp_path / 'nbs' / 'results' / 'm' / 'e'
    assert not (e / 'checkpoint.pt').exists() and not (a / 'learning.png').exists()
    c = torch.load(a / 'checkpoint.pt', weights_only=True)
    assert (c['update'], c['elapsed'], c['world']) == (3, 1.5, 1) and torch.equal(
        c['model']['w'][:1], torch.tensor([1.0])
    )
    recs = [json.loads(line) for line in (a / 'metrics.jsonl').read_text().splitlines()]
    assert (
        recs[0]['update'] == 1
        and recs[-1]['update'] == 30000
        and sum('valid_exact' in r for r in recs) == 1
    )
    assert json.loads((a / 'summary.json').read_text())['metrics_subsampled'] == dict(
        records=30001, kept=len(recs)
    )
    _, kept = S.subsample(
        a / 'metrics.jsonl', a / 'summary.json', target=S.METRICS_TARGET // 2
    )  # again, smaller
    assert json.loads((a / 'summary.json').read_text())['metrics_subsampled'] == dict(
        records=30001, kept=kept
    ) and kept < len(recs)
    assert (
        json.loads((a / 'config.json').read_text())['command']
        == 'ttc run prefix-parity --preset ci --set updates=41'
    )


# A committed run is read, never retrained: no preset or default may have moved.
def test_every_committed_run_is_still_built_by_its_preset():
    "Each committed run's recorded command still builds its recorded config."
    assert stale_runs(ROOT / 'nbs' / 'results') == {}
