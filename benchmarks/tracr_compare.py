"""tracr's column of the compiled-shape table: tracr's own library programs, compiled by tracr.

Each is checked against `rasp.evaluate`. Not part of the project's test suite, and not run with the
project's environment: tracr needs jax and haiku, so it runs in a virtual environment of its own. To
reproduce `nbs/results/rasp/compile/tracr.json`:

    python3 -m venv /work/tracrvenv
    /work/tracrvenv/bin/pip install "jax[cpu]" dm-haiku chex einops networkx numpy typing_extensions
    # commit 9ce2b8c82b6ba10e62e86cf6f390e7536d4fd2cd
    git clone https://github.com/google-deepmind/tracr /work/tracr-src
    T="OMP_NUM_THREADS=1 PYTHONPATH=/work/tracr-src nice -n 5 taskset -c 0 \\
       /work/tracrvenv/bin/python benchmarks/tracr_compare.py \\
       --tracr-commit 9ce2b8c82b6ba10e62e86cf6f390e7536d4fd2cd"
    # every program at tracr's default mlp_exactness 100
    eval $T
    eval $T --mlp-exactness 10000 --programs length reverse hist sort_unique count \\
                                             selector_width_lt frac_prevs sort
    # 64 runs past the compile limit
    eval $T --mlp-exactness 10000 --programs sort_freq --lengths 8 20 40
    # dyck1 at 64, dyck2 at 40 too
    eval $T --mlp-exactness 10000 --programs shuffle_dyck1 shuffle_dyck2 --lengths 8 20

Each call adds its rows to the JSON (keyed by program and mlp_exactness) and keeps the others. The
whole takes about 35 minutes on one core; it needs about 5 GB of memory.

Each program is compiled with the vocabulary of tracr's own tests (tracr/compiler/test_cases.py;
sort_unique: see its caveat) at the max_seq_len of its test and at 8, 20, 40 and 64. A compiled
model is run on N random inputs (padded with tracr's PAD token, in one batch), and an input counts
as exact when the decoded output equals `rasp.evaluate` at every position where the evaluation is
not None (tracr's own test criterion; numerical outputs within tracr's test tolerance, atol 1e-7 and
rtol 0.005).
"""

import os

os.environ.setdefault(
    'XLA_FLAGS', '--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1'
)
import argparse
import json
import platform
import signal
import sys
import time
import zlib
from datetime import datetime, timezone
import numpy as np
import jax
import jax.numpy as jnp
import haiku as hk
from tracr.compiler import compiling, lib
from tracr.rasp import rasp

BOS, PAD = 'BOS', 'PAD'
ABCD = ['a', 'b', 'c', 'd']


def _sort_unique_vocab(L):
    return list(
        range(1, max(L, 4) + 1)
    )  # distinct keys need a vocabulary at least as long as the input


