"""Keep committed run directories light, and check that they are.

The rules, for every run directory under nbs/results:
1. a checkpoint.pt holds the weights alone: dict(model=state_dict, update=int, elapsed=float,
   world=int), loadable with `torch.load(path, weights_only=True)`;
2. a checkpoint.pt is committed only where a notebook, test or benchmark loads it (`loaded_runs`);
3. a metrics.jsonl is at most 200 kB: a longer one keeps every evaluation record and an even sample
   of the training records, about 100 kB in all, and its summary.json says so in
   `metrics_subsampled` (with the number of records the run wrote);
4. learning.png and compute_curve.png (`ttc report DIR` redraws them) are committed only where
   README.md or a notebook shows them;
5. no file is over 5 MB;
6. config.json holds `command`, the `ttc run` line that rebuilds its config.

Usage: python tools/slim_results.py [DIR...]           apply the rules to the run directories DIR
                                                       (default: every committed one)
       python tools/slim_results.py --check [DIR...]   only report what breaks them;
                                                       exit 1 if anything does
"""

import argparse
import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = 'nbs/results'
MB = 10**6
MAX_FILE, MAX_METRICS, METRICS_TARGET = 5 * MB, 200_000, 100_000
CHECKPOINT_KEYS = {'model', 'update', 'elapsed', 'world'}
PLOTS = ('learning.png', 'compute_curve.png')


# -------------------------------------------------------------------------------------------- files


# A deletion not yet staged is gone.
def tracked(root=ROOT, under=RESULTS):
    "Repository-relative paths of the committed files under `under` that exist on disk."
    out = subprocess.run(
        ['git', 'ls-files', '-z', '--', under], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return sorted(p for p in out.split('\0') if p and (Path(root) / p).is_file())


def run_dirs(files):
    "The run directories (those with a config.json) among repository-relative `files`."
    return sorted({str(Path(f).parent) for f in files if Path(f).name == 'config.json'})


# ------------------------------------------------------------------ who loads a checkpoint (rule 2)
# and torch.load; `by_difficulty` (ttc_nb.report.act) loads the run it is given
LOADERS = {'load_run', 'evaluate_run', 'load_checkpoint', 'by_difficulty'}


def _is_loader(call):
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in LOADERS
    return isinstance(f, ast.Attribute) and (
        f.attr in LOADERS
        or (f.attr == 'load' and isinstance(f.value, ast.Name) and f.value.id == 'torch')
    )


# The value says whether the test is negated.
def _exists_test(test):
    "True if `test` is `not X.exists()`, False if `X.exists()`, None for any other test."
    neg = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    t = test.operand if neg else test
    if isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute) and t.func.attr == 'exists':
        return neg
    return None


def _join(a, b):
    return b if a in ('', '.') else f'{a}/{b}'


# From module-level names (`RESULTS = Path('results/deq')`), `/` joins, f-strings, loops and
# comprehensions over literal tuples, lists and dicts (or names bound to them), local assignments,
# and a function's parameters resolved at its call sites in the same file. A load guarded by
# `if not X.exists():` (or after `if X.exists(): return`) fills a cache that is committed, so it is
# not counted.
def _imported_literals(body, root=ROOT):
    "{name: value expr} of the names `body` imports from ttc_nb that its module assigns once."
    out = {}
    for node in body:
        if not (isinstance(node, ast.ImportFrom) and (node.module or '').startswith('ttc_nb.')):
            continue
        path = Path(root, *node.module.split('.')).with_suffix('.py')
        if not path.exists():
            continue
        assigned = {}
        for s in ast.parse(path.read_text()).body:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append(s.value)
        for a in node.names:
            if len(assigned.get(a.name, [])) == 1:
                out[a.asname or a.name] = assigned[a.name][0]
    return out


