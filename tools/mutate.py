"""Mutation testing: plant a plausible one-line bug in a notebook's export cell and run its tests.

    tools/mutate.py                         every mutant of the catalogue, one at a time;
                                            writes tools/mutants.json
    tools/mutate.py --only NAME[,NAME ...]  some of them; prints the table,
                                            writes JSON only with --out
    tools/mutate.py -j 2                    two mutants at a time
                                            (each test process still has one thread)
    tools/mutate.py --list                  the catalogue;
                                            --check: only check that every text is found once

Each mutant of `MUTANTS` names a notebook, a text that must occur exactly once in its `#| export`
(or `#| exporti`) cells, the text that replaces it and what the bug is. The working tree is never
touched. Once per call the repository is copied to a scratch directory (no .venv, build outputs,
docs or caches; its own git clone of HEAD for the tests that ask git; its own HOME with a copy of
~/.cache/ttc_nb, so that a mutated data generator cannot write its puzzles into the shared cache),
the package is exported there, and every test that a mutant will run is run once unmutated: one that
fails there catches nothing and is left out, and its time sets the limit for the mutants (3 times
it, plus 60 s).

Then for each mutant, in a fresh copy of that scratch tree: the bug goes into the notebook's cell,
`nbdev_export --path` regenerates the module, and the tests run in order until one fails: the owning
notebook (as CI runs it: tools/nbtest.py with `--flags slow` and CI=true, so that `#| slow` cells
read the committed runs), then the notebooks of the library modules that import that module,
quickest first, then in one pytest process (-x) the test files that import that module or those
(found by reading their imports), quickest first. All with OMP_NUM_THREADS=1, the package imported
from the scratch copy. A mutant is caught when a test fails or runs past its limit, and survives
when all pass.
"""

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
REPORT = ROOT / 'tools' / 'mutants.json'
TOP_SKIP = {
    '.git',
    '.venv',
    '_build',
    '_proc',
    'docs',
    '.cache',
    '.pytest_cache',
    'runs',
}  # not copied to the scratch tree,
SKIP = ('__pycache__', '*.egg-info', '.ipynb_checkpoints', '*.tmp')  # nor these, anywhere


class Mutant(NamedTuple):
    name: str
    notebook: str  # under nbs/, without .ipynb
    find: str  # occurs exactly once in the notebook's export cells
    replace: str
    what: str  # the bug, in one line


