/**
 * Map items through `fn` with at most `limit` in flight, keeping input order. On the first failure no new item
 * starts; the call waits for those in flight to settle, then throws that first error (nothing runs after it).
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined) {
      const i = next++;
      if (i >= items.length) return;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (e) {
        failed ??= e;
        throw e;
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  const results = await Promise.allSettled(workers);
  const rejected = results.find((r) => r.status === 'rejected');
  if (rejected) throw failed ?? (rejected as PromiseRejectedResult).reason;
  return out;
}
