"""The experiment registry, its catalogue, and config overrides.

The catalogue names every experiment and command with its module, and every catalogued
experiment's `ci` preset runs end to end: here, or in the notebook whose tests train it."""

import argparse
import ast
import dataclasses
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
import pytest
import ttc_nb
from conftest import ROOT
from ttc_nb.train.fit import TrainConfig, loss_ratio
from ttc_nb.runs.catalogue import EXPERIMENT_MODULES, COMMANDS, load_command
from ttc_nb.runs.registry import (
    EXPERIMENTS,
    all_experiments,
    apply_overrides,
    get_experiment,
    run_experiment,
)
from ttc_nb.errors import UsageError

ALL = all_experiments()


@dataclasses.dataclass
class Cfg(TrainConfig):
    flag: bool = False
    name: str = 'a'
    ratios: tuple = (0.5, 1.0)


@pytest.mark.parametrize(
    'o,key,val',
    [
        ('flag=true', 'flag', True),
        ('flag=True', 'flag', True),
        ('flag=0', 'flag', False),
        ('name=b=c', 'name', 'b=c'),
        ('ratios=0.1,2', 'ratios', (0.1, 2.0)),
        ('lr=1e-4', 'lr', 1e-4),
        ('test_steps=3', 'test_steps', (3,)),
    ],
)
def test_overrides_parse_by_type(o, key, val):
    assert getattr(apply_overrides(Cfg(), [o]), key) == val


@pytest.mark.parametrize(
    'o,msg',
    [
        ('flag=maybe', "bad value 'maybe' for flag: expected bool"),
        ('ratios=a,b', 'for ratios'),
        ('seeds=1', "unknown key 'seeds'; valid keys: seed, updates"),
        ('=1', "unknown key ''"),
    ],
)
def test_bad_overrides_name_the_problem(o, msg):
    with pytest.raises(UsageError, match=msg):
        apply_overrides(Cfg(), [o])


def test_overrides_do_not_mutate():
    c = Cfg()
    apply_overrides(c, ['lr=5'])
    assert c.lr == 1e-3


def test_unknown_experiment_lists_valid():
    with pytest.raises(UsageError, match='valid experiments: .*prefix-parity'):
        get_experiment('nope')


def import_every_module():
    "Import every module of the package, so that each registers what it defines."
    for m in pkgutil.walk_packages(ttc_nb.__path__, 'ttc_nb.'):
        if m.name != 'ttc_nb._modidx':
            importlib.import_module(m.name)


def test_the_catalogue_names_every_experiment_with_its_module():
    "After every module is imported, the experiments registered are the catalogue's, each its own."
    import_every_module()
    assert sorted(EXPERIMENTS) == sorted(EXPERIMENT_MODULES)
    assert {name: e.setup.__module__ for name, e in EXPERIMENTS.items()} == EXPERIMENT_MODULES


# A command is a function `NAME_command(parser)` that adds its arguments to `parser`;
# `rasp_command`, the interpreter's arguments, is part of `ttc rasp`, which adds the compiler's.
PART_OF_A_COMMAND = {'ttc_nb.rasp.repl.rasp_command'}


def adds_arguments(f):
    "Whether `f` is a function of one argument, `parser`."
    return inspect.isfunction(f) and list(inspect.signature(f).parameters) == ['parser']


def test_the_catalogue_names_every_command_with_its_module():
    "Each catalogued command's function is defined in its module; no other command is left out."
    import_every_module()
    found = {
        f'{m}.{name}'
        for m in sorted(m for m in sys.modules if m.startswith('ttc_nb.'))
        for name in getattr(sys.modules[m], '__all__', ())
        if name.endswith('_command') and adds_arguments(getattr(sys.modules[m], name))
    }
    assert found == {f'{m}.{f}' for m, f, _ in COMMANDS.values()} | PART_OF_A_COMMAND
    for name, (module, function, help) in COMMANDS.items():
        add = load_command(name)
        assert (add.__module__, add.__name__) == (module, function) and help
        parser = argparse.ArgumentParser()
        add(parser)
        assert parser.format_help() != argparse.ArgumentParser().format_help(), name


def test_get_experiment_imports_its_module_on_demand():
    "In a fresh Python: the experiment's module alone, and an unknown name lists the catalogue's."
    script = """
import sys, json
import ttc_nb.runs.registry as r
from ttc_nb.errors import UsageError
before = 'ttc_nb.act.experiments' in sys.modules
r.get_experiment('act-parity')
try:
    r.get_experiment('nope')
except UsageError as e:
    error = str(e)
methods = {
    'ttc_nb.act.experiments',
    'ttc_nb.act.model',
    'ttc_nb.sudoku.experiments',
    'ttc_nb.looped.model',
}
print(json.dumps([before, sorted(methods & set(sys.modules)), error]))
"""
    r = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [
        False,
        ['ttc_nb.act.experiments', 'ttc_nb.act.model'],  # and the model it imports
        f"unknown experiment 'nope'; valid experiments: {', '.join(sorted(EXPERIMENT_MODULES))}",
    ]


@pytest.mark.parametrize('name', sorted(ALL))
def test_presets_build_typed_configs(name):
    e = ALL[name]
    assert {'ci', 'cpu', 'gpu'} <= set(e.presets) and e.description
    for p in e.presets:
        cfg = e.config(p)
        assert isinstance(cfg, e.Config) and isinstance(cfg, TrainConfig)
        hints = {
            f.name: type(f.default)
            for f in dataclasses.fields(cfg)
            if not isinstance(f.default, dataclasses._MISSING_TYPE)
        }
        for k, t in hints.items():
            assert isinstance(getattr(cfg, k), t), (p, k)


