"""The experiment registry and config overrides.

And every registered experiment's `ci` preset, end to end."""

import dataclasses
import pytest
from ttc_nb.train.fit import TrainConfig, loss_fell
from ttc_nb.runs.registry import EXPERIMENTS, apply_overrides, get_experiment, run_experiment
from ttc_nb.errors import UsageError
from ttc_nb.cli import load_modules

load_modules()


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


@pytest.mark.parametrize('name', sorted(EXPERIMENTS))
def test_presets_build_typed_configs(name):
    e = EXPERIMENTS[name]
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


@pytest.mark.parametrize('name', sorted(EXPERIMENTS))
def test_ci_preset_runs_end_to_end(name, tmp_path):
    run, s = run_experiment(name, 'ci', out=tmp_path / 'run', device='cpu', quiet=True)
    cfg = EXPERIMENTS[name].config('ci')
    assert {r['steps'] for r in s['curve']} == set(cfg.test_steps)
    assert s['final'] and {r['steps'] for r in s['final']} == {
        cfg.train_steps
    }  # the final record: as trained, not the longest
    assert all(0 <= v <= 1 for r in s['curve'] for k, v in r.items() if k in ('acc', 'exact'))
    loss_fell(run)  # it learned, not only ran: its training loss fell by 5% at least
