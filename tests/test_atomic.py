"""Checkpoints are written atomically.

A process killed while saving never leaves a partial checkpoint."""

import signal
import subprocess
import sys
import time
import torch
from ttc_nb.train.files import save_checkpoint, load_checkpoint

SAVER = """
import sys, torch
from ttc_nb.train.files import save_checkpoint
path, i = sys.argv[1], 0
while True:
    i += 1
    save_checkpoint(path, update=i, w=torch.full((4_000_000,), float(i)))
"""


def test_killed_during_save_leaves_old_or_new_never_partial(tmp_path):
    path = tmp_path / 'checkpoint.pt'
    for k in range(8):
        p = subprocess.Popen([sys.executable, '-c', SAVER, str(path)])
        while not path.exists():
            time.sleep(0.005)
        time.sleep(0.05 + 0.03 * k)  # kill at varying points of a save
        p.send_signal(signal.SIGKILL)
        p.wait()
        c = load_checkpoint(path)  # never raises: the file is always a complete checkpoint
        assert c['w'].shape == (4_000_000,) and (c['w'] == c['update']).all()
    save_checkpoint(path, update=0, w=torch.zeros(1))
    assert sorted(f.name for f in tmp_path.iterdir()) == [
        'checkpoint.pt'
    ]  # a temporary file a kill left is removed by the next save