M = Mutant
MUTANTS = [
    # ------------------------------------------------------ protocol: metrics and the compute curve
    M(
        'curve-last-batch',
        '00_core.protocol',
        'sums[n, k] = sums.get((n, k), 0.0) + v.float().sum().item()',
        'sums[n, k] = v.float().sum().item()',
        "compute_curve keeps only the last batch's sum",
    ),
    M(
        'curve-counts-batches',
        '00_core.protocol',
        'counts[n, k] = counts.get((n, k), 0) + v.numel()',
        'counts[n, k] = counts.get((n, k), 0) + 1',
        'compute_curve counts batches, not samples: a sum per batch, not a mean',
    ),
    M(
        'accuracy-all-positions',
        '00_core.protocol',
        '/ real.sum(1).clamp(min=1)',
        '/ real.shape[1]',
        'accuracy divides by every position, padding included',
    ),
    M(
        'exact-counts-ignored',
        '00_core.protocol',
        'per_sample((pred.argmax(-1) == y) | (y == IGNORE), y)',
        'per_sample(pred.argmax(-1) == y, y)',
        'exact requires the IGNORE positions to be right too',
    ),
    M(
        'window-one-more',
        '00_core.protocol',
        'for _ in range(steps - keep):',
        'for _ in range(steps - keep + 1):',
        'forward runs one iteration too many before the window',
    ),
    # ---------------------------------------------------------------- losses
    M(
        'stepwise-final-only',
        '01_core.losses',
        'F.cross_entropy(th.preds.flatten(0, -2), y.expand(len(th), *y.shape).flatten())',
        'F.cross_entropy(th.final.flatten(0, -2), y.flatten())',
        "stepwise_cross_entropy uses the last iteration's prediction only",
    ),
    M(
        'progressive-grad-flipped',
        '01_core.losses',
        'torch.is_grad_enabled() and n == 0',
        'torch.is_grad_enabled() and n > 0',
        'progressive_loss keeps the gradient of the n iterations exactly when it should drop it',
    ),
    M(
        'progressive-first-pred',
        '01_core.losses',
        'F.cross_entropy(preds[-1].flatten(0, -2), y.flatten())',
        'F.cross_entropy(preds[0].flatten(0, -2), y.flatten())',
        'progressive_loss scores the prediction after n + 1, not n + k',
    ),
    M(
        'mix-weights-swapped',
        '01_core.losses',
        'total = (1 - alpha) *',
        'total = alpha *',
        'stepwise_progressive_loss weighs the stepwise loss by alpha instead of 1 - alpha',
    ),
    M(
        'min-steps-check',
        '01_core.losses',
        'if not 0 <= min_steps <= train_steps:',
        'if not 0 <= min_steps < train_steps:',
        'min_steps = train_steps is refused',
    ),
    M(
        'draw-steps-short',
        '01_core.losses',
        'int(torch.randint(min_steps, train_steps + 1, ()))',
        'int(torch.randint(min_steps, train_steps, ()))',
        'the drawn step count never reaches train_steps',
    ),
    # ---------------------------------------------------------------- files: damaged-file checks
    M(
        'log-torn-line-flipped',
        '06_train.files',
        'elif i != text[-1][0]:',
        'elif i == text[-1][0]:',
        'MetricsLog.read raises on a torn last line and skips a damaged one before it',
    ),
    M(
        'log-truncate-drops-last',
        '06_train.files',
        "keep = [r for r in self.read() if r['update'] <= update]",
        "keep = [r for r in self.read() if r['update'] < update]",
        'MetricsLog.truncate drops the record of the resumed update',
    ),
    M(
        'checkpoint-missing-key',
        '06_train.files',
        'if missing := [k for k in keys if k not in c]',
        'if missing := [k for k in keys if k in c]',
        'load_checkpoint complains about the keys that are there',
    ),
    M(
        'stale-tmp-live',
        '06_train.files',
        'if not (pid.isdigit() and _alive(int(pid))):',
        'if pid.isdigit() and _alive(int(pid)):',
        "atomic_write deletes a live writer's temporary file, keeps a dead one's",
    ),
    # ---------------------------------------------------------------- plots, processes
    M(
        'plot-axes-swapped',
        '08_runs.plots',
        "[r['steps'] for r in rs],\n            [r[metric] for r in rs],",
        "[r[metric] for r in rs],\n            [r['steps'] for r in rs],",
        'plot_compute_curve puts the metric on the x axis',
    ),
    M(
        'deadline-sign',
        '05_train.processes',
        'time.time() + needed > self.deadline',
        'time.time() - needed > self.deadline',
        'Stop subtracts the time the next piece of work needs instead of adding it',
    ),
    M(
        'anyone-always',
        '05_train.processes',
        'return bool(process_mean(torch.tensor([float(flag)])) > 0)',
        'return bool(process_mean(torch.tensor([float(flag)])) >= 0)',
        'anyone is true even when no process flags',
    ),
    # --------------------------------------------------------- train: config ranges, schedule, loop
    M(
        'between-open-low',
        '07_train.fit',
        'lambda v: _number(v, kind) and low <= v <= high',
        'lambda v: _number(v, kind) and low < v <= high',
        'between refuses its lower bound',
    ),
    M(
        'clip-positive',
        '07_train.fit',
        'clip: float = at_least(0.0, 1.0)',
        'clip: float = positive(1.0)',
        'TrainConfig refuses clip = 0 (no clipping)',
    ),
    M(
        'counts-zero',
        '07_train.fit',
        'all(_number(n, int) and n >= 1 for n in v)',
        'all(_number(n, int) and n >= 0 for n in v)',
        'a step count of 0 is accepted in test_steps',
    ),
    M(
        'warmup-from-zero',
        '07_train.fit',
        'return (i + 1) / warmup',
        'return i / warmup',
        'the first warm-up update has learning rate 0',
    ),
    M(
        'cosine-ignores-warmup',
        '07_train.fit',
        'max(1, updates - warmup)',
        'max(1, updates)',
        'the cosine decay does not reach 0 at the last update',
    ),
    M(
        'clip-zero-clips',
        '07_train.fit',
        "clip if clip else float('inf')",
        'clip',
        'clip = 0 clips every gradient to norm 0 instead of not clipping',
    ),
    M(
        'eval-off-by-one',
        '07_train.fit',
        'eval_every and (i + 1) % eval_every == 0',
        'eval_every and i % eval_every == 0',
        'fit evaluates after update 1, eval_every + 1, '
        '... instead of eval_every, 2 eval_every, ...',
    ),
    # ---------------------------------------------------------- runs: overrides, presets, run files
    M(
        'override-rpartition',
        '09_runs.registry',
        "k, sep, v = o.partition('=')",
        "k, sep, v = o.rpartition('=')",
        "an override's value cannot hold '='",
    ),
    M(
        'bool-case-sensitive',
        '09_runs.registry',
        "if v.lower() in ('1', 'true', 'yes'):",
        "if v in ('1', 'true', 'yes'):",
        "bool overrides: 'True' is refused",
    ),
    M(
        'tuple-items-int',
        '09_runs.registry',
        'item = type(default[0]) if default else int',
        'item = int',
        'tuple overrides are parsed as integers whatever the default holds',
    ),
    M(
        'rerun-sets-same',
        '09_runs.registry',
        'for k, v in asdict(cfg).items() if v != base[k]]',
        'for k, v in asdict(cfg).items() if v == base[k]]',
        'rerun_command writes a --set for the fields that equal the preset',
    ),
    M(
        'curve-file-no-metric',
        '09_runs.registry',
        "bool(keys - {'steps', 'set'})",
        "bool(keys - {'steps'})",
        'a curve.json with steps and set but no metric passes as undamaged',
    ),
    M(
        'made-on-all-dirty',
        '08a_runs.provenance',
        "dirty = any((e['commit'] or '').endswith('-dirty') for e in envs)",
        "dirty = all((e['commit'] or '').endswith('-dirty') for e in envs)",
        'made_on says modified only when every run is',
    ),
    M(
        'ensure-run-preset',
        '09_runs.registry',
        "if (saved['preset'], _config_of(out, saved, exp)) != (\n"
        '            preset,\n'
        '            exp.config(preset, overrides),\n'
        '        ):',
        'if _config_of(out, saved, exp) != exp.config(preset, overrides):',
        'ensure_run reuses a run of another preset with the same config',
    ),
    M(
        'final-at-last-step',
        '09_runs.registry',
        "final=[r for r in curve if r['steps'] == self.cfg.train_steps],",
        "final=[r for r in curve if r['steps'] == max(self.cfg.test_steps)],",
        "the summary's final record is at the last test step",
    ),
    # ---------------------------------------------------------------- tables, transformer
    M(
        'table-no-escape',
        '60a_report.tables',
        "str(v).replace('|', '\\\\|').replace('\\n', ' ')",
        "str(v).replace('\\n', ' ')",
        "markdown_table does not escape '|'",
    ),
    M(
        'probe-old-unfinished',
        '60a_report.tables',
        "summary.get('finished', True)",
        "summary.get('finished', False)",
        'a summary without a finished key counts as unfinished',
    ),
    M(
        'attention-scale',
        '02_core.transformer',
        's = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])',
        's = q @ k.transpose(-2, -1) / q.shape[-1]',
        'the weighted attention path scales by d, not sqrt(d)',
    ),
    M(
        'positions-ignore-start',
        '02_core.transformer',
        'x + self.pe[start:end]',
        'x + self.pe[:x.shape[1]]',
        'Positions ignores the cached prefix: every call starts at position 0',
    ),
    # ------------------------------------------------------------- prefix parity, ACT and PonderNet
    M(
        'prefix-parity-axis',
        '10_examples.prefix_parity',
        'return x, x.cumsum(1) % 2',
        'return x, x.cumsum(0) % 2',
        'prefix parities summed over the batch, not along the string',
    ),
    M(
        'prefix-parity-preset',
        '10a_examples.experiments',
        'cpu=dict(\n'
        '        width=32,\n'
        '        updates=6000,\n'
        '        eval_every=1000,\n'
        '        ckpt_every=500,\n'
        '        train_steps=16,',
        'cpu=dict(\n'
        '        width=32,\n'
        '        updates=6000,\n'
        '        eval_every=1000,\n'
        '        ckpt_every=500,\n'
        '        train_steps=8,',
        "the cpu preset's train_steps differs from the committed run's",
    ),
    M(
        'act-loss-ponder-N',
        '12_act.model',
        "tau * th.aux['rho'].sum() / len(y)",
        "tau * th.aux['N'].sum() / len(y)",
        'act_loss takes the ponder cost from N, which has no gradient, not rho = N + R',
    ),
    M(
        'halting-remainder-all',
        '12_act.model',
        'R = 1 - (h * before).sum(-1)',
        'R = 1 - h.sum(-1)',
        "halting_probs' remainder subtracts h_N too",
    ),
    M(
        'pondernet-mean-steps',
        '12_act.model',
        'L = (p * ce.view(p.shape)).sum(1).mean()',
        'L = (p * ce.view(p.shape)).mean(1).mean()',
        'pondernet_loss averages p * loss over the steps instead of summing: not the expectation',
    ),
    M(
        'pondernet-kl-reversed',
        '12_act.model',
        '(p * (log_p - geometric(lambda_p, p.shape[1]).to(p).log()))',
        '(p * (geometric(lambda_p, p.shape[1]).to(p).log() - log_p))',
        'the KL term has its sign flipped',
    ),
    M(
        'geometric-no-rest',
        '12_act.model',
        'torch.where(n < steps - 1,',
        'torch.where(n < steps,',
        "geometric's last step does not take the rest: it does not sum to 1",
    ),
    M(
        'sequence-error-inverted',
        '12_act.model',
        'return 1 - exact(pred, y)',
        'return exact(pred, y)',
        'sequence_error returns the share right, not wrong',
    ),
    M(
        'act-tau-default',
        '13_act.experiments',
        'tau: float = at_least(0.0, 1e-3)',
        'tau: float = at_least(0.0, 1e-2)',
        "ACTConfig's default time penalty is 1e-2, not 1e-3",
    ),
    M(
        'beyond-overlaps',
        '13_act.experiments',
        'parity_batch(cfg.eval_size, cfg.bits, hi + 1, cfg.bits, g, prefix)',
        'parity_batch(cfg.eval_size, cfg.bits, hi, cfg.bits, g, prefix)',
        "the 'beyond training' set includes the training range's top",
    ),
    # ---------------------------------------------------------------- ACT's tasks
    M(
        'parity-counts-minus',
        '11_act.tasks',
        '((x == 1).sum(1) % 2)',
        '((x != 0).sum(1) % 2)',
        'parity counts the -1 entries too',
    ),
    M(
        'parity-hi-excluded',
        '11_act.tasks',
        'k = torch.randint(lo, hi + 1, (n, 1), generator=gen)',
        'k = torch.randint(lo, hi, (n, 1), generator=gen)',
        'parity_batch never draws hi nonzero entries',
    ),
    M(
        'logic-b0-every-step',
        '11_act.tasks',
        'x[:, t, 0], x[:, t, 1] = (b0 if t == 0 else 0), b1',
        'x[:, t, 0], x[:, t, 1] = b0, b1',
        'logic_batch gives b0 at every step, not only the first',
    ),
    M(
        'addition-width',
        '11_act.tasks',
        'width = total.clamp(min=1).log10().floor().long() + 1',
        'width = total.clamp(min=1).log10().floor().long()',
        'addition targets have one digit too few',
    ),
    M(
        'sort-descending',
        '11_act.tasks',
        'y[rows, k[rows] + pos] = v.argsort(1)[rows, pos]',
        'y[rows, k[rows] + pos] = v.argsort(1, descending=True)[rows, pos]',
        'sort targets in descending order',
    ),
    # ---------------------------------------------------------------- RASP
    M(
        'aggregate-sum',
        '20_rasp.ops',
        'out[many] = (S[many] @ v.astype(float)) / width[many]',
        'out[many] = S[many] @ v.astype(float)',
        'aggregate sums the selected values instead of averaging them',
    ),
    M(
        'error-column-zero',
        '21_rasp.grammar',
        "line {i + 1}, column {col + 1}'",
        "line {i + 1}, column {col}'",
        'error positions count columns from 0',
    ),
    M(
        'caret-is-xor',
        '22a_rasp.builtins',
        "'^': R.arith(operator.pow)",
        "'^': R.arith(operator.xor)",
        "RASP's ^ is Python's xor, not the power",
    ),
    M(
        'head-key-no-predicate',
        '24_rasp.analysis',
        "return ('select', s.predicate) + tuple(map(head_key, s.children))",
        "return ('select',) + tuple(map(head_key, s.children))",
        'selectors with different predicates count as one head',
    ),
    M(
        'attention-target-dim',
        '25_rasp.train',
        'target = S / S.sum(-1, keepdim=True).clamp(min=1)',
        'target = S / S.sum(-2, keepdim=True).clamp(min=1)',
        'attention targets normalised over queries, not keys',
    ),
    # ---------------------------------------------------------------- RASP compiler: the value pass
    M(
        'values-width-short',
        '26_rasp.compiler.values',
        'return list(range(max_len + 1))',
        'return list(range(max_len))',
        'a selector width never takes max_len, the width of a query that selects every key',
    ),
    M(
        'values-cat-no-default',
        '26_rasp.compiler.values',
        'return _uniq(s + [v.default])',
        'return _uniq(s)',
        "a categorical aggregate's values leave out its default",
    ),
    M(
        'means-one-short',
        '26_rasp.compiler.values',
        'for w in range(1, max_len + 1):',
        'for w in range(1, max_len):',
        'the means of a numerical aggregate leave out those of max_len values',
    ),
    M(
        'situations-last-position',
        '26_rasp.compiler.values',
        'return ((n, i) for n in range(1, max_len + 1) for i in range(n))',
        'return ((n, i) for n in range(1, max_len + 1) for i in range(n - 1))',
        'the positions where values meet leave out the last position of each length',
    ),
    M(
        'uniq-true-is-one',
        '26_rasp.compiler.values',
        'if x is FAILED or (k := (type(x), x)) in seen:',
        'if x is FAILED or (k := x) in seen:',
        'the value set counts True and 1 as one value',
    ),
    M(
        'projection-overlap',
        '26_rasp.compiler.values',
        '1.0 if gap is None else (hi - lo + gap) / g',
        '1.0 if gap is None else (hi - lo) / g',
        "the projection puts a number's stretch where the previous one's ends: two points meet",
    ),
    # --------------------------------------------------- RASP compiler: layout, heads and assembly
    M(
        'head-bos-full-score',
        '26b_rasp.compiler.craft',
        'A * (len(parts) - (0 if agg is None else 0.5))',
        'A * (len(parts) - 0)',
        'BOS scores as high as a selected key, so an aggregate averages the default in',
    ),
    M(
        'head-same-layer',
        '26b_rasp.compiler.craft',
        'out.layer = 1 + max((s.layer for s in reads + [src] if s is not None), default=0)',
        'out.layer = max((s.layer for s in reads + [src] if s is not None), default=0)',
        'a head goes in the layer of what it reads, not the one after',
    ),
    M(
        'step-at-upper-point',
        '26b_rasp.compiler.craft',
        'mu, sl = (z[j] + z[j - 1]) / 2, 2 / (z[j] - z[j - 1])',
        'mu, sl = z[j], 2 / (z[j] - z[j - 1])',
        'an MLP step sits on the upper point, not half way between two points',
    ),
    M(
        'decode-reads-bos',
        '27_rasp.compiler.assemble',
        'rows = [[sp.values[i] for i in row[1 : n + 1]] for row, n in zip(ix, lengths)]',
        'rows = [[sp.values[i] for i in row[:n]] for row, n in zip(ix, lengths)]',
        'decoding reads the BOS position and drops the last token',
    ),
    M(
        'encode-masks-last',
        '27_rasp.compiler.assemble',
        'mask[r, : len(x) + 1] = True',
        'mask[r, : len(x)] = True',
        "the mask hides each input's last token",
    ),
    M(
        'compile-ignores-name',
        '27_rasp.compiler.assemble',
        'sops[name] if name else program.output,',
        'program.output,',
        'compiling a named s-op compiles the output instead',
    ),
    M(
        'lens-pads-attended',
        '27a_rasp.compiler.lens',
        "a['b_Q'][:, -1], a['W_K'][:, D, -1] = 1.0, -PAD_SCORE",
        "a['b_Q'][:, -1], a['W_K'][:, D, -1] = 0.0, -PAD_SCORE",
        "the HookedTransformer's queries miss the pad coordinate: pads are attended",
    ),
    M(
        'lens-scale-unfolded',
        '27a_rasp.compiler.lens',
        "s = 1 / math.sqrt(e) if fold and k == 'Q' else 1.0",
        's = 1.0',
        "the HookedTransformer's scores are not divided by the head width's square root",
    ),
    # ---------------------------------------------------------------- the atlas, reproduction rows
    M(
        'atlas-best-at-unscaled',
        '62_report.atlas',
        'best_at=n[g.index(best)] / k,',
        'best_at=n[g.index(best)],',
        'the best point is placed in iterations, not in multiples of k',
    ),
    M(
        'atlas-past-sign',
        '62_report.atlas',
        'past=max(past) - s * at[1] if',
        'past=max(past) - at[1] if',
        'the gain past k of a lower-is-better metric has the wrong sign',
    ),
    M(
        'atlas-overthinking-sign',
        '62_report.atlas',
        'overthinking=best - g[-1],',
        'overthinking=g[-1] - best,',
        'overthinking is measured from the last point up to the best',
    ),
    M(
        'act-parity-verdict',
        '61_report.act',
        "verdict='met' if _err(p64) < 0.05 else 'not met',",
        "verdict='met' if _err(p64) < 0.5 else 'not met',",
        "parity's verdict holds ours against 50% error instead of the paper's 5%",
    ),
    M(
        'act-prefix-seeds',
        '61_report.act',
        "if len(pre['tau=0.01']) >= 3 and _mean(pre['tau=0.01']) < 0.05",
        "if len(pre['tau=0.01']) >= 4 and _mean(pre['tau=0.01']) < 0.05",
        'the prefix-parity verdict asks for four seeds where three were trained',
    ),
    # -------------------------------------------------------- looped transformers, function classes
    M(
        'interleave-dim',
        '31_looped.model',
        'torch.stack([x, F.pad(y[..., None], (0, d - 1))], 2).view(B, 2 * n, d)',
        'torch.stack([x, F.pad(y[..., None], (0, d - 1))], 1).view(B, 2 * n, d)',
        'interleave stacks on the wrong dim: all x, then all y',
    ),
    M(
        'curriculum-mod',
        '31_looped.model',
        'return min(start + inc * (update // interval), end)',
        'return min(start + inc * (update % interval), end)',
        'the curriculum steps with update % interval, not //',
    ),
    M(
        'sparse-support',
        '30_looped.tasks',
        '.argsort(1)[:, :sparsity]',
        '.argsort(1)[:, :sparsity - 1]',
        'sparse linear functions have one nonzero weight too few',
    ),
    M(
        'averaging-includes-self',
        '30_looped.tasks',
        's = torch.cumsum(y[..., None] * x, 1) - y[..., None] * x',
        's = torch.cumsum(y[..., None] * x, 1)',
        "the averaging baseline sees the query's own target",
    ),
    # ---------------------------------------------------------------- Sudoku: boards, checks, data
    M(
        'is-solution-no-boxes',
        '40_sudoku.puzzles',
        'for u in g.units):',
        'for u in g.units[: 2 * g.n]):',
        'is_solution ignores the boxes: a Latin square passes',
    ),
    M(
        'repeats-threshold',
        '40_sudoku.puzzles',
        'if len(ks) > 1:',
        'if len(ks) > 2:',
        'check_repeats misses a digit repeated twice',
    ),
    M(
        'parse-short-board',
        '40_sudoku.puzzles',
        'if len(chars) != n * n:',
        'if len(chars) > n * n:',
        'parse_board accepts a board with too few cells',
    ),
    M(
        'givens-range',
        '40_sudoku.puzzles',
        'if not 0 <= lo <= hi <= n * n:',
        'if not 0 <= lo < hi <= n * n:',
        'a single number of givens (low = high) is refused',
    ),
    M(
        'relabel-solutions',
        '41_sudoku.task',
        'return table.gather(1, puzzles), table.gather(1, solutions)',
        'return table.gather(1, puzzles), solutions',
        'relabel renames the puzzle digits but not the solution digits',
    ),
    M(
        'sampler-targets',
        '41_sudoku.task',
        'x, s = relabel(x, s, gen)\n        return x, s - 1',
        'x, s = relabel(x, s, gen)\n        return x, s',
        'training targets are digits 1..n, not classes 0..n-1',
    ),
    M(
        'legal-digits-from-1',
        '41_sudoku.task',
        'return (d == torch.arange(g.n, device=d.device))',
        'return (d == torch.arange(1, g.n + 1, device=d.device))',
        'legal_grid compares argmax classes with digits 1..n',
    ),
    # ---------------------------------------------------------------- RRN, DEQ, pgadj, solvers
    M(
        'rrn-col-by-row',
        '42_sudoku.rrn',
        'self.col(self.cols)',
        'self.col(self.rows)',
        "the RRN's column embedding is indexed by the row",
    ),
    M(
        'message-bias-once',
        '42_sudoku.rrn',
        'return F.linear(z.sum(2), f[-1].weight) + total * f[-1].bias',
        'return F.linear(z.sum(2), f[-1].weight) + f[-1].bias',
        "message_sum adds the last layer's bias once, not once per message",
    ),
    M(
        'rrn-loss-args-swapped',
        '45_sudoku.experiments',
        'stepwise_progressive_loss(cfg.train_steps, cfg.min_steps, cfg.alpha)',
        'stepwise_progressive_loss(cfg.train_steps, cfg.alpha, cfg.min_steps)',
        'rrn_setup swaps min_steps and alpha',
    ),
    M(
        'capped-lstm-inside',
        '43_sudoku.deq',
        's = forget_max * f.sigmoid() * s',
        's = (forget_max * f).sigmoid() * s',
        'capped_lstm scales the logit, not the gate: the cap is inside the sigmoid',
    ),
    M(
        'phantom-lam-swapped',
        '03a_core.implicit',
        'z = lam * f(z) + (1 - lam) * z',
        'z = (1 - lam) * f(z) + lam * z',
        'the phantom gradient damps the wrong term',
    ),
    M(
        'rho-penalty-sign',
        '43_sudoku.deq',
        'F.relu(rho - rho_max).mean()',
        'F.relu(rho_max - rho).mean()',
        'the radius penalty pushes the spectral radius up, below rho_max',
    ),
    M(
        'trm-grad-in-every-cycle',
        '44a_sudoku.trm',
        'with torch.no_grad():\n        for _ in range(self.T - 1):',
        'with torch.enable_grad():\n        for _ in range(self.T - 1):',
        "TRM's first T - 1 cycles keep their gradient",
    ),
    M(
        'trm-carry-attached',
        '44a_sudoku.trm',
        'return (y.detach(), z.detach()),',
        'return (y, z),',
        'the (y, z) carried to the next supervision step is not detached',
    ),
    M(
        'trm-halt-target-other-puzzle',
        '44a_sudoku.trm',
        'return halt_target(logits, target)',
        'return halt_target(logits, target.roll(1, 0))',
        "the halting target is whether the answer is another puzzle's solution",
    ),
    M(
        'trm-no-exploration-floor',
        '44a_sudoku.trm',
        'return last | ((q > 0) & (steps >= least))',
        'return last | (q > 0)',
        'exploration never keeps a puzzle from halting before its drawn least number of steps',
    ),
    M(
        'extreme-rows-across-bands',
        '40a_sudoku.extreme',
        'return (blocks[..., None] * inner + within).flatten(1)',
        'return (within * outer + blocks[..., None]).flatten(1)',
        'an augmentation moves rows across bands (and columns across stacks): boxes break',
    ),
    M(
        'extreme-answer-unchecked',
        '40a_sudoku.extreme',
        'kept = ((puzzles == 0) | (puzzles == solutions)).all(1)',
        'kept = (puzzles == 0).any(1) | (puzzles == solutions).all(1)',
        'read_extreme accepts an answer that changes a given',
    ),
    M(
        'backtracks-not-counted',
        '40_sudoku.puzzles',
        'dead[0] += 1',
        'dead[0] += 0',
        'backtracks counts no dead end',
    ),
    M(
        'leave-one-out-S',
        '44_sudoku.pgadj',
        'return (cost.sum(0, keepdim=True) - cost) / (S - 1)',
        'return (cost.sum(0, keepdim=True) - cost) / S',
        'the leave-one-out baseline divides by S, not S - 1',
    ),
    M(
        'surrogate-baseline-sign',
        '44_sudoku.pgadj',
        '(cost - baseline).detach()',
        '(cost + baseline).detach()',
        'the score-function surrogate adds the baseline instead of subtracting it',
    ),
    M(
        'residual-over-z',
        '03_core.solvers',
        'r = (fz - z).norm(dim=1) / fz.norm(dim=1).clamp(min=1e-12)',
        'r = (fz - z).norm(dim=1) / z.norm(dim=1).clamp(min=1e-12)',
        'the relative residual divides by ||z||, not ||f(z)||',
    ),
    M(
        'iters-off-by-one',
        '03_core.solvers',
        'iters, done = torch.where(hit, k, iters), done | hit',
        'iters, done = torch.where(hit, k - 1, iters), done | hit',
        'fixed_point reports one iteration fewer than it took',
    ),
    M(
        'broyden-sign',
        '03_core.solvers',
        'return z - H(g)',
        'return z + H(g)',
        "Broyden's step goes uphill",
    ),
    # ----------------------------------------------------------- recurrence: paths, FLOPs, matching
    M(
        'deep-one-more-layer',
        '52_recurrence.experiments',
        'deeper = dict(n_layers=rec.n_layers + rec.train_steps - 1)',
        'deeper = dict(n_layers=rec.n_layers + rec.train_steps)',
        'the deep baseline has one block too many',
    ),
    M(
        'backward-twice-forward',
        '52_recurrence.experiments',
        'return (3 * learn + free) * cfg.batch_size',
        'return (2 * learn + free) * cfg.batch_size',
        'update_flops counts the backward pass as one forward, not two',
    ),
    M(
        'equilibrium-sign',
        '51_recurrence.model',
        "e + out - h if self.recall == 'equilibrium' else out",
        "e + out + h if self.recall == 'equilibrium' else out",
        "the 'equilibrium' recall adds the state instead of subtracting it",
    ),
    M(
        'lm-pairs-prompt',
        '50_recurrence.tasks',
        'y[:, : prompt - 1] = IGNORE',
        'y[:, :prompt] = IGNORE',
        'lm_pairs ignores the first output token',
    ),
    M(
        'pair-skip',
        '50_recurrence.tasks',
        'return s, t + (t >= s)',
        'return s, t + (t > s)',
        '_pair can give start = end and never reaches the last city',
    ),
    M(
        'path-end-unchecked',
        '50_recurrence.tasks',
        'ok = bool(p) and p[0] == s and p[-1] == t and',
        'ok = bool(p) and p[0] == s and',
        'path_scores accepts a path that does not end at its end city',
    ),
    # ---------------------------------------------------------------- command line
    M(
        'steps-zero',
        '90_cli',
        'if any(n < 1 for n in steps)',
        'if any(n < 0 for n in steps)',
        'ttc eval --steps 0 is accepted',
    ),
    M(
        'duration-hours',
        '90_cli',
        "_UNITS = {'s': 1, 'm': 60, 'h': 3600}",
        "_UNITS = {'s': 1, 'm': 60, 'h': 360}",
        'an hour is 360 seconds in --time-limit',
    ),
]