# The `ci` presets that a notebook's tests train as they are, `run_experiment(NAME, 'ci', ...)`,
# are not trained here again: `make test` runs the notebooks' tests beside these (`make pytest`
# alone does not train them), and the notebook's cell checks at least what
# `test_ci_preset_runs_end_to_end` does (the compute curve's step counts and the final record's,
# accuracies within [0, 1], a training loss that fell by 5%). Each one trained here took 2 to 9
# CPU-s. A notebook that starts or stops training one fails the test below until this list says so.
IN_NOTEBOOKS = {
    '10_examples.prefix_parity.ipynb': {'prefix-parity'},
    '25a_rasp.experiments.ipynb': {'rasp-sort-bos'},
    '32_looped.experiments.ipynb': {'looped-linear'},
    '45_sudoku.experiments.ipynb': {'sudoku-pgadj'},
    '52_recurrence.experiments.ipynb': {
        'recurrence-paths-recurrent',
        'recurrence-paths-deep',
        'recurrence-sort-longer',
    },
}


def bind(target, value):
    "{name: value} of a `for` loop's target (a name, or a tuple of them) given one `value`."
    if isinstance(target, ast.Name):
        return {target.id: value}
    return {k: v for t, x in zip(target.elts, value) for k, v in bind(t, x).items()}


# A name is a string, or an expression of the targets of the `for` loops around the call, each
# over a literal tuple (`for task in ('paths', 'sort'): ... f'recurrence-{task}-deep'`).
def ci_runs(src):
    "The experiments whose `ci` preset, without overrides, `run_experiment` trains in code `src`."
    tree = ast.parse(src)
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)]  # the outer ones first
    names = set()
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, 'id', None) == 'run_experiment'):
            continue
        args, keywords = call.args, {k.arg for k in call.keywords}
        if len(args) != 2 or 'overrides' in keywords or ast.literal_eval(args[1]) != 'ci':
            continue
        scopes = [{}]
        for loop in (n for n in loops if any(c is call for c in ast.walk(n))):
            values = ast.literal_eval(loop.iter)
            scopes = [s | bind(loop.target, v) for s in scopes for v in values]
        name = compile(ast.Expression(args[0]), '<cell>', 'eval')
        names |= {eval(name, {}, scope) for scope in scopes}
    return names


def notebook_ci_runs(nbs=ROOT / 'nbs'):
    "{notebook: the catalogued experiments whose `ci` preset its tested cells train}, if any."
    out = {}
    for p in sorted(nbs.glob('*.ipynb')):
        for c in json.loads(p.read_text())['cells']:
            src = ''.join(c['source'])
            skipped = re.search(r'^#\|\s*(cuda|eval:\s*false)\s*$', src, re.M)  # by `make test`
            if c['cell_type'] == 'code' and 'run_experiment(' in src and not skipped:
                # not the registry page's own experiment `line`
                out[p.name] = out.get(p.name, set()) | (ci_runs(src) & set(ALL))
    return {k: v for k, v in out.items() if v}


def test_the_notebooks_train_the_ci_presets_skipped_here():
    assert notebook_ci_runs() == IN_NOTEBOOKS


def test_the_finder_reads_names_and_loops(tmp_path):
    cells = [
        "run, s = run_experiment('act-parity', 'ci', out=tmpd / 'a', quiet=True)",
        "for t, m in (('paths', 'deep'), ('sort', 'longer')):\n"
        "    run_experiment(f'recurrence-{t}-{m}', 'ci', out=d)",
        "run_experiment('act-sort', 'ci', ['updates=5'], out=d)",  # overrides: another config
        "run_experiment('act-logic', 'cpu', out=d)",
        "run_experiment('line', 'ci', out=d)",  # not catalogued
        "#| eval: false\nrun_experiment('rasp-hist', 'ci', out=d)",  # not run by `make test`
        "#| cuda\nrun_experiment('sudoku-rrn', 'ci', out=d)",
    ]
    nb = dict(cells=[dict(cell_type='code', source=[c]) for c in cells])
    (tmp_path / 'n.ipynb').write_text(json.dumps(nb))
    found = {'act-parity', 'recurrence-paths-deep', 'recurrence-sort-longer'}
    assert notebook_ci_runs(tmp_path) == {'n.ipynb': found}


TRAINED_HERE = sorted(set(ALL) - set().union(*IN_NOTEBOOKS.values()))


@pytest.mark.parametrize('name', TRAINED_HERE)
def test_ci_preset_runs_end_to_end(name, tmp_path):
    run, s = run_experiment(name, 'ci', out=tmp_path / 'run', device='cpu', quiet=True)
    cfg = ALL[name].config('ci')
    assert {r['steps'] for r in s['curve']} == set(cfg.test_steps)
    assert s['final'] and {r['steps'] for r in s['final']} == {
        cfg.train_steps
    }  # the final record: as trained, not the longest
    assert all(0 <= v <= 1 for r in s['curve'] for k, v in r.items() if k in ('acc', 'exact'))
    ratio, why = loss_ratio(run)
    assert ratio <= 0.95, why  # it learned, not only ran: its training loss fell by 5% at least