# name: (tracr program for max_seq_len L, vocabulary for L, max_seq_len of tracr's test,
# our program, caveat)
PROGRAMS = {
    'length': (
        lambda L: lib.make_length(),
        lambda L: ABCD,
        5,
        'length',
        "same function; tracr's is a selector width over an "
        'all-true selector (categorical), ours a mean read at the BOS',
    ),
    'reverse': (
        lambda L: lib.make_reverse(rasp.tokens),
        lambda L: ABCD,
        5,
        'reverse',
        'same program (length, then opp_idx = length - indices - 1 as two MLPs, '
        'then one aggregate)',
    ),
    'hist': (
        lambda L: lib.make_hist(),
        lambda L: ABCD,
        5,
        'hist',
        "same function; tracr's selector width always uses its "
        'BOS (one head + MLP), so structurally it is our hist_bos',
    ),
    'sort_unique': (
        lambda L: lib.make_sort_unique(rasp.tokens, rasp.tokens),
        _sort_unique_vocab,
        5,
        'sort',
        'unique keys only: inputs are distinct tokens from a vocabulary '
        '1..max(L,4) (test: {1,2,3,4}); ours also sorts repeated keys stably',
    ),
    'sort': (
        lambda L: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=L, min_key=1),
        lambda L: [1, 2, 3, 4],
        5,
        'sort',
        'ties broken by a numerical key x + i/max_seq_len in one SequenceMap, '
        'where ours breaks them with a second selector on indices',
    ),
    'sort_freq': (
        lambda L: lib.make_sort_freq(max_seq_len=L),
        lambda L: [1, 2, 3, 4],
        5,
        'most_freq_bos',
        'tracr outputs every token, repeats included, ordered by descending frequency; '
        'ours (the RASP paper\'s most_freq) outputs each distinct token once and "§" after',
    ),
    'shuffle_dyck1': (
        lambda L: lib.make_shuffle_dyck(pairs=['()']),
        lambda L: ['(', ')'],
        5,
        'dyck1_ptf',
        'tracr outputs one bool (whole input balanced) '
        'at every position; ours outputs T/P/F per prefix',
    ),
    'shuffle_dyck2': (
        lambda L: lib.make_shuffle_dyck(pairs=['()', '{}']),
        lambda L: ['(', ')', '{', '}'],
        5,
        'dyck2_ptf',
        'shuffle-Dyck-2 balances each pair on its own ("({)}" is accepted), '
        'ours is Dyck-2 (nesting checked); and one bool vs T/P/F per prefix',
    ),
    'frac_prevs': (
        lambda L: lib.make_frac_prevs(rasp.tokens == 'l'),
        lambda L: ['h', 'e', 'l', 'o'],
        5,
        'frac_prevs',
        'same program; tracr\'s test counts "l" over {h,e,l,o}, ours counts "a"',
    ),
    'count': (
        lambda L: lib.make_count(rasp.tokens, 'a'),
        lambda L: ['a', 'b', 'c'],
        8,
        'count',
        "same function; tracr's is one selector width, ours length times a mean",
    ),
    'shift_by_2': (
        lambda L: lib.shift_by(2, rasp.tokens),
        lambda L: ABCD,
        5,
        'shift',
        'same program; tracr pads with None (not checked), ours with "_"',
    ),
    'selector_width_lt': (
        lambda L: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)),
        lambda L: ABCD,
        5,
        'selector_width',
        "not in tracr's lib: SelectorWidth(Select(tokens, tokens, LT)) from tracr's "
        "primitives (its test uses TRUE); tracr's width uses its BOS, ours here none",
    ),
}
LENGTHS = (8, 20, 40, 64)
NOTES = [
    "tracr's selector width reads 1/(w+1) from a BOS head and decodes it with an MLP of ReLU "
    'ramps 1/mlp_exactness wide at thresholds midway between neighbouring values; '
    'at the default 100 a ramp is wider than the gap 1/(w+1) - 1/(w+2) '
    'from w = 9 on, and widths from about there decode wrong (length, hist, '
    'count, sort_unique, sort and reverse, which starts from length). '
    'mlp_exactness 10000 makes all of them exact at every max_seq_len to 64',
    'sort_freq at max_seq_len 40 stays wrong at mlp_exactness 10000: its outputs are off by '
    'a position around the boundaries between groups of equal tokens; not diagnosed further',
    'frac_prevs is numerical: its misses at 40 and 64 are errors up to 2.4e-3, '
    "outside tracr's test tolerance (atol 1e-7, rtol 0.005); "
    'mlp_exactness does not change them',
    'shuffle_dyck inputs are uniform random strings over the brackets, '
    'mostly unbalanced, so its exactness mostly checks the 0 output',
]


class CompileTimeout(Exception):
    "A compile that ran past its limit."


def _alarm(signum, frame):
    raise CompileTimeout()


def sample(rng, name, vocab, L, n, full):
    "n random inputs of length L (full) or of lengths uniform in 1..L."
    lens = [L] * n if full else rng.integers(1, L + 1, n).tolist()
    if name == 'sort_unique':
        return [rng.choice(vocab, k, replace=False).tolist() for k in lens]
    return [[vocab[i] for i in rng.integers(0, len(vocab), k)] for k in lens]


