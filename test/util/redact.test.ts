/**
 * m1: a known key is redacted in every form a model or a service may echo it in (src/util/redact.ts registerSecret):
 * verbatim, JSON-escaped, URL-encoded (encodeURIComponent and every byte as %XX, either case), base64 (standard and
 * URL-safe, padded or not, and inside a longer base64 blob at each of the 3 byte alignments) and reversed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base64Forms, redactText, registerSecret } from '../../src/util/redact.ts';

const KEY = 'sk-live-9f8e7d6c5b4a3210+/Zq';
process.env.RANKGATE_TEST_REDACT_API_KEY = KEY;

const b64 = (b: Buffer) => b.toString('base64');
const url64 = (s: string) => s.replace(/\+/g, '-').replace(/\//g, '_');

test('every encoded form of a key of the environment is redacted', () => {
  const bytes = Buffer.from(KEY);
  const forms: Record<string, string> = {
    verbatim: KEY,
    json: JSON.stringify(KEY).slice(1, -1),
    'encodeURIComponent': encodeURIComponent(KEY),
    '%XX upper': [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
    '%xx lower': [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    'partly percent-encoded': KEY.replace(/-/g, '%2D').replace(/\+/g, '%2B'),
    'base64 padded': b64(bytes),
    'base64 unpadded': b64(bytes).replace(/=+$/, ''),
    'base64url': url64(b64(bytes)).replace(/=+$/, ''),
    reversed: [...KEY].reverse().join(''),
  };
  for (const [name, form] of Object.entries(forms)) {
    const out = redactText(`the model said: ${form} (done)`);
    assert.ok(!out.includes(form), `${name}: ${out}`);
    assert.match(out, /\*\*\*/, name);
  }
  // inside a longer base64 blob, at byte offsets 0, 1 and 2 (mod 3), standard and URL-safe
  for (let pre = 0; pre < 6; pre++) {
    for (const post of [0, 1, 2]) {
      const blob = Buffer.concat([Buffer.from('x'.repeat(pre)), bytes, Buffer.from('y'.repeat(post))]);
      for (const enc of [b64(blob), url64(b64(blob))]) {
        const out = redactText(`blob ${enc} end`);
        assert.notEqual(out, `blob ${enc} end`, `offset ${pre}: redacted`);
        const left = Buffer.from(url64(out.replace(/^blob | end$/g, '')).replace(/\*\*\*/g, '').replace(/-/g, '+').replace(/_/g, '/'), 'base64');
        assert.ok(!left.includes(Buffer.from(KEY.slice(2, 12))), `offset ${pre}/${post}: no run of the key decodes from what is left`);
      }
    }
  }
});

test('short values get no encoded forms (they would garble words); base64Forms holds the three alignments', () => {
  registerSecret('abcd');
  assert.equal(redactText('dcba YWJjZA'), 'dcba YWJjZA', 'a 4-character secret: verbatim only');
  const f = base64Forms('0123456789');
  for (let r = 0; r < 3; r++) {
    const enc = Buffer.concat([Buffer.alloc(r, 0x41), Buffer.from('0123456789'), Buffer.from('Z')]).toString('base64');
    assert.ok(f.some((x) => enc.includes(x) && x.length >= 8), `alignment ${r}: ${enc} holds one of ${f.join(' ')}`);
  }
});
