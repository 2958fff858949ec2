"""Every `#| cuda` cell of the notebooks trains a preset that still builds.

Nobody runs the `#| cuda` cells here (nbdev_test skips them without `--flags cuda`), so this test
keeps them from rotting: it finds each one, reads the experiment and preset its `ensure_run` trains,
checks that `ttc run EXP --preset P --dry-run` accepts them, and builds the preset's model and a
training batch of two samples in this process, and computes their loss once, without training.
"""

import ast
import dataclasses
import json
import re
import pytest
import torch
from conftest import ROOT, ttc
from ttc_nb.runs.registry import all_experiments, get_experiment
from ttc_nb.recurrence.experiments import MODELS
from ttc_nb.rasp.experiments import TABLE1_PROGRAMS

GPU_PRESETS = {'act-parity', 'act-logic', 'act-addition', 'act-sort', 'pondernet-parity'}


def cuda_cells(nbs=ROOT / 'nbs'):
    "[(notebook name, experiment, preset)] of the `#| cuda` cells under `nbs`."
    out = []
    for p in sorted(nbs.glob('*.ipynb')):
        for c in json.loads(p.read_text())['cells']:
            src = ''.join(c['source'])
            if c['cell_type'] != 'code' or not re.search(r'^#\|\s*cuda\s*$', src, re.M):
                continue
            calls = [
                n
                for n in ast.walk(ast.parse(src))
                if isinstance(n, ast.Call) and getattr(n.func, 'id', None) == 'ensure_run'
            ]
            assert len(calls) == 1, f'{p.name}: a #| cuda cell trains one preset with ensure_run'
            name, preset = (ast.literal_eval(a) for a in calls[0].args[:2])
            out.append((p.name, name, preset))
    return out


CELLS = cuda_cells()


def test_every_gpu_preset_of_act_has_its_cell():
    assert {name for nb, name, _ in CELLS if nb == '12_act.model.ipynb'} == GPU_PRESETS
    assert all(preset == 'gpu' for *_, preset in CELLS)


LOOPED_GPU = {
    f'{m}-{t}'
    for m in ('looped', 'standard')
    for t in ('linear', 'noisy-linear', 'sparse-linear', 'tree', 'relu2nn')
}


def test_every_gpu_preset_of_rasp_has_its_cell():
    programs = {f'rasp-{p.replace("_", "-")}' for p in TABLE1_PROGRAMS}
    assert {name for nb, name, _ in CELLS if nb == '25_rasp.train.ipynb'} == programs


def test_every_gpu_preset_of_the_looped_transformers_has_its_cell():
    assert {name for nb, name, _ in CELLS if nb == '31_looped.model.ipynb'} == LOOPED_GPU


@pytest.mark.parametrize(
    'nb,name',
    [
        ('42_sudoku.rrn.ipynb', 'sudoku-rrn'),
        ('43_sudoku.deq.ipynb', 'sudoku-deq'),
        ('44a_sudoku.trm.ipynb', 'sudoku-trm'),
        ('10_examples.prefix_parity.ipynb', 'prefix-parity'),
    ],
)
def test_every_gpu_preset_of_a_one_experiment_page_has_its_cell(nb, name):
    assert [n for page, n, _ in CELLS if page == nb] == [name]


def test_every_gpu_preset_of_the_learned_adjacencies_and_recurrence_has_its_cell():
    assert {name for nb, name, _ in CELLS if nb == '44_sudoku.pgadj.ipynb'} == {'sudoku-pgadj'}
    recurrence = {f'recurrence-{t}-{m}' for t in ('paths', 'sort') for m in MODELS}
    assert {name for nb, name, _ in CELLS if nb == '51_recurrence.model.ipynb'} == recurrence


def test_every_gpu_preset_has_a_cell():
    gpu = {name for name, e in all_experiments().items() if 'gpu' in e.presets}
    assert gpu == {name for _, name, preset in CELLS if preset == 'gpu'}


def test_the_finder_reads_a_cell(tmp_path):
    cell = dict(
        cell_type='code',
        source=['#| cuda\n', "s = ensure_run('e-x', 'gpu', out=Path('runs'), device='cuda')"],
    )
    skipped = dict(cell_type='code', source=["s = ensure_run('other', 'cpu', out=Path('r'))"])
    (tmp_path / 'n.ipynb').write_text(json.dumps(dict(cells=[cell, skipped])))
    assert cuda_cells(tmp_path) == [('n.ipynb', 'e-x', 'gpu')]


@pytest.mark.parametrize('nb,name,preset', CELLS)
def test_the_cell_builds_without_training(nb, name, preset, tmp_path):
    r = ttc('run', name, '--preset', preset, '--dry-run', '--out', tmp_path / 'run')
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert (plan['experiment'], plan['preset']) == (name, preset)
    assert not (tmp_path / 'run').exists()  # a dry run creates nothing
    exp = get_experiment(name)
    cfg = exp.config(preset)
    if exp.costs.small:  # data sets that take minutes to build: sets of 8 puzzles at the most
        cfg = dataclasses.replace(cfg, **{k: min(v, 8) for k, v in exp.costs.small(cfg).items()})
    else:  # sets of 8 examples at the most: RASP's 52,000 labelled inputs take 10 s to build
        sizes = [f.name for f in dataclasses.fields(cfg) if f.name.endswith('_size')]
        cfg = dataclasses.replace(
            cfg, **{k: min(getattr(cfg, k), 8) for k in sizes if k != 'batch_size'}
        )
    # The preset's network, on a batch of two of its samples: at its own batch size, one loss of
    # the RRN's or the learned adjacencies' gpu preset took 10 to 14 CPU-s.
    cfg = dataclasses.replace(cfg, batch_size=2)
    setup = exp.setup(cfg)
    g = torch.Generator().manual_seed(0)
    batch = setup.sample(g, 0) if setup.curriculum else setup.sample(g)
    loss = setup.loss(setup.model, batch)  # with its graph: the DEQ's backward pass hooks onto it
    assert torch.isfinite(loss[0] if isinstance(loss, tuple) else loss)
