/**
 * node:test reporter used by scripts/run-tests.mjs: one JSON line per finished test (pass or fail), with its
 * file, nesting, skip/todo reason and the first line of its error, for the run's final summary.
 */
export default async function* eventsReporter(source) {
  for await (const e of source) {
    if (e.type !== 'test:pass' && e.type !== 'test:fail') continue;
    const d = e.data;
    const err = d.details?.error;
    const cause = err?.cause ?? err;
    const message = cause ? String(cause.message ?? cause).split('\n').find((l) => l.trim()) : undefined;
    yield JSON.stringify({
      type: e.type === 'test:pass' ? 'pass' : 'fail',
      name: d.name,
      file: d.file,
      nesting: d.nesting,
      ...(typeof d.details?.duration_ms === 'number' ? { ms: Math.round(d.details.duration_ms) } : {}),
      ...(d.details?.type === 'suite' ? { suite: true } : {}),
      ...(d.skip !== undefined ? { skip: d.skip } : {}),
      ...(d.todo !== undefined ? { todo: d.todo } : {}),
      ...(e.type === 'test:fail' && message ? { error: message.slice(0, 240) } : {}),
    }) + '\n';
  }
}
