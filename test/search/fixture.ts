/**
 * Test fixtures for src/db, src/ingest/pipeline.ts and src/search: a small trilingual corpus, a
 * deterministic hashing bag-of-words embedder (fast, no model), and per-engine database factories:
 * PGlite (fixture built once per process, then clone()d) and the server at RANKGATE_TEST_DATABASE_URL
 * (a private schema per database, dropped on close).
 */
import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { createPglite, openDatabase, type Db } from '../../src/db/index.ts';
import type { Embedder } from '../../src/embeddings/types.ts';
import type { CorpusDocument } from '../../src/ingest/types.ts';

export const SERVER_URL = process.env.RANKGATE_TEST_DATABASE_URL;
export const SERVER_SKIP = 'needs RANKGATE_TEST_DATABASE_URL (a Postgres server with pgvector; .ci/setup-postgres.sh starts one)';

/**
 * Hashing bag-of-words embedder: each lowercased word adds ±1 to one of `dimension` buckets. Vectors stay
 * integer-valued (not normalised; cosine does not need it), so pgvector's float32 sums are exact and the
 * cosine is bit-identical on every engine and pgvector build: ties are real ties, broken by id.
 */
export class HashEmbedder implements Embedder {
  readonly id: string;
  readonly maxBatch = 16;
  calls = 0;
  embedded = 0;
  constructor(
    readonly dimension = 64,
    id?: string,
  ) {
    this.id = id ?? `hash-${dimension}`;
  }
  vector(text: string): number[] {
    const v = new Array<number>(this.dimension).fill(0);
    for (const w of text.toLowerCase().match(/\p{L}[\p{L}\p{M}]*/gu) ?? []) {
      const h = createHash('sha1').update(w).digest();
      v[h.readUInt32BE(0) % this.dimension] += h[4] & 1 ? 1 : -1;
    }
    return v.some((x) => x !== 0) ? v : v.map((_, i) => (i === 0 ? 1 : 0));
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.calls++;
    this.embedded += texts.length;
    return texts.map((t) => this.vector(t));
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }
}

function doc(
  id: string,
  language: string,
  title: string,
  sections: string[],
  extra: Partial<CorpusDocument> = {},
): CorpusDocument {
  return {
    id,
    title,
    language,
    tags: [],
    metadata: {},
    sections: sections.map((text, i) => ({ chapterNumber: i + 1, heading: `Chapter ${i + 1}`, text })),
    ...extra,
  };
}

