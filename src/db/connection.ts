/**
 * Lost database connections: recognising them (so the CLIs can say what happened and what was rolled back) and
 * surviving them (pg's 'error' event on a checked-out client must not crash the process).
 */
const CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/** A database error that means the connection is gone (backend terminated, server shut down, socket reset). */
export function isConnectionLost(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  if (!err) return false;
  if (typeof err.code === 'string' && CONNECTION_CODES.has(err.code)) return true;
  return /Connection terminated|terminating connection|connection error|server closed the connection/i.test(String(err.message ?? ''));
}

/**
 * pg emits 'error' on a checked-out client whose backend dies after its query failed; without a listener
 * Node crashes with a stack trace. Give every acquired client one: the failure surfaces on the query instead.
 */
const guarded = new WeakSet<object>();
export function surviveLostConnections(db: { pool: import('pg').Pool }): void {
  db.pool.on('acquire', (client) => {
    // (the pool's own idle listener is still attached at 'acquire' and removed right after)
    if (guarded.has(client)) return;
    guarded.add(client);
    client.on('error', () => {});
  });
}
