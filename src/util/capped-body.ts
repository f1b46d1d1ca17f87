/**
 * A fetch Response's body as text, read chunk by chunk and given up (stream cancelled) as soon as it is over a cap,
 * so a huge answer is never held in memory; a declared Content-Length over the cap is refused before reading.
 * Shared by the url: search transport (src/search/url.ts) and the embedding APIs (src/embeddings/http.ts).
 */

/** "16 MB" for whole megabytes, else "N bytes". */
export const sizeText = (n: number) => (n >= 1024 * 1024 && n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MB` : `${n} bytes`);

/**
 * The body of `res` as UTF-8 text, at most `max` bytes. Over it, the stream is cancelled and the error made by
 * `tooLarge` is thrown (given the declared Content-Length when that alone was over).
 */
export async function readCappedText(res: Response, max: number, tooLarge: (declared?: number) => Error): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(declared);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