class _Scan:
    "The paths that a file's loader calls can receive, from its literals."

    def __init__(self, body, root=ROOT):
        self.module, self.calls = {}, []  # name: [value exprs]; (call, env, function, guarded)
        for node in body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.module.setdefault(t.id, []).append(node.value)
        for name, value in _imported_literals(body, root).items():
            self.module.setdefault(name, [value])  # a page's own assignment comes first
        self._block(body, {}, None, False)

    # -- walking: every call, with what its names are bound to
    def _block(self, stmts, env, fn, guarded):
        env = dict(env)
        for s in stmts:
            self._stmt(s, env, fn, guarded)
            if (
                isinstance(s, ast.If)
                and _exists_test(s.test) is False
                and not s.orelse
                and any(isinstance(b, ast.Return) for b in s.body)
            ):
                guarded = True  # `if cached.exists(): return ...`: what follows fills the cache
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and fn is not None:
                for t in s.targets if isinstance(s, ast.Assign) else [s.target]:
                    if isinstance(t, ast.Name) and s.value is not None:
                        env[t.id] = ('expr', s.value, dict(env))

    def _stmt(self, s, env, fn, guarded):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = s.args
            params = {p.arg: ('param', s, i) for i, p in enumerate([*a.posonlyargs, *a.args])} | {
                p.arg: ('param', s, p.arg) for p in a.kwonlyargs
            }
            for d in s.decorator_list:
                self._expr(d, env, fn, guarded)
            return self._block(s.body, env | params, s, False)
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self._expr(s.iter, env, fn, guarded)
            self._block(s.body, env | self._bind(s.target, s.iter, env), fn, guarded)
            return self._block(s.orelse, env, fn, guarded)
        if isinstance(s, ast.If):
            self._expr(s.test, env, fn, guarded)
            self._block(s.body, env, fn, guarded or _exists_test(s.test) is True)
            return self._block(s.orelse, env, fn, guarded)
        if isinstance(s, (ast.While, ast.With, ast.AsyncWith, ast.Try, ast.ClassDef)):
            for f, v in ast.iter_fields(s):
                if isinstance(v, list) and v and isinstance(v[0], ast.stmt):
                    self._block(v, env, fn, guarded)
                elif isinstance(v, list):
                    for x in v:
                        if isinstance(x, ast.AST):
                            self._expr(x, env, fn, guarded)
                elif isinstance(v, ast.expr):
                    self._expr(v, env, fn, guarded)
            for h in getattr(s, 'handlers', []):
                self._block(h.body, env, fn, guarded)
            return
        self._expr(s, env, fn, guarded)

    def _expr(self, node, env, fn, guarded):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = dict(env)
            for g in node.generators:
                self._expr(g.iter, inner, fn, guarded)
                inner |= self._bind(g.target, g.iter, inner)
            for part in ('elt', 'key', 'value'):
                if hasattr(node, part):
                    self._expr(getattr(node, part), inner, fn, guarded)
            return
        if isinstance(node, ast.Lambda):
            return self._expr(node.body, env, fn, guarded)
        if isinstance(node, ast.Call):
            self.calls.append((node, env, fn, guarded))
        for child in ast.iter_child_nodes(node):
            self._expr(child, env, fn, guarded)

    def _bind(self, target, it, env):
        "What the names of a loop `target` over `it` are bound to."
        if isinstance(target, ast.Name):
            return {target.id: ('iter', it, env)}
        if (
            isinstance(target, ast.Tuple)
            and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == 'items'
        ):
            k, v = (target.elts + [None, None])[:2]
            out = {k.id: ('keys', it.func.value, env)} if isinstance(k, ast.Name) else {}
            if isinstance(v, ast.Name):
                out[v.id] = ('values', it.func.value, env, None)
            elif isinstance(v, ast.Tuple):
                out |= {
                    e.id: ('values', it.func.value, env, i)
                    for i, e in enumerate(v.elts)
                    if isinstance(e, ast.Name)
                }
            return out
        return {}

    # -- evaluating: the strings an expression can be, or None where it cannot be told
    def _literal(self, node, env, depth):
        "A tuple, list, set or dict literal that `node` is, or names."
        for _ in range(5):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                return node
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ('sorted', 'list', 'tuple')
                and node.args
            ):
                node = node.args[0]
            elif (
                isinstance(node, ast.Name)
                and node.id not in env
                and len(self.module.get(node.id, [])) == 1
            ):
                node = self.module[node.id][0]
            else:
                return None
        return None

    def _items(self, node, env, depth):
        "The strings the elements of iterable `node` can be."
        lit = self._literal(node, env, depth)
        if lit is None:
            return None
        return self._union(
            [k for k in lit.keys if k is not None] if isinstance(lit, ast.Dict) else lit.elts,
            env,
            depth,
        )

    def _union(self, exprs, env, depth):
        vals = [self.values(e, env, depth) for e in exprs]
        return set().union(*(v for v in vals if v)) or None

    def _bound(self, b, depth):
        kind = b[0]
        if kind == 'expr':
            return self.values(b[1], b[2], depth + 1)
        if kind == 'iter':
            return self._items(b[1], b[2], depth + 1)
        lit = self._literal(b[1], b[2], depth + 1)
        if not isinstance(lit, ast.Dict):
            return None
        if kind == 'keys':
            return self._union([k for k in lit.keys if k is not None], b[2], depth + 1)
        vals = (
            lit.values
            if b[3] is None
            else [
                v.elts[b[3]] for v in lit.values if isinstance(v, ast.Tuple) and len(v.elts) > b[3]
            ]
        )
        return self._union(vals, b[2], depth + 1)

    # `key`: its position or name.
    def _param(self, fn, key, depth):
        "The strings parameter `key` of function `fn` receives at its call sites."
        out = set()
        for call, env, cfn, _ in self.calls:
            if not (isinstance(call.func, ast.Name) and call.func.id == fn.name):
                continue
            arg = (
                next((k.value for k in call.keywords if k.arg == key), None)
                if isinstance(key, str)
                else None
            )
            if arg is None and isinstance(key, int):
                name = [*fn.args.posonlyargs, *fn.args.args][key].arg
                arg = (
                    call.args[key]
                    if key < len(call.args) and not isinstance(call.args[key], ast.Starred)
                    else next((k.value for k in call.keywords if k.arg == name), None)
                )
            if arg is not None:
                out |= self.values(arg, env, depth + 1) or set()
        return out or None

    def values(self, node, env, depth=0):
        if depth > 8:
            return None
        if isinstance(node, ast.Constant):  # a string, or an int such as a seed in an f-string
            v = node.value
            return (
                {v}
                if isinstance(v, str)
                else {str(v)}
                if isinstance(v, int) and not isinstance(v, bool)
                else None
            )
        if isinstance(node, ast.Name):
            if node.id in env:
                b = env[node.id]
                return self._param(b[1], b[2], depth) if b[0] == 'param' else self._bound(b, depth)
            if node.id in self.module:
                return self._union(self.module[node.id], {}, depth + 1)
            return {''} if node.id == 'ROOT' else None  # the tests' repository root
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            a, b = self.values(node.left, env, depth + 1), self.values(node.right, env, depth + 1)
            return {_join(x, y) for x in a for y in b} if a and b else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ('Path', 'str')
            and node.args
            and not node.keywords
        ):
            parts = [self.values(a, env, depth + 1) for a in node.args]
            if not all(parts):
                return None
            out = {''}
            for p in parts:
                out = {_join(x, y) for x in out for y in p}
            return out
        if isinstance(node, ast.JoinedStr):
            out = {''}
            for v in node.values:
                if isinstance(v, ast.Constant):
                    p = {v.value}
                elif (
                    isinstance(v, ast.FormattedValue)
                    and v.conversion == -1
                    and v.format_spec is None
                ):
                    p = self.values(v.value, env, depth + 1)
                else:
                    p = None
                if not p:
                    return None
                out = {x + y for x in out for y in p}
            return out
        return None

    def loaded(self):
        "The paths the file's unguarded loader calls receive."
        out = set()
        for call, env, fn, guarded in self.calls:
            if guarded or not _is_loader(call):
                continue
            arg = (
                call.args[0]
                if call.args
                else next(
                    (k.value for k in call.keywords if k.arg in ('run_dir', 'path', 'f')), None
                )
            )
            if arg is not None:
                out |= self.values(arg, env) or set()
        return out