# Real heads: any nonzero weight.
def shape(m):
    "Blocks, heads per attention block, MLP blocks with weights, residual width and parameters."
    p, cfg = m.params, m.model_config
    heads, mlps = [], []
    for layer in range(cfg.num_layers):
        a = f'transformer/layer_{layer}/attn/'
        ws = [
            np.asarray(p[a + k]['w']).reshape(-1, cfg.num_heads, cfg.key_size)
            for k in ('query', 'key', 'value')
        ]
        ws.append(
            np.asarray(p[a + 'linear']['w'])
            .reshape(cfg.num_heads, cfg.key_size, -1)
            .transpose(2, 0, 1)
        )
        heads.append(int(sum(any(np.any(w[:, h] != 0) for w in ws) for h in range(cfg.num_heads))))
        mlps.append(
            bool(np.any(np.asarray(p[f'transformer/layer_{layer}/mlp/linear_1']['w']) != 0))
        )
    leaves = jax.tree_util.tree_leaves(p)
    return dict(
        blocks=2 * cfg.num_layers,
        layers=cfg.num_layers,
        attn_layers=sum(h > 0 for h in heads),
        heads=heads,
        mlp_layers=sum(mlps),
        d_model=int(p['token_embed']['embeddings'].shape[1]),
        head_slots=cfg.num_heads,
        key_size=cfg.key_size,
        mlp_hidden=cfg.mlp_hidden_size,
        params=int(sum(x.size for x in leaves)),
        params_nonzero=int(sum(np.count_nonzero(np.asarray(x)) for x in leaves)),
    )


def agree(out, want, numerical):
    "Whether a decoded output equals the evaluation where the evaluation is not None."
    for o, w in zip(out, want):
        if w is None:
            continue
        if numerical:
            if o is None or abs(o - w) > 1e-7 + 0.005 * abs(w):
                return False
        elif o != w:
            return False
    return True


def check(m, program, inputs, L, forward):
    "Exact count over `inputs`, on the first 50 and on all, and the largest numerical error."
    numerical = rasp.is_numerical(program)
    toks = jnp.array([m.input_encoder.encode([BOS] + x + [PAD] * (L - len(x))) for x in inputs])
    raw = np.asarray(forward(m.params, toks).unembedded_output)
    ok, err = [], 0.0
    for x, row in zip(inputs, raw):
        out = row.tolist()[1 : len(x) + 1]
        if m.output_encoder is not None and not numerical:
            out = m.output_encoder.decode(out)
        want = rasp.evaluate(program, x)
        ok.append(agree(out, want, numerical))
        if numerical:
            err = max([err] + [abs(o - w) for o, w in zip(out, want) if w is not None])
    r = {'exact_50': int(sum(ok[:50])), 'exact': int(sum(ok)), 'inputs': len(ok)}
    if numerical:
        r['max_abs_err'] = float(err)
    return r


