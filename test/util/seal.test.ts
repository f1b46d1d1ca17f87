import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, checkSeal, sealKey, sealText, SEAL_KEY_ENV } from '../../src/util/seal.ts';

const KEY = Buffer.from('k'.repeat(40));

test('canonicalJson sorts keys at every level and drops undefined', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined }], c: null } }), '{"a":{"c":null,"d":[2,{"z":1}]},"b":1}');
});

test('a keyed seal verifies only with its key and its purpose', () => {
  const s = sealText('baseline', 'text', KEY);
  assert.match(s, /^hmac-sha256:[0-9a-f]{64}$/);
  assert.deepEqual(checkSeal('baseline', 'text', s, KEY), { status: 'verified', kind: 'keyed' });
  assert.equal(checkSeal('baseline', 'text!', s, KEY).status, 'mismatch');
  assert.equal(checkSeal('record', 'text', s, KEY).status, 'mismatch');
  assert.equal(checkSeal('baseline', 'text', s, Buffer.from('o'.repeat(40))).status, 'mismatch');
  assert.equal(checkSeal('baseline', 'text', s, null).status, 'unverifiable');
});

test('an unkeyed seal is only an accident check, and never passes as keyed when a key is set', () => {
  const s = sealText('baseline', 'text', null);
  assert.match(s, /^sha256:[0-9a-f]{64}$/);
  assert.equal(checkSeal('baseline', 'text', s, null).status, 'consistent');
  assert.equal(checkSeal('baseline', 'other', s, null).status, 'mismatch');
  assert.equal(checkSeal('baseline', 'text', s, KEY).status, 'unkeyed-under-key');
  assert.equal(checkSeal('baseline', 'text', undefined, KEY).status, 'missing');
  // a legacy bare digest reads through the purpose's own legacy computation only
  assert.equal(checkSeal('baseline', 'text', 'a'.repeat(64), null, () => 'a'.repeat(64)).status, 'consistent');
  assert.equal(checkSeal('baseline', 'text', 'a'.repeat(64), null).status, 'mismatch');
});

test('the seal key comes from the environment and a short one is refused in one line', () => {
  assert.equal(sealKey({}), null);
  assert.equal(sealKey({ [SEAL_KEY_ENV]: '' }), null);
  assert.equal(sealKey({ [SEAL_KEY_ENV]: 'x'.repeat(32) })!.length, 32);
  assert.throws(() => sealKey({ [SEAL_KEY_ENV]: 'short' }), /RANKGATE_SEAL_KEY: expected a secret of at least 32 characters/);
});
