"""A run killed with SIGKILL at a random moment and resumed.

It logs exactly what an uninterrupted run logs."""

import json
import random
import shutil
import signal
import subprocess
import pytest
from pathlib import Path
from ttc_nb.runs.provenance import cpu_name
from ttc_nb.train.files import load_latest
from conftest import kill_after_checkpoint, ttc, ttc_start

# 150 updates: long enough that the kills below, the DEQ's switch from its unrolled pretraining
# (update 100) and every step of the looped curriculum (updates 40, 60 and 120) fall inside the run;
# checkpoints every 25 updates, evaluations every 50.
UPDATES = 150
RUN = [
    '--preset',
    'ci',
    '--set',
    f'updates={UPDATES}',
    '--set',
    'ckpt_every=25',
    '--set',
    'eval_every=50',
]
EXPERIMENTS = {
    'prefix-parity': [],
    'sudoku-rrn': [
        '--set',
        'alpha=0.5',
        '--set',
        'min_steps=2',
    ],  # random step counts and the progressive loss draw random numbers
    'sudoku-deq': [
        '--set',
        'jac_reg=0.5',
        '--set',
        'corrections=2',
        '--set',
        'rho_reg=1',
        '--set',
        'forget_max=0.9',
        '--set',
        'pretrain=100',
        '--set',
        'train_steps=4',
        '--set',
        'back_iters=4',
    ],  # Hutchinson's estimator draws them too; the resumed run switches from the unrolled loss;
    # the equilibrium's updates, several times as costly as the unrolled ones, only the last third,
    # with a quarter of the ci preset's solver iterations: the test trains this run twice over
    'looped-linear': [
        '--set',
        'dims=2,3,1,40',
        '--set',
        'points=4,7,1,40',
        '--set',
        'loops=1,3,1,60',
    ],
}  # the curriculum moves on during the run


def records(run):
    "The run's metric records without their wall-clock times, which no two runs share."
    return [
        {k: v for k, v in json.loads(line).items() if k != 'time'}
        for line in (run / 'metrics.jsonl').read_text().splitlines()
    ]


# The wait is short enough that the kill lands in the first half of the training left, as timed by
# `ref`, the same run uninterrupted: a fast run is still training when killed.
def kill_delay(ref, seed):
    "A random wait after the first checkpoint (update 25) of at most 0.5 s."
    trained = [
        r['time']
        for r in map(json.loads, (ref / 'metrics.jsonl').read_text().splitlines())
        if 'time' in r
    ][-1]  # at the last evaluation
    return random.Random(seed).uniform(0, min(0.5, trained * (1 - 25 / UPDATES) / 2))


def kill_mid_training(args, out, delay):
    "Start a run, SIGKILL it `delay` seconds after its first checkpoint; the update it reached."
    p = ttc_start(*args, '--out', out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_after_checkpoint(p, out, delay)
    return records(out)[-1]['update']


@pytest.mark.parametrize('name', EXPERIMENTS)
def test_sigkill_then_resume_matches_uninterrupted(name, tmp_path, uninterrupted):
    args = ['run', name, *RUN, *EXPERIMENTS[name]]
    ref = uninterrupted(*args)

    def killed_then_resumed(seed):
        out = tmp_path / f'killed{seed}'
        reached = kill_mid_training(args, out, kill_delay(ref, seed))
        # a kill between moving the old checkpoint aside and writing the new leaves only the old one
        ck = load_latest(out / 'checkpoint.pt')[0]['update']
        return out, reached, ck, ttc('run', name, '--out', out, '--resume')

    # one kill per experiment, at a moment drawn from its name (test_kill kills one run 20 times)
    out, reached, ck, r = killed_then_resumed(sum(map(ord, name)))
    assert reached < UPDATES
    assert r.returncode == 0, r.stderr
    assert records(out) == records(ref), f'killed at update {reached}, checkpoint {ck}'
    curve = json.loads((out / 'curve.json').read_text())
    assert curve == json.loads((ref / 'curve.json').read_text())


# `ref`: the same run, uninterrupted.
def stopped_then_resumed(out, ref, args):
    "A stopped run's summary says so; resumed, it logs and measures exactly what `ref` did."
    s = json.loads((out / 'summary.json').read_text())
    assert s['finished'] is False and 0 < s['update'] < UPDATES, s
    r = ttc('run', '--out', out, '--resume')
    assert r.returncode == 0, r.stderr
    assert records(out) == records(ref), f'stopped at update {s["update"]}'
    assert json.loads((out / 'curve.json').read_text()) == json.loads(
        (ref / 'curve.json').read_text()
    )
    assert json.loads((out / 'summary.json').read_text())['finished'] is True


def test_time_limit_then_resume_matches_uninterrupted(tmp_path, uninterrupted):
    args = ['run', 'prefix-parity', *RUN]
    ref = uninterrupted(*args)
    out = tmp_path / 'boxed'
    # past when training starts: it stops after the first update
    r = ttc(*args, '--out', out, '--time-limit', '0s')
    assert r.returncode == 0, r.stderr
    assert (
        r.stderr.startswith('ttc: time limit reached: stopped at update ')
        and f'resume with: ttc run --resume --out {out}' in r.stderr
    )
    stopped_then_resumed(out, ref, args)


def test_sigterm_then_resume_matches_uninterrupted(tmp_path, uninterrupted):
    args = ['run', 'prefix-parity', *RUN]
    ref = uninterrupted(*args)
    out = tmp_path / 'term'
    p = ttc_start(*args, '--out', out)
    kill_after_checkpoint(p, out, 0.2, signal.SIGTERM)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0 and err.startswith('ttc: SIGTERM received: stopped at update '), err
    stopped_then_resumed(out, ref, args)


# A run of commit cac6ccb (before the library was laid out in packages), stopped by SIGTERM at
# update 64 of the 150 that `RUN` trains: its checkpoint holds the old module paths' state.
OLD_RUN = Path(__file__).parent / 'data' / 'prefix-parity-cac6ccb'


def test_a_checkpoint_of_the_old_layout_resumes(tmp_path, uninterrupted):
    ref = uninterrupted('run', 'prefix-parity', *RUN)
    out = Path(shutil.copytree(OLD_RUN, tmp_path / 'old'))
    env = json.loads((out / 'env.json').read_text())
    assert env['commit'].startswith('cac6ccb')
    if env['device_name'] == cpu_name():
        return stopped_then_resumed(out, ref, [])  # bit for bit, on the CPU model that made it
    # Another CPU model's float kernels (AVX-512 against AVX2, say) differ in the last bits: the
    # committed updates before the stop and the resumed ones after it agree with `ref` to 1e-5,
    # where a wrongly restored state (other batches, another learning rate) is far off.
    r = ttc('run', '--out', out, '--resume')
    assert r.returncode == 0, r.stderr
    got, want = records(out), records(ref)
    assert [g['update'] for g in got] == [w['update'] for w in want]
    assert all(g == pytest.approx(w, rel=1e-5) for g, w in zip(got, want)), (got, want)
    assert json.loads((out / 'summary.json').read_text())['finished'] is True
