#!/usr/bin/python3
# serve-store.py DIR N: the project bench/serve measures when t-dashboard
# cannot write one: N attempts in DIR/.hotloop/hotloop.db (which `hotloop
# store --db` has made, so the schema is hotloop's) and a knowledge base
# entry for each in DIR/kb, as the improve loop leaves them. Loops of 500
# rounds; each round a baseline run with its profile and brief summary,
# then one attempt: 10% kept and 40% rejected or inconclusive at the
# compare stage (a compare run, 5 pairs on each of two workloads and a
# warm-up per side: 22 measurements), the rest stopped earlier (build,
# test, protected path, no candidate), each with its reasons and a diff
# of a few KB; five activity lines a round. Deterministic.
import json
import os
import random
import sqlite3
import sys

top, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(451)
db = sqlite3.connect(os.path.join(top, '.hotloop', 'hotloop.db'))
kb = os.path.join(top, 'kb')
os.makedirs(kb, exist_ok=True)
ROUNDS = 500
T0 = 1.77e9
functions = ['find_word', 'tokenize', 'lowercase', 'count_file', 'table_sort', 'emit_counts',
             'hash_word', 'read_line', 'grow_table', 'compare_counts']
lenses = ['algorithmic', 'locality', 'allocation', 'vectorize', 'branches']
ideas = ['a hash index that doubles at half full', 'one buffer per line instead of a copy per word',
         'a table kept in strcmp order', 'the loop unrolled by four', 'a bump allocator for the words',
         'a branch-free lowercase with a mask', 'counting sort on the lengths', 'a prefetch ahead of the probe']


def diff_text(fn, i, size):
    lines = ['diff --git a/src/%s.c b/src/%s.c' % (fn, fn), '--- a/src/%s.c' % fn,
             '+++ b/src/%s.c' % fn, '@@ -%d,12 +%d,14 @@' % (i % 300, i % 300)]
    k = 0
    while sum(len(l) + 1 for l in lines) < size:
        k += 1
        sign = '-+ '[k % 3]
        lines.append('%s\tfor (size_t j = 0; j < t->nr_%d; j++) /* attempt %d, line %d */' % (sign, k, i, k))
    return '\n'.join(lines) + '\n'


def summary_compare(pct, lo, hi, guard):
    return json.dumps({
        'verdict': 'keep' if hi < -3 else 'reject', 'suspicious': False,
        'primary': {'workload': 'big', 'metric': 'cpu', 'change_pct': pct, 'ci_low_pct': lo,
                    'ci_high_pct': hi, 'pairs': 5, 'noise_pct': 2.3, 'exact': False},
        'guards': [{'workload': 'small', 'metric': 'cpu', 'change_pct': guard, 'ci_low_pct': guard - 2,
                    'ci_high_pct': guard + 2, 'pairs': 5, 'noise_pct': 4.1, 'exact': False,
                    'regressed': guard > 2}],
        'memory': {'base_peak_rss_kb': 4128, 'cand_peak_rss_kb': 4056, 'budget_kb': None, 'ok': True},
        'metrics': [], 'correctness': {'test': 'passed', 'ok': True,
                                       'fingerprints': [{'workload': 'big', 'match': True},
                                                        {'workload': 'small', 'match': True}]},
        'interrupted': False, 'pairs': 5, 'looks': [5, 10], 'looks_taken': 1, 'order': 'abba',
        'machine': {'cpus': 2, 'load1': 0.4, 'quiet': True}})


def summary_baseline(rnd):
    return json.dumps({'round': rnd, 'samples': 1700 + rnd % 100, 'sample_type': 'samples', 'hotspots': [
        {'rank': r + 1, 'function': functions[(rnd + r) % len(functions)], 'file': 'words.c',
         'line': 10 + r, 'self_pct': 40.0 / (r + 1), 'total_pct': 90.0 / (r + 1),
         'tags': [{'tag': 'string', 'evidence': 'string functions = 91% of its attributed time'}]}
        for r in range(5)]})