# The inputs: mixed-length and full-length.
def run(name, L, n, seed, limit, exactness):
    "One program at one max_seq_len: compile, shape, and exactness on two sets of inputs."
    make, vocab_of, _, _, _ = PROGRAMS[name]
    program, vocab = make(L), vocab_of(L)
    signal.alarm(limit)
    try:
        t = time.perf_counter()
        m = compiling.compile_rasp_to_model(
            program, set(vocab), L, compiler_bos=BOS, compiler_pad=PAD, mlp_exactness=exactness
        )
        compile_s = time.perf_counter() - t
    finally:
        signal.alarm(0)
    row = dict(
        max_seq_len=L,
        vocab=[str(v) for v in vocab] if len(vocab) <= 8 else f'1..{len(vocab)}',
        compile_s=round(compile_s, 2),
        **shape(m),
    )
    forward, t = jax.jit(m.forward), time.perf_counter()
    rng = np.random.default_rng([seed, L, zlib.crc32(name.encode())])
    row['mixed'] = check(m, program, sample(rng, name, vocab, L, n, full=False), L, forward)
    row['full'] = check(m, program, sample(rng, name, vocab, L, n, full=True), L, forward)
    row['check_s'] = round(time.perf_counter() - t, 2)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--tracr-commit', required=True)
    ap.add_argument('--programs', nargs='*', default=list(PROGRAMS))
    ap.add_argument('--lengths', nargs='*', type=int, default=list(LENGTHS))
    ap.add_argument('--n', type=int, default=200)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--limit', type=int, default=240, help='seconds a compile may take')
    ap.add_argument(
        '--mlp-exactness', type=int, default=100, help="tracr's mlp_exactness (its default 100)"
    )
    ap.add_argument('--out', default='nbs/results/rasp/compile/tracr.json')
    a = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    rows = []
    for name in a.programs:
        _, _, test_len, ours, caveat = PROGRAMS[name]
        runs, stop = [], None
        for L in sorted({test_len, *a.lengths}):
            if stop:
                runs.append(dict(max_seq_len=L, skipped=stop))
                continue
            try:
                r = run(name, L, a.n, a.seed, a.limit, a.mlp_exactness)
            except CompileTimeout:
                r = dict(max_seq_len=L, failed=f'compile ran past {a.limit} s')
                stop = f'not tried: the compile at a shorter max_seq_len ran past {a.limit} s'
            except Exception as e:
                r = dict(max_seq_len=L, failed=f'{type(e).__name__}: {str(e)[:200]}')
            runs.append(r)
            print(name, json.dumps(r), flush=True)
        rows.append(
            dict(
                program=name,
                mlp_exactness=a.mlp_exactness,
                ours=ours,
                caveat=caveat,
                test_max_seq_len=test_len,
                runs=runs,
            )
        )
        write(a, rows)


# It also keeps the earlier file's rows of programs not run this time.
def write(a, rows):
    "Write the rows so far, keeping an earlier file's commands."
    old = json.load(open(a.out)) if os.path.exists(a.out) else dict(meta={}, programs=[])
    key = lambda r: (list(PROGRAMS).index(r['program']), r.get('mlp_exactness', 100))
    ran = {key(r) for r in rows}
    rows = sorted([r for r in old['programs'] if key(r) not in ran] + rows, key=key)
    command = ' '.join(['python', *sys.argv])
    meta = dict(
        tracr_commit=a.tracr_commit,
        jax=jax.__version__,
        haiku=hk.__version__,
        numpy=np.__version__,
        python=platform.python_version(),
        hardware='1 thread of a 2-core AMD EPYC, no GPU',
        date=datetime.now(timezone.utc).strftime('%Y-%m-%d'),
        seed=a.seed,
        inputs_per_check=a.n,
        commands=[c for c in old['meta'].get('commands', []) if c != command] + [command],
        exactness=(
            'an input is exact when the decoded output equals rasp.evaluate wherever the '
            'evaluation is not None (numerical: atol 1e-7, rtol 0.005); '
            "'mixed': lengths uniform in 1..max_seq_len, 'full': "
            'length max_seq_len; exact_50 counts the first 50 inputs'
        ),
        layers=(
            "tracr's model has num_layers layers, each an attention block then "
            'an MLP block (blocks = 2 * layers, zero blocks included); '
            'heads lists real heads per attention block (0: an MLP-only layer, '
            'kept as a zero-weight attention block); attn_layers counts blocks with a head'
        ),
        notes=NOTES,
        compile_s=(
            "seconds of compile_rasp_to_model, which includes XLA compiling haiku's init "
            'for each new set of shapes (a program whose shapes were seen before pays less)'
        ),
        params=(
            'all assembled weights (embeddings, q/k/v/o and MLPs with their biases, '
            'zero padding to the widest head and MLP included; the unembedding is a '
            'fixed projection, not a parameter); params_nonzero counts nonzero weights'
        ),
    )
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, 'w') as f:
        f.write(json.dumps(dict(meta=meta, programs=rows), indent=1) + '\n')


if __name__ == '__main__':
    main()