# Cells that do not parse as Python, like shell magics, are skipped.
def _cells(text):
    "The code cells of a notebook's JSON `text`, each parsed."
    body = []
    for c in json.loads(text)['cells']:
        if c['cell_type'] != 'code':
            continue
        src = ''.join(c['source'])
        src = '\n'.join(
            line for line in src.splitlines() if not line.lstrip().startswith(('%', '!'))
        )
        try:
            body += ast.parse(src).body
        except SyntaxError:
            pass
    return body


# `base`: the folder the paths of the file that holds `p` are relative to.
def _normal(base, p):
    "Repository-relative run directory of path `p` as written relative to `base`."
    p = os.path.normpath(_join(base, p))
    return str(Path(p).parent) if Path(p).name == 'checkpoint.pt' else p


# Sources: notebooks' code cells (paths relative to nbs/), Python files (relative to the root).
def loaded_in(sources):
    "{run directory: [who loads it]} from `sources`, {repository-relative file: text}."
    out = {}
    for name, text in sources.items():
        nb = name.endswith('.ipynb')
        try:
            body = _cells(text) if nb else ast.parse(text).body
        except SyntaxError:
            continue
        base = str(Path(name).parent) if nb else ''
        for p in _Scan(body).loaded():
            out.setdefault(_normal(base, p), []).append(name)
    return out


