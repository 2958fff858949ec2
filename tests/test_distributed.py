"""Data-parallel training in 2 CPU processes (gloo).

The processes are started by torchrun through `ttc run --nproc 2` or directly."""

import json
import os
import signal
import subprocess
import sys
import time
import pytest
import torch
from conftest import TTC, concurrently, ttc, wait_for_checkpoint
from test_resume import (
    UPDATES,
    kill_delay,
    records,
)  # the runs below are as long as test_resume's: 150 updates
from ttc_nb.train.fit import loss_ratio

ENV = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true', 'OMP_NUM_THREADS': '1'}
TORCHRUN = [sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2']

# One script, run by one process on the whole batch or by two on its halves: 3 updates of the
# prefix-parity network.
SCRIPT = """
import sys, torch
from ttc_nb.core.protocol import *
from ttc_nb.core.losses import *
from ttc_nb.train.files import *
from ttc_nb.runs.plots import *
from ttc_nb.train.processes import *
from ttc_nb.train.fit import *
from ttc_nb.runs.registry import *
from ttc_nb.examples.prefix_parity import *
rank, size = world()
half = sys.argv[2] == 'half'
# the same 32 strings at each update, split between the processes
def sample(gen, update):
    x, y = prefix_parity_batch(32, 8, torch.Generator().manual_seed(update))
    n = 32 // (2 if half else size)
    return x[rank * n:(rank + 1) * n], y[rank * n:(rank + 1) * n]
seed_everything(0)
net = PrefixParityNet(8)
loss = lambda m, b: stepwise_cross_entropy(m(b[0], steps=4), b[1])
fit(Setup(net, sample, loss, evals={}, curriculum=True), TrainConfig(updates=3), log_every=1,
    run_dir=sys.argv[1], device='cpu', quiet=True)
leave()
"""


def one_update_params(tmp_path, how, launcher):
    out = tmp_path / how
    r = subprocess.run(
        [*launcher, str(tmp_path / 'dp.py'), str(out), 'half' if how == 'first-half' else 'all'],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return torch.load(out / 'checkpoint.pt', weights_only=True)['model'], [
        r['loss'] for r in records(out)
    ]


def test_two_half_batches_update_as_one_whole_batch(tmp_path):
    (tmp_path / 'dp.py').write_text(SCRIPT)
    (whole, whole_losses), (first, _) = concurrently(
        lambda how: one_update_params(tmp_path, how, [sys.executable]), ['whole', 'first-half']
    )
    halves, half_losses = one_update_params(tmp_path, 'halves', TORCHRUN)
    torch.testing.assert_close(halves, whole, rtol=1e-5, atol=1e-6)
    assert half_losses == pytest.approx(
        whole_losses, rel=1e-5
    )  # the mean of the halves' losses, at every update
    assert any(
        not torch.allclose(first[k], whole[k], rtol=1e-3, atol=1e-5) for k in whole
    )  # half a batch alone is not the same


# leave() ends a torchrun process at once: DDP keeps its process group, and with it gloo's worker
# threads, alive in C++, and one of them that still frees a finished operation's tensors during the
# interpreter's teardown aborts the process (a rare race).
LEAVER = """
import atexit, sys, torch, torch.distributed as dist
from ttc_nb.train.processes import world, leave
rank, size = world()
net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
net(torch.ones(2, 4)).sum().backward()
atexit.register(print, 'teardown ran')
print(f'process {rank} of {size} trained', end='')   # unflushed: leave must flush it
leave(int(sys.argv[1]))
print('after leave')
"""


# With code 0 as well: every launch below that ends in leave() must exit 0 (each torchrun launch
# costs about 17 CPU-s, the processes' imports).
def test_leave_exits_at_once_with_the_code(tmp_path):
    (tmp_path / 'leaver.py').write_text(LEAVER)
    r = subprocess.run(
        [*TORCHRUN, str(tmp_path / 'leaver.py'), '3'],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert r.returncode != 0, r.stderr
    out = r.stdout + r.stderr
    assert 'process 0 of 2 trained' in out and 'process 1 of 2 trained' in out, out
    assert 'teardown ran' not in out and 'after leave' not in out, out


# one experiment per setup function: the standard transformer is looped_setup with model='standard',
# trained as looped-linear is
FAMILIES = [
    'prefix-parity',
    'act-parity',
    'pondernet-parity',
    'sudoku-rrn',
    'sudoku-deq',
    'sudoku-pgadj',
    'sudoku-trm',
    'rasp-reverse',
    'looped-linear',
]


# One torchrun for all of them: each process imports torch once, not once per family.
FAMILY_SCRIPT = """
import sys
from pathlib import Path
from ttc_nb.runs.registry import run_experiment
from ttc_nb.train.processes import leave
for name in sys.argv[2:]:
    run_experiment(name, 'ci', out=Path(sys.argv[1]) / name, device='cpu')
leave()
"""


@pytest.fixture(scope='module')
def families(tmp_path_factory):
    "The run directories of every family's `ci` preset, trained in two processes."
    root = tmp_path_factory.mktemp('families')
    (root / 'families.py').write_text(FAMILY_SCRIPT)
    r = subprocess.run(
        [*TORCHRUN, str(root / 'families.py'), str(root / 'runs'), *FAMILIES],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (root / 'runs').iterdir()) == sorted(FAMILIES)
    return root / 'runs'


@pytest.mark.parametrize('name', FAMILIES)
def test_every_family_trains_in_two_processes(name, families):
    s = json.loads((families / name / 'summary.json').read_text())
    assert (
        s['finished']
        and s['world_size'] == 2
        and s['effective_batch_size'] == 2 * s['config']['batch_size']
    ), s
    ratio, why = loss_ratio(families / name)
    assert ratio <= 0.95, why  # it learned in two processes too


RUN = [
    'run',
    'prefix-parity',
    '--preset',
    'ci',
    '--set',
    f'updates={UPDATES}',
    '--set',
    'ckpt_every=25',
    '--set',
    'eval_every=50',
    '--nproc',
    '2',
]


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    "An uninterrupted 2-process run."
    ref = tmp_path_factory.mktemp('ddp') / 'ref'
    r = ttc(*RUN, '--out', ref, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count('results:') == 1, r.stdout  # process 0 alone reports
    return ref


def same_run(out, ref):
    assert records(out) == records(ref)
    assert json.loads((out / 'curve.json').read_text()) == json.loads(
        (ref / 'curve.json').read_text()
    )


def test_two_processes_differ_from_one(reference, uninterrupted):
    assert records(uninterrupted(*RUN[:-2])) != records(reference)  # twice the samples per update


def test_sigkill_two_processes_then_resume(reference, tmp_path):
    out = tmp_path / 'killed'
    p = subprocess.Popen(
        [*TTC, *RUN, '--out', str(out)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # torchrun and its processes: one process group
    wait_for_checkpoint(p, out)
    time.sleep(kill_delay(reference, 0))
    assert p.poll() is None, 'run finished before it could be killed: make it longer'
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    assert records(out)[-1]['update'] < UPDATES
    r = ttc('run', '--resume', '--out', out, '--nproc', '1')
    assert (
        r.returncode == 2
        and r.stderr
        == f'ttc: error: {out} was trained with --nproc 2: resume it with --nproc 2, not 1\n'
    )
    r = ttc('run', '--resume', '--out', out, '--nproc', '2', timeout=600)
    assert r.returncode == 0, r.stderr
    same_run(out, reference)


def test_time_limit_stops_both_processes_then_resume(reference, tmp_path):
    out = tmp_path / 'boxed'
    r = ttc(*RUN, '--out', out, '--time-limit', '0s', timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith('ttc: ')]
    assert lines == [
        f'ttc: time limit reached: stopped at update 1 of {UPDATES}, '
        f'checkpoint saved; resume with: ttc run --resume --out {out}'
    ], r.stderr
    r = ttc('run', '--resume', '--out', out, '--nproc', '2', timeout=600)
    assert r.returncode == 0, r.stderr
    same_run(out, reference)