# ------------------------------------------------------------------------------------ the catalogue
def notebook_path(root, m):
    return Path(root) / 'nbs' / f'{m.notebook}.ipynb'


def _directives(src):
    return {
        line.split()[1]
        for line in src.splitlines()
        if line.startswith('#|') and len(line.split()) > 1
    }


def export_cells(path):
    "{cell index: source} of the cells of notebook `path` that nbdev exports."
    cells = json.loads(Path(path).read_text())['cells']
    return {
        i: ''.join(c['source'])
        for i, c in enumerate(cells)
        if c['cell_type'] == 'code' and _directives(''.join(c['source'])) & {'export', 'exporti'}
    }


def module_of(root, notebook):
    "The module a notebook exports to, from its `#| default_exp`."
    for c in json.loads((Path(root) / 'nbs' / f'{notebook}.ipynb').read_text())['cells']:
        if m := re.search(r'^#\|\s*default_exp\s+(\S+)', ''.join(c['source']), re.M):
            return m[1]
    raise ValueError(f'nbs/{notebook}.ipynb has no default_exp')


# Otherwise a ValueError naming the mutant.
def locate(root, m):
    "The index of the export cell of `m.notebook` that holds `m.find` once."
    path = notebook_path(root, m)
    if not path.exists():
        raise ValueError(f'{m.name}: no notebook nbs/{m.notebook}.ipynb')
    hits = {i: src.count(m.find) for i, src in export_cells(path).items() if m.find in src}
    if not hits:
        raise ValueError(f'{m.name}: {m.find!r} is in no export cell of nbs/{m.notebook}.ipynb')
    if len(hits) > 1 or sum(hits.values()) > 1:
        raise ValueError(
            f'{m.name}: {m.find!r} is ambiguous: {sum(hits.values())} '
            f'times in export cells {sorted(hits)} of nbs/{m.notebook}.ipynb'
        )
    if m.find == m.replace:
        raise ValueError(f'{m.name}: the replacement is the text itself')
    return next(iter(hits))