loop = 0
i = 0
while i < n:
    loop += 1
    t = T0 + loop * 86400
    rounds = min(ROUNDS, n - i)
    cur = db.execute(
        "INSERT INTO loops (started_at, updated_at, finished_at, repo, branch, base_commit, best_commit,"
        " status, stop_reason, rounds_planned) VALUES (?, ?, ?, ?, ?, ?, ?, 'finished', 'rounds done', ?)",
        (t, t + rounds * 120, t + rounds * 120, '/src/wordfreq', 'hotloop/loop-%d' % loop,
         '%040x' % loop, '%040x' % (loop * 7919), rounds))
    lid = cur.lastrowid
    act = [(t, lid, 'info', 'loop-start', 'loop %d: %d rounds on wordfreq' % (loop, rounds), None)]
    for rnd in range(1, rounds + 1):
        i += 1
        t += 120
        fn = functions[rng.randrange(len(functions))]
        lens = lenses[rng.randrange(len(lenses))]
        idea = ideas[rng.randrange(len(ideas))]
        title = '%s in %s' % (idea, fn)
        slug = '%s-%d-%s' % (idea.replace(' ', '-')[:40].strip('-'), i, '02122026')
        db.execute(
            "INSERT INTO runs (loop_id, kind, commit_sha, workload, metric, started_at, updated_at,"
            " finished_at, profile_path, brief_path, summary_json) VALUES (?, 'baseline', ?, 'big', 'cpu',"
            " ?, ?, ?, ?, ?, ?)",
            (lid, '%040x' % (loop * 7919), t, t + 5, t + 5,
             '%s/.hotloop/loop/%d/round-%03d/profile.pb.gz' % (top, loop, rnd),
             '%s/.hotloop/loop/%d/round-%03d/brief.md' % (top, loop, rnd), summary_baseline(rnd)))
        x = rng.random()
        measured = x < 0.5
        kept = x < 0.1
        if kept:
            verdict, stage = 'keep', 'compare'
        elif measured:
            verdict, stage = ('inconclusive' if x > 0.4 else 'reject'), 'compare'
        elif x < 0.9:
            verdict, stage = 'reject', ['build', 'test', 'protected', 'diff'][int(x * 100) % 4]
        else:
            verdict, stage = 'no-candidate', 'agent'
        pct = -rng.uniform(3.5, 30) if kept else rng.uniform(-2.5, 20)
        lo, hi = pct - rng.uniform(0.5, 2), pct + rng.uniform(0.5, 2)
        guard = rng.uniform(-2, 4)
        if verdict == 'keep':
            reasons = ["primary 'big' improved %.1f%% (interval %+.1f%% to %+.1f%%, 5 pairs), at least"
                       " the 3%% required" % (-pct, lo, hi)]
        elif measured:
            reasons = ["primary 'big' changed %+.1f%% (interval %+.1f%% to %+.1f%%, 5 pairs), not the 3%%"
                       " improvement required" % (pct, lo, hi),
                       "guard 'small' changed %+.1f%%" % guard]
        elif stage == 'agent':
            reasons = ['the agent said NO CANDIDATE']
        else:
            reasons = ['the %s stage failed (exit 2): src/%s.c:%d: error: expected \';\'' % (stage, fn, i % 400),
                       'workload \'big\' has 0 measured pairs: cannot compare']
        diff = None if stage == 'agent' else diff_text(fn, i, rng.randrange(1500, 5000))
        commit = '%040x' % (i * 104729) if kept else None
        cur = db.execute(
            "INSERT INTO attempts (loop_id, round, lens, function, hypothesis, expected_gain_pct, verdict,"
            " reasons_json, stage, change_pct, ci_low_pct, ci_high_pct, diff, commit_sha, kb_slug,"
            " agent_exit_status, agent_seconds, started_at, updated_at, finished_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
            (lid, rnd, lens, fn, '%s: %s should cut the time %s spends' % (title, idea, fn),
             rng.choice([5, 10, 20, 30]), verdict, json.dumps(reasons), stage,
             pct if measured else None, lo if measured else None, hi if measured else None,
             diff, commit, slug, rng.uniform(20, 200), t + 5, t + 110, t + 110))
        aid = cur.lastrowid
        if measured:
            cur = db.execute(
                "INSERT INTO runs (loop_id, attempt_id, kind, commit_sha, workload, metric, started_at,"
                " updated_at, finished_at, summary_json) VALUES (?, ?, 'compare', ?, 'big', 'cpu', ?, ?, ?, ?)",
                (lid, aid, commit, t + 60, t + 110, t + 110, summary_compare(pct, lo, hi, guard)))
            rid = cur.lastrowid
            rows = []
            for w, level, change in (('big', 2.0, pct), ('small', 0.2, guard)):
                for side in ('base', 'cand'):
                    v = level * (1 + (change / 100 if side == 'cand' else 0))
                    rows.append((rid, w, None, side, None, 1, v, v, 0.01, v, 4100, 0, v, t + 60))
                for p in range(5):
                    for pos, side in enumerate(('base', 'cand') if p % 2 == 0 else ('cand', 'base')):
                        v = level * (1 + (change / 100 if side == 'cand' else 0)) * (1 + rng.uniform(-0.01, 0.01))
                        rows.append((rid, w, p, side, pos, 0, v * 1.02, v, 0.01, v, 4000 + rng.randrange(200), 0,
                                     v, t + 61 + p))
            db.executemany(
                "INSERT INTO measurements (run_id, workload, pair_index, side, position, warmup, wall_s,"
                " user_s, sys_s, cpu_s, max_rss_kib, exit_status, value, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        act += [(t, lid, 'info', 'round-start', 'round %d' % rnd, None),
                (t + 5, lid, 'info', 'profiled', 'round %d: profiled big (1700 samples)' % rnd, None),
                (t + 50, lid, 'info', 'agent-done', 'round %d: the agent proposed %s' % (rnd, title), None),
                (t + 110, lid, 'warn' if verdict != 'keep' else 'info', 'verdict',
                 'round %d: %s at %s: %s' % (rnd, verdict, stage, reasons[0]),
                 json.dumps({'attempt_id': aid, 'verdict': verdict}))]
        if kept:
            act.append((t + 111, lid, 'info', 'kept', 'round %d: kept %s as %s' % (rnd, title, commit[:12]), None))
        d = os.path.join(kb, slug)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'report.md'), 'w') as f:
            f.write('# %s\n\n- function: %s\n- verdict: %s\n- date: 2026-12-02 17:07:18 +0000\n- round: %d\n'
                    '- lens: %s\n- expected gain: 10%%\n%s- commit: %s\n\n## What\n\n%s, in `%s` (lens: %s).\n\n'
                    '## Hypothesis\n\n%s should cut the time %s spends\n\n## Verdict\n\n**%s**\n\n%s\n'
                    % (title, fn, verdict, rnd, lens,
                       '- change: %+.1f%% cpu on big [%+.1f, %+.1f]\n' % (pct, lo, hi) if measured else '',
                       commit or 'none', title, fn, lens, idea, fn, verdict,
                       ''.join('- %s\n' % r for r in reasons)))
        if diff:
            with open(os.path.join(d, 'diff.md'), 'w') as f:
                f.write('# Diff: %s\n\n```diff\n%s```\n' % (title, diff))
    act.append((t + 200, lid, 'info', 'loop-end', 'loop %d: finished' % loop, None))
    db.executemany("INSERT INTO activity (at, loop_id, level, kind, message, data_json)"
                   " VALUES (?, ?, ?, ?, ?, ?)", act)
db.commit()
db.close()
