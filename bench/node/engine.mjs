// npm `run` (pinned in package.json), through the same scenarios as
// bench/engine.py, so the two sets of figures come from one invocation on one
// machine. Prints one JSON object: {figure: {median, best}} in milliseconds
// (or {value, unit} for memory), read by bench/engine.py.
//
//     cd bench/node && npm ci && node engine.mjs --rounds 40

import { createRunner, getHostFunctionContext } from 'run';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const rounds = option('--rounds', 40);
const soak = option('--soak', 10_000);

process.env.RUN_CONTINUATION_SECRET ??= 'bench-secret-of-at-least-thirty-two-bytes!';

const runner = createRunner({
  limits: {
    timeoutMs: 60_000,
    memoryLimitBytes: 512 * 1024 * 1024,
    maxResultBytes: 64 * 1024 * 1024,
    maxBridgeRequests: 10_000,
    maxInFlightBridgeRequests: 2048,
  },
});

const hostFunctions = {
  h: { f: async (x) => x, s: (x) => x },
  docs: {
    publish: async (id) => {
      const { interrupt, resume } = getHostFunctionContext();
      if (resume === undefined) interrupt({ kind: 'approval', message: `Publish ${id}?` });
      return `published ${id}`;
    },
  },
};

async function check(source, extra = {}) {
  const result = await runner.run({ source, hostFunctions, ...extra });
  if (result.status !== 'completed' && result.status !== 'interrupted') {
    throw new Error(`benchmark snippet failed: ${JSON.stringify(result)}`);
  }
  return result;
}

const now = () => performance.now();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function timed(make, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const started = now();
    await make();
    samples.push(now() - started);
  }
  return { median: median(samples), best: Math.min(...samples) };
}

const out = {};
await check('return 1'); // first start

out.trivial = await timed(() => check('return 1 + 1'), rounds);

const approval = 'return await docs.publish("d1")';
out.interrupt_resume = await timed(async () => {
  const first = await check(approval);
  const done = await check(approval, {
    continuation: first.continuation,
    resolutions: first.interruptions.map((i) => ({ interruptionId: i.id, value: true })),
  });
  if (done.value !== 'published d1') throw new Error('resume failed');
}, rounds);

const seq = 'let s = 0; for (let i = 0; i < 1000; i++) s += await h.f(i); return s';
const few = Math.max(3, rounds >> 2);
out.calls_sequential_async = await timed(() => check(seq), few);
out.calls_sequential_sync = await timed(() => check(seq.replace('h.f', 'h.s')), few);
const conc =
  'const xs = await Promise.all(Array.from({ length: 1000 }, (_, i) => h.f(i))); return xs.length';
out.calls_concurrent = await timed(() => check(conc), few);

out.runs_100_by_4 = await timed(async () => {
  let next = 0;
  const lane = async () => {
    while (next < 100) {
      next += 1;
      await check('return 1 + 1');
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
}, Math.max(3, rounds >> 3));

const cancels = [];
for (let i = 0; i < few; i++) {
  const controller = new AbortController();
  const task = runner.run({ source: 'while (true) {}', abortSignal: controller.signal }).then(
    () => null,
    (error) => error,
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = now();
  controller.abort();
  await task;
  cancels.push(now() - started);
}
out.cancel = { median: median(cancels), best: Math.min(...cancels) };

if (soak > 0) {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = now();
  for (let i = 0; i < soak; i++) await check('return 1 + 1');
  const elapsed = now() - started;
  globalThis.gc?.();
  out.soak = {
    runs: soak,
    per_run_ms: elapsed / soak,
    rss_before: rssBefore,
    rss_after: process.memoryUsage().rss,
  };
}
out.rss = { value: process.memoryUsage().rss, unit: 'bytes' };

process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