# One problem a line, each naming the mutant.
def check_catalogue(root, mutants):
    "The problems of `mutants` in the tree at `root`: [] if every text is found once."
    problems, names = [], [m.name for m in mutants]
    problems += [
        f'{n}: the name is used more than once'
        for n in sorted({n for n in names if names.count(n) > 1})
    ]
    for m in mutants:
        try:
            locate(root, m)
        except ValueError as e:
            problems.append(str(e))
    return problems


# The notebook changed in place is a scratch copy's.
def mutate_notebook(root, m):
    "Plant `m` in its notebook under `root`, in place, cell sources kept as lists of lines."
    path, i = notebook_path(root, m), locate(root, m)
    nb = json.loads(path.read_text())
    nb['cells'][i]['source'] = (
        ''.join(nb['cells'][i]['source']).replace(m.find, m.replace).splitlines(keepends=True)
    )
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')


# ---------------------------------------------------------------------------------------- the tests


# A function's lazy import counts too.
def imported_modules(path):
    "The ttc_nb modules (dotted, as 'rasp.compiler.values') that the Python file `path` imports."
    # anywhere in it, a function's lazy import too, by reading its syntax; `from ttc_nb.a import b`
    # counts both a and a.b, as b may be a module or a name
    out = set()
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name[len('ttc_nb.') :] for a in node.names if a.name.startswith('ttc_nb.')}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith('ttc_nb.'):
                module = node.module[len('ttc_nb.') :]
                out |= {module} | {f'{module}.{a.name}' for a in node.names}
            elif node.module == 'ttc_nb':
                out |= {a.name for a in node.names}
    return out