# As its committed output records them (`rows[].weights`).
def benchmark_weights(root=ROOT, files=None):
    "{run directory: [file]}: the runs whose weights a benchmark loaded."
    out = {}
    for f in files if files is not None else tracked(root):
        if Path(f).suffix != '.json' or Path(f).parent != Path(RESULTS):
            continue
        d = json.loads((Path(root) / f).read_text())
        for r in d.get('rows', []) if isinstance(d, dict) else []:
            if isinstance(r, dict) and r.get('weights'):
                out.setdefault(os.path.normpath(r['weights']), []).append(f'{f} (rows[].weights)')
    return out


def sources(root=ROOT):
    "{repository-relative path: text} of the files whose code may load a committed checkpoint."
    root = Path(root)
    return {
        str(p.relative_to(root)): p.read_text()
        for pat in ('nbs/*.ipynb', 'tests/*.py', 'benchmarks/*.py')
        for p in sorted(root.glob(pat))
    }


def loaders(root=ROOT, files=None):
    "{run directory: [who loads it]}: notebooks, tests and benchmarks' recorded outputs."
    out = loaded_in(sources(root))
    for d, who in benchmark_weights(root, files).items():
        out.setdefault(d, []).extend(who)
    return out


# ---------------------------------------------------------------------------------- the other rules
def shown_plots(root=ROOT):
    "Repository-relative paths of the pngs that README.md or a notebook shows."
    root, out = Path(root), set()
    for f in [root / 'README.md', *sorted((root / 'nbs').glob('*.ipynb'))]:
        text = f.read_text()
        if f.suffix == '.ipynb':
            text = '\n'.join(''.join(c['source']) for c in json.loads(text)['cells'])
        base = str(f.parent.relative_to(root))
        out |= {os.path.normpath(_join(base, m)) for m in re.findall(r'[\w./=+-]+\.png', text)}
    return out