export const FIXTURE_DOCS: CorpusDocument[] = [
  doc(
    'breath',
    'en',
    'The Quiet Breath',
    [
      'Breathing exercises calm the nervous system. Slow breathing lowers the heart rate. Count four breaths in and six breaths out.',
      'When anxiety rises, return to the breath. Notice the air at the nostrils. Let the exhale be longer than the inhale.',
      'A daily practice of ten minutes of breathing builds steadiness over weeks.',
    ],
    { slug: 'quiet-breath', path: 'books/en/quiet-breath.md', tags: ['practice', 'breath'] },
  ),
  doc(
    'sleep',
    'en',
    'Sleep and Rest',
    [
      'Sleep problems often come from a racing mind at night. Write down worries before bed to quiet the mind.',
      'Insomnia responds to a regular schedule: wake at the same time every morning, even after a poor night of sleep.',
    ],
    { slug: 'sleep-rest', path: 'books/en/sleep-rest.md', tags: ['rest'] },
  ),
  doc(
    'grief',
    'en',
    'Walking with Grief',
    [
      'Grief is not a problem to be solved. It is love with nowhere to go. Let the tears come when they come.',
      'Loss changes the shape of a day. Small rituals, a candle or a walk, give grief a place to rest.',
    ],
    { slug: 'walking-grief', path: 'books/en/walking-grief.md', tags: ['emotion'] },
  ),
  doc(
    'anger',
    'en',
    'Working with Anger',
    [
      'Anger is energy that wants to protect something. Pause before speaking and feel the heat in the body.',
      'The breath can cool anger: three slow breaths before any reply. 100% of the time is not required; 50_50 is a fine start.',
    ],
    { slug: 'working-anger', path: 'books/en/working-anger.md', tags: ['emotion', 'practice'] },
  ),
  doc(
    'respiracion',
    'es',
    'La Respiración Serena',
    [
      'Los ejercicios de respiración calman el sistema nervioso. Respirar despacio reduce el ritmo del corazón.',
      'Cuando la ansiedad crece, vuelve a la respiración. Nota el aire en la nariz y alarga la exhalación.',
    ],
    { slug: 'respiracion-serena', path: 'books/es/respiracion-serena.md', tags: ['practice', 'breath'] },
  ),
  doc(
    'sueno',
    'es',
    'Dormir y Descansar',
    ['El insomnio mejora con un horario regular. Escribe tus preocupaciones antes de dormir para calmar la mente.'],
    { slug: 'dormir', path: 'books/es/dormir.md', tags: ['rest'] },
  ),
  doc(
    'saans',
    'hi',
    'शांत श्वास',
    ['धीमी साँस लेने से मन शांत होता है। चिंता बढ़े तो साँस पर लौटें। साँस छोड़ना साँस लेने से लंबा रखें।'],
    { slug: 'shant-shvas', path: 'books/hi/shant-shvas.md', tags: ['practice', 'breath'] },
  ),
  doc(
    'twin-b',
    'en',
    'Twin B',
    ['Identical twin passage about mountain lakes and quiet water.'],
    { slug: 'twins', path: 'books/en/twins.md', tags: ['twin'] },
  ),
  doc(
    'twin-a',
    'en',
    'Twin A',
    ['Identical twin passage about mountain lakes and quiet water.'],
    { slug: 'twins', path: 'books/en/twins.md', tags: ['twin'] },
  ),
  doc(
    'paths',
    'en',
    'Odd Characters',
    ['A path with back\\slash and a literal 100% and an under_score, for LIKE escaping.'],
    { slug: 'odd', path: 'books/odd_dir/odd.md', tags: ['odd'] },
  ),
];

export const FIXTURE_CHUNK_SIZES = [24, 48];
export const FIXTURE_EMBEDDER = new HashEmbedder(64);

/** Queries exercised on both engines. */
export const FIXTURE_QUERIES = [
  'breathing exercises for anxiety',
  'slow breath calms the heart',
  'cannot sleep at night worries',
  'grief and loss',
  'anger',
  'respiración ansiedad',
  'mountain lakes quiet water',
  'love tears candle walk',
];

let pgliteFixture: Promise<PGlite> | undefined;

/** A PGlite instance with the migrations applied and the fixture corpus ingested (built once per process). */
export function pgliteFixtureInstance(): Promise<PGlite> {
  pgliteFixture ??= (async () => {
    const pglite = await createPglite('memory://');
    const db = await openDatabase({ pglite, closeInstance: false });
    const { ingestCorpus } = await import('../../src/ingest/pipeline.ts');
    await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: FIXTURE_CHUNK_SIZES, embedder: new HashEmbedder(64) });
    await db.close();
    return pglite;
  })();
  return pgliteFixture;
}

/** A fresh PGlite database cloned from the fixture (ingested) or an empty migrated one. */
export async function openPgliteFixture(): Promise<Db> {
  const base = await pgliteFixtureInstance();
  const clone = (await base.clone()) as PGlite;
  return openDatabase({ pglite: clone });
}

let schemaSeq = 0;
/** A private schema on the test server, migrated (and the fixture ingested when `ingest`). */
export async function openServerFixture(ingest = true): Promise<Db> {
  if (!SERVER_URL) throw new Error(SERVER_SKIP);
  const schema = `rgtest_${process.pid}_${Date.now().toString(36)}_${schemaSeq++}`;
  const db = await openDatabase({ url: SERVER_URL, schema, dropSchemaOnClose: true });
  if (ingest) {
    const { ingestCorpus } = await import('../../src/ingest/pipeline.ts');
    await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: FIXTURE_CHUNK_SIZES, embedder: new HashEmbedder(64) });
  }
  return db;
}

export interface Engine {
  name: 'pglite' | 'postgres';
  skip?: string;
  open(): Promise<Db>;
}

export const ENGINES: Engine[] = [
  { name: 'pglite', open: openPgliteFixture },
  { name: 'postgres', skip: SERVER_URL ? undefined : SERVER_SKIP, open: () => openServerFixture(true) },
];