def pytest_files(root, module):
    "The test files under `root`/tests that import `module`."
    return sorted(
        str(p.relative_to(root))
        for p in (Path(root) / 'tests').glob('test_*.py')
        if module in imported_modules(p)
    )


def library_imports(root, module):
    "The ttc_nb modules (dotted) that the library module `module` imports, relative imports too."
    path = Path(root, 'ttc_nb', *module.split('.')).with_suffix('.py')
    here = module.split('.')[:-1]  # its package, as names
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = '.'.join(
                here[: len(here) - node.level + 1] + ([node.module] if node.module else [])
            )
            out |= {base} | {f'{base}.{a.name}' for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or '').startswith('ttc_nb.'):
            base = node.module[len('ttc_nb.') :]
            out |= {base} | {f'{base}.{a.name}' for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name[len('ttc_nb.') :] for a in node.names if a.name.startswith('ttc_nb.')}
    return out


def importers(root, module):
    "The library modules that import `module` directly."
    lib = Path(root, 'ttc_nb')
    mods = [
        '.'.join(p.relative_to(lib).with_suffix('').parts)
        for p in lib.rglob('*.py')
        if not p.stem.startswith('_')
    ]
    return sorted(m for m in mods if m != module and module in library_imports(root, m))


def notebook_of(root, module):
    "The notebook (name under nbs/, no suffix) that exports `module`, or None."
    return next(
        (
            p.stem
            for p in sorted(Path(root, 'nbs').glob('*.ipynb'))
            if p.stem.partition('_')[2] == module
        ),
        None,
    )