def checkpoint_problem(path):
    "Why the checkpoint at `path` is not weights alone, or None."
    import torch

    try:
        c = torch.load(path, map_location='cpu', weights_only=True)
    except Exception as e:
        return f'{path}: does not load with weights_only=True ({type(e).__name__})'
    if not isinstance(c, dict) or set(c) != CHECKPOINT_KEYS:
        return (
            f'{path}: keys {sorted(c) if isinstance(c, dict) else type(c)}, '
            f'not {sorted(CHECKPOINT_KEYS)}'
        )
    if not (
        isinstance(c['update'], int)
        and isinstance(c['elapsed'], float)
        and isinstance(c['world'], int)
    ):
        return f'{path}: update, elapsed, world are not int, float, int'
    return None


def _registry():
    from ttc_nb.runs import registry

    return registry


def command_problem(path):
    "Why `command` of the config.json at `path` does not rebuild its config, or None."
    runs = _registry()
    saved = json.loads(Path(path).read_text())
    if 'command' not in saved:
        return f'{path}: no command'
    argv = shlex.split(saved['command'])
    if argv[:2] != ['ttc', 'run']:
        return f'{path}: command is not a `ttc run` line'
    from ttc_nb.cli import parser

    args = parser(argv[1:]).parse_args(argv[1:])
    try:
        exp = runs.get_experiment(args.experiment)
        same = (args.experiment, args.preset, exp.config(args.preset, args.set)) == (
            saved['experiment'],
            saved['preset'],
            runs.saved_config(exp, saved),
        )
    except (runs.UsageError, TypeError) as e:
        return f'{path}: command does not parse back: {e}'
    return None if same else f'{path}: command rebuilds another config'


def rule_problems(files, root=ROOT, load=None, shown=None):
    "What breaks the rules among repository-relative `files` (under nbs/results)."
    root = Path(root)
    load = loaders(root) if load is None else load
    shown = shown_plots(root) if shown is None else shown
    out = []
    for f in files:
        p, name = root / f, Path(f).name
        if p.stat().st_size > MAX_FILE:
            out.append(f'{f}: {p.stat().st_size:,} bytes, over {MAX_FILE:,}')
        if name == 'checkpoint.pt':
            if str(Path(f).parent) not in load:
                out.append(f'{f}: no notebook, test or benchmark loads it')
            if why := checkpoint_problem(p):
                out.append(why)
        if name == 'metrics.jsonl' and p.stat().st_size > MAX_METRICS:
            out.append(f'{f}: {p.stat().st_size:,} bytes, over {MAX_METRICS:,}')
        if name in PLOTS and f not in shown:
            out.append(f'{f}: no page shows it (`ttc report` redraws it)')
        if name == 'config.json' and (why := command_problem(p)):
            out.append(why)
    return out


# ----------------------------------------------------------------------------------------- slimming


# The weights are checked bit-identical.
def weights_only(path, world=1):
    "Rewrite the checkpoint at `path` as its weights, update, training time and world size."
    import torch

    old = torch.load(
        path, map_location='cpu', weights_only=False
    )  # our own file, written by an older `fit`
    new = dict(
        model=old['model'],
        update=int(old['update']),
        elapsed=float(old['elapsed']),
        world=int(old.get('world', world)),
    )
    tmp = Path(f'{path}.tmp')
    torch.save(new, tmp)
    back = torch.load(tmp, map_location='cpu', weights_only=True)
    a, b = old['model'], back['model']
    bits = lambda t: (
        t.detach().contiguous().reshape(-1).view(torch.uint8)
    )  # bit for bit: a NaN buffer equals itself
    assert list(a) == list(b) and all(
        a[k].dtype == b[k].dtype
        and a[k].shape == b[k].shape
        and torch.equal(bits(a[k]), bits(b[k]))
        for k in a
    ), path
    os.replace(tmp, path)


