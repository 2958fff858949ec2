"""Data-parallel training in 2 CPU processes (gloo).

The processes are started by torchrun through `ttc run --nproc 2` or directly."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
import pytest
import torch
from conftest import TTC, ttc, wait_for_checkpoint
from test_resume import (
    UPDATES,
    kill_delay,
    records,
)  # the runs below are as long as test_resume's: 150 updates
from ttc_nb.train.files import load_latest
from ttc_nb.train.fit import loss_ratio
from two_processes import three_updates

ENV = os.environ | {'TTC_DEVICE': 'cpu', 'CI': 'true', 'OMP_NUM_THREADS': '1'}
TORCHRUN = [sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node=2']

# One torchrun for every test of this module that runs a script in two processes (about 17 CPU-s a
# launch, the processes' imports): tests/two_processes.py trains there, in order, 3 updates of the
# prefix-parity network on halves of batches, every family's `ci` preset, then leaves with code 3.
# One experiment per setup function: the standard transformer is looped_setup with model='standard',
# trained as looped-linear is.
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


@pytest.fixture(scope='module')
def two_processes(tmp_path_factory):
    "tests/two_processes.py's torchrun: its CompletedProcess and its output folder."
    out = tmp_path_factory.mktemp('two-processes')
    r = subprocess.run(
        [*TORCHRUN, str(Path(__file__).parent / 'two_processes.py'), str(out), *FAMILIES],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=900,
    )
    return r, out


def test_two_half_batches_update_as_one_whole_batch(two_processes, tmp_path):
    r, out = two_processes
    three_updates(tmp_path / 'whole')  # one process, here
    three_updates(tmp_path / 'first-half', half=True)
    (whole, whole_losses), (first, _), (halves, half_losses) = [
        (
            torch.load(run / 'checkpoint.pt', weights_only=True)['model'],
            [rec['loss'] for rec in records(run)],
        )
        for run in (tmp_path / 'whole', tmp_path / 'first-half', out / 'halves')
    ]
    torch.testing.assert_close(halves, whole, rtol=1e-5, atol=1e-6)
    assert half_losses == pytest.approx(
        whole_losses, rel=1e-5
    )  # the mean of the halves' losses, at every update
    assert any(
        not torch.allclose(first[k], whole[k], rtol=1e-3, atol=1e-5) for k in whole
    )  # half a batch alone is not the same


# With code 0 as well: every `ttc run --nproc 2` below ends in leave() and must exit 0.
def test_leave_exits_at_once_with_the_code(two_processes):
    r, _ = two_processes
    assert r.returncode != 0, r.stderr
    out = r.stdout + r.stderr
    assert 'process 0 of 2 trained' in out and 'process 1 of 2 trained' in out, out
    assert 'teardown ran' not in out and 'after leave' not in out, out


@pytest.mark.parametrize('name', FAMILIES)
def test_every_family_trains_in_two_processes(name, two_processes):
    r, out = two_processes
    run = out / 'families' / name
    assert sorted(p.name for p in (out / 'families').iterdir()) == sorted(FAMILIES), r.stderr
    assert (run / 'summary.json').exists(), r.stderr
    s = json.loads((run / 'summary.json').read_text())
    assert (
        s['finished']
        and s['world_size'] == 2
        and s['effective_batch_size'] == 2 * s['config']['batch_size']
    ), s
    ratio, why = loss_ratio(run)
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


def alive(pid) -> bool:
    "Whether process `pid` exists and is not a zombie."
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


# One run SIGKILLed, then stopped by its time limit, then resumed: each stint in two processes.
def test_sigkill_and_time_limit_stop_both_processes_then_resume(reference, tmp_path):
    out = tmp_path / 'killed'
    p = subprocess.Popen(
        [*TTC, *RUN, '--out', str(out)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # torchrun, in a process group of its own
    wait_for_checkpoint(p, out)
    time.sleep(kill_delay(reference, 0))
    assert p.poll() is None, 'run finished before it could be killed: make it longer'
    # torchrun starts each of its processes in a session of its own, out of the group killed here:
    # they asked to be killed with their parent (die_with_parent), or they would train to the end
    workers = Path(f'/proc/{p.pid}/task/{p.pid}/children').read_text().split()
    assert len(workers) == 2, workers
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.time() + 10
    while any(alive(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(alive(w) for w in workers), workers
    assert records(out)[-1]['update'] < UPDATES
    r = ttc('run', '--resume', '--out', out, '--nproc', '1')
    assert (
        r.returncode == 2
        and r.stderr
        == f'ttc: error: {out} was trained with --nproc 2: resume it with --nproc 2, not 1\n'
    )
    # a kill between moving the old checkpoint aside and writing the new leaves only the old one
    ck = load_latest(out / 'checkpoint.pt')[0]['update']
    r = ttc('run', '--resume', '--out', out, '--nproc', '2', '--time-limit', '0s', timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith('ttc: ')]
    assert lines == [
        f'ttc: time limit reached: stopped at update {ck + 1} of {UPDATES}, '
        f'checkpoint saved; resume with: ttc run --resume --out {out}'
    ], r.stderr  # past when training starts: both processes stop after one update
    r = ttc('run', '--resume', '--out', out, '--nproc', '2', timeout=600)
    assert r.returncode == 0, r.stderr
    same_run(out, reference)