# A mutant is tested by its module's notebook and test files, then by those of the modules that
# import it: a bug in the compiler's layout shows in the assembly's tests.
def test_units(root, module):
    "The notebooks after the owning one, and the test files, that test `module`: (nbs, files)."
    users = importers(root, module)
    nbs = [n for n in (notebook_of(root, u) for u in users) if n]
    files = sorted({f for m in [module, *users] for f in pytest_files(root, m)})
    return nbs, files


# `test_eq` prints the values in the two lines after the error.
def _tail(text, n=300):
    "The last error of a test's output, with the two lines after it, or its last lines."
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errs = [
        i
        for i, line in enumerate(lines)
        if re.match(r'^(E\s+)?[\w.]*(Error|Exception|Failed|Interrupt)\b', line)
    ]
    return ' / '.join(lines[errs[-1] : errs[-1] + 3] if errs else lines[-2:])[:n]


# The package, HOME and caches of the scratch `tree`, one thread.
def env_for(tree):
    "The environment a test runs in."
    home = Path(tree) / 'home'
    return os.environ | dict(
        CI='true',  # as CI runs them: `#| slow` cells read the committed runs, never train
        OMP_NUM_THREADS='1',
        PYTHONPATH=str(tree),
        HOME=str(home),
        PYTHONDONTWRITEBYTECODE='1',
        MPLCONFIGDIR=str(Path.home() / '.config' / 'matplotlib'),
    )


# The exit code is None if killed at the limit.
def run(cmd, tree, limit):
    "Run `cmd` in `tree` within `limit` seconds: (exit code, output, seconds)."
    t0 = time.perf_counter()
    p = subprocess.Popen(
        cmd,
        cwd=tree,
        env=env_for(tree),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, code = p.communicate(timeout=limit)[0], p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)  # its own process group: the test and whatever it started
        out, code = p.communicate()[0], None
    return code, out, time.perf_counter() - t0