# The first and last training records are kept; about `target` bytes in all.
def subsample(path, summary=None, target=METRICS_TARGET):
    "Keep every evaluation record of the log at `path` and an even sample of its training records."
    lines = Path(path).read_text().splitlines(keepends=True)
    is_eval = [any(k.startswith('valid_') for k in json.loads(line)) for line in lines]
    train = [i for i, e in enumerate(is_eval) if not e]
    room = target - sum(len(line) for line, e in zip(lines, is_eval) if e)
    n = max(2, min(len(train), room * len(train) // max(1, sum(len(lines[i]) for i in train))))
    keep = {train[round(j * (len(train) - 1) / (n - 1))] for j in range(n)} if train else set()
    kept = [line for i, line in enumerate(lines) if is_eval[i] or i in keep]
    Path(path).write_text(''.join(kept))
    if summary and Path(summary).exists():
        s = json.loads(Path(summary).read_text())
        written = s.get('metrics_subsampled', {}).get(
            'records', len(lines)
        )  # a log subsampled before: the run's count
        s['metrics_subsampled'] = dict(records=written, kept=len(kept))
        Path(summary).write_text(json.dumps(s, indent=2))
    return len(lines), len(kept)


# Its other lines are left as they are.
def add_command(path):
    "Insert `command` right after `preset` in the config.json at `path`."
    runs = _registry()
    text, saved = Path(path).read_text(), json.loads(Path(path).read_text())
    exp = runs.get_experiment(saved['experiment'])
    line = runs.rerun_command(saved['experiment'], saved['preset'], runs.saved_config(exp, saved))
    new, n = re.subn(
        r'^(  "preset": .*,\n)',
        lambda m: m.group(1) + f'  "command": {json.dumps(line)},\n',
        text,
        count=1,
        flags=re.M,
    )
    if n != 1:
        new = json.dumps(
            {**{k: saved[k] for k in ('experiment', 'preset')}, 'command': line, **saved}, indent=2
        )
    assert json.loads(new) == saved | {'command': line}
    Path(path).write_text(new)


def slim(run_dir, root=ROOT, load=None, shown=None, say=print):
    "Apply the rules to `run_dir` (repository-relative), touching only the files that break them."
    root, d = Path(root), Path(run_dir)
    load = loaders(root) if load is None else load
    shown = shown_plots(root) if shown is None else shown
    p = root / d
    if (p / 'checkpoint.pt').exists():
        if str(d) not in load:
            (p / 'checkpoint.pt').unlink()
            say(f'removed {d}/checkpoint.pt: nothing loads it')
        elif checkpoint_problem(p / 'checkpoint.pt'):
            cfg = json.loads((p / 'config.json').read_text())
            weights_only(p / 'checkpoint.pt', cfg.get('world_size', 1))
            say(f'weights only: {d}/checkpoint.pt')
    m = p / 'metrics.jsonl'
    if m.exists() and m.stat().st_size > MAX_METRICS:
        n, k = subsample(m, p / 'summary.json')
        say(f'subsampled {d}/metrics.jsonl: {k} of {n} records')
    for name in PLOTS:
        if (p / name).exists() and str(d / name) not in shown:
            (p / name).unlink()
            say(f'removed {d}/{name}')
    if (p / 'config.json').exists() and 'command' not in json.loads(
        (p / 'config.json').read_text()
    ):
        add_command(p / 'config.json')
        say(f'command added: {d}/config.json')


def main(argv=None):
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument(
        'dirs', nargs='*', help='run directories (default: every committed one under nbs/results)'
    )
    a.add_argument(
        '--check',
        action='store_true',
        help='only report what breaks the rules; exit 1 if anything does',
    )
    args = a.parse_args(argv)
    os.chdir(ROOT)
    if args.dirs:
        dirs = [os.path.normpath(os.path.relpath(Path(d).resolve(), ROOT)) for d in args.dirs]
        files = sorted(
            str(f.relative_to(ROOT)) for d in dirs for f in (ROOT / d).rglob('*') if f.is_file()
        )
    else:
        files = tracked()
        dirs = run_dirs(files)
    load, shown = loaders(), shown_plots()
    if args.check:
        problems = rule_problems(files, load=load, shown=shown)
        print('\n'.join(problems) or 'all results in rule')
        return 1 if problems else 0
    for d in dirs:
        slim(d, load=load, shown=shown)


if __name__ == '__main__':
    sys.exit(main())