# The failure: the cell that failed or the time-out.
def test_notebook(tree, notebook, limit):
    "Test nbs/`notebook`.ipynb as `nbdev_test --path` does: (passed, failure, detail, seconds)."
    timings = Path(tree) / '_build' / f'{notebook}.json'
    code, out, secs = run(
        [
            PY,
            'tools/nbtest.py',
            f'nbs/{notebook}.ipynb',
            '--flags',
            'slow',
            '--timings',
            str(timings),
        ],
        tree,
        limit,
    )
    if code == 0:
        return True, None, None, secs
    if code is None:
        return False, f'nbs/{notebook}.ipynb: ran past {limit:.0f} s', None, secs
    cells = json.loads(timings.read_text()) if timings.exists() else []
    where = (
        f'nbs/{notebook}.ipynb cell {cells[-1]["cell"]}: {cells[-1]["first_line"][:90]}'
        if cells
        else f'nbs/{notebook}.ipynb'
    )
    return False, where, _tail(out), secs


# Returns (passed, the failing test, detail, seconds).
def test_files(tree, files, limit):
    "Run the pytest `files` in one process, stopping at the first failure."
    code, out, secs = run(
        [PY, '-m', 'pytest', '-x', '-q', '-p', 'no:cacheprovider', *files], tree, limit
    )
    if code in (0, 5):
        return True, None, None, secs  # 5: no test collected (all skipped)
    if code is None:
        return False, f'{" ".join(files)}: ran past {limit:.0f} s', None, secs
    failed = re.findall(r'^(?:FAILED|ERROR) (\S+)', out, re.M)
    return False, failed[0] if failed else ' '.join(files), _tail(out), secs


# ------------------------------------------------------------------------------------ scratch trees


# With a git clone of HEAD and a HOME of its own.
def make_base(scratch):
    "The scratch tree every mutant starts from: the working tree's files, exported."
    base = Path(scratch) / 'base'
    subprocess.run(
        ['git', 'clone', '-q', '--shared', '--no-checkout', str(ROOT), str(base)], check=True
    )
    skip = shutil.ignore_patterns(*SKIP)
    ignore = lambda d, names: skip(d, names) | (TOP_SKIP & set(names) if Path(d) == ROOT else set())
    shutil.copytree(ROOT, base, ignore=ignore, dirs_exist_ok=True, symlinks=True)
    subprocess.run(
        ['git', 'read-tree', 'HEAD'], cwd=base, check=True
    )  # the index of HEAD: `git ls-files` works
    cache = Path.home() / '.cache' / 'ttc_nb'
    if cache.exists():
        shutil.copytree(
            cache, base / 'home' / '.cache' / 'ttc_nb', ignore=shutil.ignore_patterns('*.tmp', '.*')
        )
    (base / 'home').mkdir(exist_ok=True)
    r = subprocess.run(
        [str(Path(PY).parent / 'nbdev_export')],
        cwd=base,
        env=env_for(base),
        capture_output=True,
        text=True,
    )
    if r.returncode:
        sys.exit(f'mutate: nbdev_export failed in the scratch copy:\n{r.stderr}')
    return base


def copy_tree(base, dest):
    shutil.copytree(base, dest, symlinks=True)
    return dest


# ------------------------------------------------------------------------------------------ mutants
def units(base, mutants):
    "The tests the mutants need: their notebooks and the pytest files importing their modules."
    nbs, files = {m.notebook for m in mutants}, set()
    for m in mutants:
        more, fs = test_units(base, module_of(base, m.notebook))
        nbs |= set(more)
        files |= set(fs)
    return sorted(nbs), sorted(files)


def baseline(base, scratch, nbs, files, limit=1800):
    "Run every unit once unmutated: {unit: (passed, seconds, what failed)}."
    tree, res = copy_tree(base, Path(scratch) / 'baseline'), {}
    for nb in nbs:
        ok, where, detail, secs = test_notebook(tree, nb, limit)
        res[f'nbs/{nb}.ipynb'] = (ok, secs, None if ok else f'{where}: {detail}')
        print(
            f'baseline {"pass" if ok else "FAIL"} {secs:7.1f} s  nbs/{nb}.ipynb'
            + ('' if ok else f'  {where}: {detail}'),
            flush=True,
        )
    for f in files:
        ok, where, detail, secs = test_files(tree, [f], limit)
        res[f] = (ok, secs, None if ok else f'{where}: {detail}')
        print(
            f'baseline {"pass" if ok else "FAIL"} {secs:7.1f} s  {f}'
            + ('' if ok else f'  {where}: {detail}'),
            flush=True,
        )
    shutil.rmtree(tree, ignore_errors=True)
    return res


def limit_of(secs):
    return 3 * secs + 60


def run_mutant(m, base, scratch, base_res):
    "Plant `m` in a copy of `base`, export it, run its tests until one fails: the mutant's record."
    t0 = time.perf_counter()
    tree = copy_tree(base, Path(scratch) / f'm-{m.name}')
    module = module_of(tree, m.notebook)
    path = Path('ttc_nb', *module.split('.')).with_suffix('.py')  # rasp.compiler.values
    rec = dict(
        name=m.name,
        notebook=f'nbs/{m.notebook}.ipynb',
        module=str(path),
        what=m.what,
        find=m.find,
        replace=m.replace,
        result=None,
        caught_by=None,
        detail=None,
        ran=[],
        seconds=None,
    )
    try:
        before = (tree / path).read_text()
        mutate_notebook(tree, m)
        r = subprocess.run(
            [str(Path(PY).parent / 'nbdev_export'), '--path', f'nbs/{m.notebook}.ipynb'],
            cwd=tree,
            env=env_for(tree),
            capture_output=True,
            text=True,
        )
        after = (tree / path).read_text()
        if r.returncode or after == before or m.replace not in after:
            rec.update(
                result='error',
                detail=(
                    'the export did not plant the bug in '
                    f'ttc_nb/{module}.py: {r.stderr.strip()[-300:]}'
                ),
            )
            return rec
        nb_unit = f'nbs/{m.notebook}.ipynb'
        if not base_res[nb_unit][0]:
            rec.update(result='not run', detail=f'{nb_unit} fails unmutated')
            return rec
        ok, where, detail, secs = test_notebook(tree, m.notebook, limit_of(base_res[nb_unit][1]))
        rec['ran'].append(nb_unit)
        more, fs = test_units(tree, module)
        for nb in sorted(more, key=lambda n: base_res[f'nbs/{n}.ipynb'][1]):
            unit = f'nbs/{nb}.ipynb'
            if ok and base_res[unit][0]:
                ok, where, detail, secs = test_notebook(tree, nb, limit_of(base_res[unit][1]))
                rec['ran'].append(unit)
        if ok:
            files = sorted((f for f in fs if base_res[f][0]), key=lambda f: base_res[f][1])
            if files:
                ok, where, detail, secs = test_files(
                    tree, files, limit_of(sum(base_res[f][1] for f in files))
                )
                rec['ran'] += files
        rec.update(result='survived' if ok else 'caught', caught_by=where, detail=detail)
        return rec
    finally:
        rec['seconds'] = round(time.perf_counter() - t0, 1)
        shutil.rmtree(tree, ignore_errors=True)


# Each update is listed with its command, start, seconds and machine (its commit); a record made
# by one says which by its place in `updates`, and a record without `run` is the whole run's.
def updated(old, new):
    "The report `old` with the mutants and baseline units of `new` replaced, its totals made again."
    n = len(old.get('updates', []))
    recs = {r['name']: r for r in old['mutants']}
    recs |= {r['name']: r | dict(run=n) for r in new['mutants']}
    order = [m.name for m in MUTANTS if m.name in recs]
    units = {u['unit']: u for u in old['baseline']} | {u['unit']: u for u in new['baseline']}
    run = {k: new[k] for k in ('command', 'started', 'seconds', 'machine', 'jobs')}
    return old | dict(
        updates=old.get('updates', []) + [run],
        baseline=list(units.values()),
        totals=totals([recs[k] for k in order]),
        mutants=[recs[k] for k in order],
    )


def table(recs):
    "The summary table: one line per mutant."
    w = max(len(r['name']) for r in recs)
    lines = [f'{"mutant":{w}}  {"module":18}  {"result":8}  {"s":>6}  caught by']
    for r in recs:
        by = r['caught_by'] or r['detail'] or ''
        lines.append(
            f'{r["name"]:{w}}  {Path(r["module"]).stem:18}  '
            f'{r["result"]:8}  {r["seconds"]:6.1f}  {by[:100]}'
        )
    return '\n'.join(lines)


def totals(recs):
    n = {k: sum(r['result'] == k for r in recs) for k in ('caught', 'survived', 'not run', 'error')}
    scored = n['caught'] + n['survived']
    return dict(
        mutants=len(recs),
        **{k.replace(' ', '_'): v for k, v in n.items()},
        caught_share=round(n['caught'] / scored, 3) if scored else None,
        survivors=[r['name'] for r in recs if r['result'] == 'survived'],
    )


# It is recorded for the working tree's package, on CPU.
def machine():
    "The machine, as `ttc_nb.runs.provenance.environment` records it."
    sys.path.insert(0, str(ROOT))
    from ttc_nb.runs.provenance import environment

    env = environment('cpu')
    return {k: env[k] for k in ('cpus', 'device_name', 'torch', 'commit')} | dict(
        threads_per_test=1
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument(
        '--only',
        nargs='+',
        metavar='NAME',
        help='the mutants to run (names, or comma-separated lists of them)',
    )
    p.add_argument('-j', type=int, default=1, metavar='N', help='mutants at a time (default 1)')
    p.add_argument(
        '--out',
        help=(
            'the JSON report (default: tools/mutants.json '
            'when the whole catalogue runs, none with --only)'
        ),
    )
    p.add_argument('--list', action='store_true', help='print the catalogue and exit')
    p.add_argument(
        '--check',
        action='store_true',
        help='check that each text occurs once in its export cell, and exit',
    )
    p.add_argument('--keep', action='store_true', help='keep the scratch directory')
    p.add_argument(
        '--update',
        action='store_true',
        help="with --only: replace those mutants' records in tools/mutants.json, keep the others",
    )
    a = p.parse_args(argv)
    if a.update and not a.only:
        p.error('--update replaces the records of the mutants --only names')
    if a.list:
        for m in MUTANTS:
            print(f'{m.name:26} {m.notebook:20} {m.what}')
        return
    chosen = MUTANTS
    if a.only:
        names = [n for o in a.only for n in o.split(',') if n]
        if unknown := [n for n in names if n not in {m.name for m in MUTANTS}]:
            p.error(f'unknown mutants: {", ".join(unknown)}')
        chosen = [m for m in MUTANTS if m.name in names]
    problems = check_catalogue(ROOT, MUTANTS)
    if a.check or problems:
        print(
            '\n'.join(problems)
            or f'catalogue: {len(MUTANTS)} mutants, each text found once in its export cell'
        )
        if problems:
            sys.exit(
                f'mutate: {len(problems)} problem(s) in the catalogue; '
                f'fix {"them" if len(problems) > 1 else "it"} first'
            )
        return
    out = Path(a.out) if a.out else (REPORT if a.update or not a.only else None)
    t0, started = time.perf_counter(), datetime.now(timezone.utc).isoformat(timespec='seconds')
    tested = machine()  # and the commit of the tree the scratch copy is made from, now
    scratch = Path(tempfile.mkdtemp(prefix='ttc-mutate-'))
    try:
        base = make_base(scratch)
        if problems := check_catalogue(base, chosen):
            sys.exit('mutate: ' + '\n'.join(problems))
        nbs, files = units(base, chosen)
        print(
            f'mutate: {len(chosen)} mutants; '
            f'baseline of {len(nbs)} notebooks and {len(files)} test files first',
            flush=True,
        )
        base_res = baseline(base, scratch, nbs, files)
        recs = {}

        def one(m):
            r = run_mutant(m, base, scratch, base_res)
            print(
                f'{r["result"]:8} {r["seconds"]:6.1f} s  {m.name}: '
                f'{r["caught_by"] or r["detail"] or ""}',
                flush=True,
            )
            return r

        with ThreadPoolExecutor(max(1, a.j)) as ex:
            recs = list(ex.map(one, chosen))
    finally:
        if not a.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print('\n' + table(recs))
    tot = totals(recs)
    print(
        f'\n{tot["caught"]} of {tot["mutants"]} caught, {tot["survived"]} survived'
        + (f', {tot["not_run"]} not run' if tot['not_run'] else '')
        + (f', {tot["error"]} errors' if tot['error'] else '')
        + f'; {time.perf_counter() - t0:.0f} s'
    )
    if out:
        report = dict(
            command=' '.join(['tools/mutate.py', *(argv if argv is not None else sys.argv[1:])]),
            started=started,
            seconds=round(time.perf_counter() - t0),
            machine=tested,
            jobs=a.j,
            baseline=[
                dict(unit=u, passed=ok, seconds=round(s, 1), failure=f)
                for u, (ok, s, f) in base_res.items()
            ],
            totals=tot,
            mutants=recs,
        )
        if a.update:
            report = updated(json.loads(out.read_text()), report)
        out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + '\n')
        print(f'written: {out}')


if __name__ == '__main__':
    main()
