// verify.mjs: an independent verifier of fiscal402 receipts
// (service.receipt/1.0.0, 2.0.0, 3.0.0 and 4.0.0) and of the openings of
// 3.0.0 and 4.0.0 commitments, written from the format description in
// receipt/doc.go without the Go code. Node >= 18, built-in modules only.
//
//   node verify.mjs RECEIPT.json JWKS.json 'origin+hash+base64key' [OPENINGS.json]
//
// Prints one JSON line, {"ok":true,...} (exit 0) or {"ok":false,"step":...,
// "error":...} (exit 1); the step names are those of receipt.Verify. It
// checks the signature (4.0.0: the receipt key's cosignature of the
// checkpoint), the key window, the claims, the checkpoint signature and the
// RFC 6962 inclusion proof (RFC 9162 §2.1.3.2), and each opening against
// its commitment. Of a 3.0.0 or 4.0.0 payload it checks the member set and
// types (no personal field in clear, nothing unknown: Go's "payload" step)
// and that the commitments cover exactly the personal fields the receipt has
// (Go's "spec" step). It does not check the other field-by-field rules of
// the claims format (Go's "spec" step does), nor that a 4.0.0 payload is
// spelt exactly as the issuer writes it (a payload spelt otherwise is
// another leaf, which fails the inclusion step here and the payload step in
// Go).
import { readFileSync } from 'node:fs';
import { createHash, createPublicKey, verify } from 'node:crypto';

class Failure extends Error {
  constructor(step, message) { super(message); this.step = step; }
}
const fail = (step, message) => { throw new Failure(step, message); };
const sha256 = (...parts) => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };

// Strict JSON: valid UTF-8, no duplicate member names, numbers kept as their
// literal text (so "1" and "1.0" differ, as in the Go verifier).
function parseJSON(bytes, what) {
  let text;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch { throw new Error(`${what}: invalid UTF-8`); }
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const err = (m) => { throw new Error(`${what}: ${m} at offset ${i}`); };
  const value = (depth) => {
    if (depth > 32) err('nested too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++; const obj = new Map(); ws();
      if (text[i] === '}') { i++; return obj; }
      for (;;) {
        ws(); if (text[i] !== '"') err('expected member name');
        const k = str(); if (obj.has(k)) err(`duplicate member "${k}"`);
        ws(); if (text[i] !== ':') err('expected ":"'); i++;
        obj.set(k, value(depth + 1)); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return obj; }
        err('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++; const arr = []; ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1)); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        err('expected "," or "]"');
      }
    }
    if (c === '"') return str();
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!m) err('unexpected character');
    i += m[0].length;
    if (m[0] === 'true') return true;
    if (m[0] === 'false') return false;
    if (m[0] === 'null') return null;
    return { number: m[0] };
  };
  const str = () => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(i));
    if (!m) err('bad string');
    i += m[0].length;
    const s = JSON.parse(m[0]);
    if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)) err('lone surrogate');
    return s;
  };
  const v = value(0); ws();
  if (i !== text.length) err('data after the JSON value');
  return v;
}
const isObj = (v) => v instanceof Map;
const isStr = (v) => typeof v === 'string';
const isInt = (v) => v !== null && typeof v === 'object' && !isObj(v) && !Array.isArray(v) && /^-?(0|[1-9]\d*)$/.test(v.number);
function same(a, b) {
  if (isObj(a) || isObj(b)) {
    if (!isObj(a) || !isObj(b) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !same(v, b.get(k))) return false;
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, j) => same(v, b[j]));
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') return a.number === b.number;
  return a === b;
}

// Canonical base64: the one spelling that re-encodes to itself.
function b64url(s, what) {
  const b = Buffer.from(s, 'base64url');
  if (!/^[A-Za-z0-9_-]*$/.test(s) || b.toString('base64url') !== s) throw new Error(`${what} is not canonical base64url`);
  return b;
}
function b64(s, what) {
  const b = Buffer.from(s, 'base64');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || b.toString('base64') !== s) throw new Error(`${what} is not canonical base64`);
  return b;
}
const ed25519Key = (raw) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
const step = (name, fn) => { try { return fn(); } catch (e) { if (e instanceof Failure) throw e; fail(name, e.message); } };

// Commitments (doc.go "# Commitments"): "sha256:" + base64url(SHA-256(
// lp(tag) ‖ lp(field) ‖ lp(salt) ‖ lp(value))), lp = 4-byte big-endian length ‖ bytes.
const lp = (b) => { const n = Buffer.alloc(4); n.writeUInt32BE(b.length); return Buffer.concat([n, b]); };
const commitment = (field, value, salt) => 'sha256:' + sha256(lp(Buffer.from('fiscal402/receipt-commitment/v1')),
  lp(Buffer.from(field, 'utf8')), lp(salt), lp(Buffer.from(value, 'utf8'))).toString('base64url');

function checkOpenings(claims, openingsBytes) {
  const list = step('opening', () => {
    const l = parseJSON(openingsBytes, 'openings');
    if (!Array.isArray(l)) throw new Error('openings are not an array');
    return l;
  });
  const commitments = claims.get('commitments');
  const opened = [];
  for (const o of list) {
    step('opening', () => {
      if (!isObj(o) || o.size !== 3 || !['field', 'value', 'salt'].every((k) => isStr(o.get(k)))) throw new Error('an opening is not {field, value, salt}');
      const field = o.get('field');
      if (opened.includes(field)) throw new Error(`${field} opened twice`);
      const salt = b64url(o.get('salt'), 'salt');
      if (salt.length < 16 || salt.length > 64) throw new Error(`${field}: salt of ${salt.length} bytes`);
      if (!isObj(commitments) || !isStr(commitments.get(field))) throw new Error(`the receipt commits no ${field}`);
      if (commitment(field, o.get('value'), salt) !== commitments.get(field)) throw new Error(`${field}: value and salt do not hash to the commitment`);
      opened.push(field);
    });
  }
  return opened;
}

// The payload of a 3.0.0 or 4.0.0 receipt is exactly the claims the
// issuer's writer makes (doc.go "# Version 3.0.0", "# Commitments"): no
// member outside the format, so no personal field in clear (those exist
// only as commitments) and nothing unknown; each member of its type; a
// member the writer omits when empty is absent, not empty; one it always
// writes is present. Go's Verify refuses anything else at its payload step.
// Shapes: 's' string, 'i' integer, 'u' unsigned integer, 'b' boolean,
// ['s'] list of strings, an object of member shapes, { map: 's' } an
// object of strings; a trailing '?' (opt) marks a member omitted when empty.
const opt = (shape) => ({ opt: shape });
const RATE = { raw: 's', rate_date: 's', requested_date: 's', policy: 's', source: 's', snapshot: opt('s') };
const CONCEALED = {
  spec: 's', receipt_id: 's', event_id: 's', iat: 'i', iss: opt('s'), environment: 's', watermark: opt('s'),
  custody: 's', jurisdiction: 's', ruleset: 's', review_status: 's', review_reasons: opt(['s']), supersedes: opt('s'),
  settlement: {
    protocol: 's', network: 's', asset: 's', asset_contract: opt('s'), amount_usdc: 's', timestamp: 's', scheme: opt('s'),
    chain: { verification: 's', block_time: opt('s'), confirmations: opt('u'), finalized: opt('b') },
  },
  seller: { legal_name: 's', vat_number: opt('s'), country: 's' },
  buyer: {
    country: opt('s'), registry: opt({ registry: 's', status: 's', checked_at: 's' }),
    location_evidence: opt([{ kind: 's', country: opt('s') }]),
  },
  classification: opt({
    status: 's', regime: opt('s'), oss_scheme: opt('s'), category: opt('s'), rate_percent: opt('s'), taxing_country: opt('s'),
    vatex: opt('s'), legal_basis: opt('s'), invoice_note: opt('s'), buyer_treatment: opt('s'), rate_table: opt('s'),
    rate_effective_from: opt('s'), reasons: opt(['s']),
  }),
  fx: opt({
    pair: 's', amount_usdc: 's', usdc_usd_rate: 's', usdc_usd_source: 's', usd_per_eur: RATE, gross_eur: 's', net_eur: opt('s'),
    vat_eur: opt('s'), gross_eur_exact: opt('s'), net_eur_exact: opt('s'), vat_eur_exact: opt('s'), rounding: 's',
  }),
  fx_tax_currency: opt({
    currency: 's', pair: 's', amount_usdc: 's', usdc_usd_rate: 's', usdc_usd_source: 's', usd_per_unit: RATE, gross: 's',
    net: opt('s'), vat: opt('s'), gross_exact: opt('s'), net_exact: opt('s'), vat_exact: opt('s'), rounding: 's',
  }),
  invoice: opt({ id: 's' }),
  fee: opt({ model: 's', bps: 's', accrued_eur: 's', label: opt('s') }),
  commitments: opt({ map: 's' }),
  log: { origin: 's' },
};
// The personal fields (doc.go "# Commitments"): named so in an error.
const PERSONAL = ['/settlement/tx_hash', '/settlement/log_index', '/settlement/payer', '/settlement/receiver',
  '/settlement/chain/block_number', '/settlement/chain/block_hash', '/buyer/name', '/buyer/postal_code',
  '/buyer/vat_number', '/buyer/registry/number', '/buyer/registry/request_identifier', '/invoice/ubl_sha256', '/record_sha256'];
const isPersonal = (ptr) => PERSONAL.includes(ptr) || /^\/buyer\/location_evidence\/\d+\/value$/.test(ptr);
const INT64 = [-(2n ** 63n), 2n ** 63n - 1n];
function concealedShape(v, shape, ptr) {
  const bad = (what) => { throw new Error(`${ptr || 'the claims'} ${what}`); };
  if (shape === 's') { if (!isStr(v)) bad('is not a string'); return; }
  if (shape === 'b') { if (v !== true && v !== false) bad('is not a boolean'); return; }
  if (shape === 'i' || shape === 'u') {
    if (!isInt(v) || v.number === '-0') bad('is not an integer');
    const n = BigInt(v.number);
    if (shape === 'i' ? n < INT64[0] || n > INT64[1] : n < 0n || n >= 2n ** 64n) bad('is out of range');
    return;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(v)) bad('is not a list');
    v.forEach((e, i) => concealedShape(e, shape[0], `${ptr}/${i}`));
    return;
  }
  if (!isObj(v)) bad('is not an object');
  if (shape.map) { for (const [k, e] of v) concealedShape(e, shape.map, `${ptr}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`); return; }
  for (const k of v.keys()) {
    if (!Object.hasOwn(shape, k)) {
      const at = `${ptr}/${k}`;
      throw new Error(isPersonal(at) ? `${at} is personal data, which a 3.0.0 or 4.0.0 receipt carries only as a commitment, in clear` : `${at} is not a member of 3.0.0 or 4.0.0 claims`);
    }
  }
  for (const [k, s] of Object.entries(shape)) {
    const at = `${ptr}/${k}`;
    if (!v.has(k)) { if (!s.opt) throw new Error(`${at} is missing`); continue; }
    const e = v.get(k);
    if (s.opt) {
      // Omitted when empty: present only with a value.
      if (e === '' || (Array.isArray(e) && e.length === 0) || (isObj(e) && s.opt.map && e.size === 0) || (isInt(e) && e.number === '0')) throw new Error(`${at} is empty, which the issuer omits`);
      concealedShape(e, s.opt, at);
    } else {
      concealedShape(e, s, at);
    }
  }
}

// The commitments of 3.0.0 and 4.0.0 claims cover exactly the personal
// fields the receipt has (doc.go "# Commitments"): tx_hash, payer and
// receiver always; block_number and block_hash exactly when the chain was
// verified; the registry number exactly with a registry section (its
// request identifier only with one); ubl_sha256 exactly with an invoice;
// one value per evidence item; the others when the record has them; each
// "sha256:" + the canonical unpadded base64url of 32 bytes. Go's "spec" step.
function commitmentRules(c) {
  const cm = isObj(c.get('commitments')) ? c.get('commitments') : new Map();
  const buyer = c.get('buyer'), s = c.get('settlement');
  const evidence = buyer.get('location_evidence') || [];
  for (const k of [...cm.keys()].sort()) {
    const m = /^\/buyer\/location_evidence\/(0|[1-9]\d{0,6})\/value$/.exec(k);
    if (!PERSONAL.includes(k) && !(m && Number(m[1]) <= 2 ** 20 && Number(m[1]) < evidence.length)) fail('spec', `/commitments: ${k} is not a field this receipt can commit`);
    if (!/^sha256:[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/.test(cm.get(k))) fail('spec', `/commitments/${k}: not a commitment`);
  }
  const need = (field, required) => {
    if (required !== cm.has(field)) fail('spec', `/commitments: ${required ? 'no' : 'a'} commitment for ${field}`);
  };
  need('/settlement/tx_hash', true);
  need('/settlement/payer', true);
  need('/settlement/receiver', true);
  const verified = s.get('chain').get('verification') === 'verified';
  need('/settlement/chain/block_number', verified);
  need('/settlement/chain/block_hash', verified);
  need('/buyer/registry/number', buyer.has('registry'));
  if (!buyer.has('registry') && cm.has('/buyer/registry/request_identifier')) fail('spec', '/commitments: a commitment for /buyer/registry/request_identifier without a buyer registry section');
  need('/invoice/ubl_sha256', c.has('invoice'));
  evidence.forEach((_, i) => need(`/buyer/location_evidence/${i}/value`, true));
}

const V4 = 'service.receipt/4.0.0';
const SPECS = ['service.receipt/1.0.0', 'service.receipt/2.0.0', 'service.receipt/3.0.0', V4];

function verifyReceipt(receiptBytes, jwksBytes, vkey, openingsBytes) {
  const r = step('parse', () => {
    const doc = parseJSON(receiptBytes, 'receipt');
    // 4.0.0 has a payload member in place of jws.
    const proof = isObj(doc) && doc.has('payload') && !doc.has('jws') ? 'payload' : 'jws';
    if (!isObj(doc) || doc.size !== 5) throw new Error(`not an object with exactly spec, id, claims, ${proof}, tlog_proof`);
    for (const k of ['spec', 'id', proof, 'tlog_proof']) if (!isStr(doc.get(k))) throw new Error(`member ${k} missing or not a string`);
    if (!isObj(doc.get('claims'))) throw new Error('member claims missing or not an object');
    return doc;
  });
  const keys = step('jwks', () => {
    const doc = parseJSON(jwksBytes, 'jwks');
    if (!isObj(doc) || !Array.isArray(doc.get('keys'))) throw new Error('no "keys" array');
    return doc.get('keys');
  });
  // Note verifier key: <name>+<8 hex key hash>+base64(0x01 ‖ 32-byte Ed25519 key);
  // key hash = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4] (C2SP signed-note).
  const log = step('log-key', () => {
    const m = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(vkey);
    if (!m) throw new Error('not name+hash+key');
    const key = b64(m[3], 'log key');
    if (key.length !== 33 || key[0] !== 1) throw new Error('not an Ed25519 note key');
    const hash = sha256(Buffer.from(m[1] + '\n'), key).subarray(0, 4);
    if (hash.toString('hex') !== m[2]) throw new Error('key hash does not match');
    return { name: m[1], hash, key: ed25519Key(key.subarray(1)) };
  });
  if (r.has('payload')) return verifyV4(r, keys, log, openingsBytes);

  const jws = r.get('jws');
  const [h64, p64, s64] = step('jws', () => {
    const parts = jws.split('.');
    if (parts.length !== 3) throw new Error('not three parts');
    return parts;
  });
  const header = step('jws', () => {
    const h = parseJSON(b64url(h64, 'header'), 'header');
    if (!isObj(h)) throw new Error('header is not an object');
    for (const [k, v] of h) {
      if (!['alg', 'kid', 'typ'].includes(k)) throw new Error(`header member ${k} outside the format`);
      if (!isStr(v)) throw new Error(`header ${k} is not a string`);
    }
    return h;
  });
  const payloadBytes = step('jws', () => b64url(p64, 'payload'));
  const sig = step('jws', () => b64url(s64, 'signature'));
  const alg = header.get('alg'), typ = header.get('typ'), kid = header.get('kid');
  if (alg !== 'EdDSA' && alg !== 'Ed25519') fail('alg', `alg ${alg}`);
  const typs = { 'service.receipt/1.0.0': 'service.receipt+jws', 'service.receipt/2.0.0': 'service.receipt.v2+jws', 'service.receipt/3.0.0': 'service.receipt.v3+jws' };
  if (!Object.values(typs).includes(typ)) fail('typ', `typ ${typ}`);
  if (kid === undefined) fail('kid', 'no kid');
  const matches = keys.filter((k) => isObj(k) && k.get('kid') === kid);
  if (matches.length === 0) fail('kid', `no key ${kid}`);
  if (matches.length > 1) fail('jwks', `kid ${kid} listed twice`);
  const key = matches[0];
  const pub = step('jwks', () => ed25519Key(receiptKey(key, kid)));
  if (key.get('revoked') === true) fail('key-revoked', `key ${kid} is revoked`);
  // RFC 7515 §5.2: the signing input is the ASCII of the first two parts as given.
  if (!verify(null, Buffer.from(`${h64}.${p64}`, 'ascii'), pub, sig)) fail('signature', 'Ed25519 signature does not verify');

  const claims = step('payload', () => {
    const c = parseJSON(payloadBytes, 'payload');
    if (!isObj(c) || !isInt(c.get('iat')) || !isObj(c.get('log'))) throw new Error('not a claims object');
    if (typ === 'service.receipt.v3+jws' && c.get('spec') === 'service.receipt/3.0.0') concealedShape(c, CONCEALED, '');
    return c;
  });
  const iat = BigInt(claims.get('iat').number);
  if (iat < BigInt(key.get('nbf').number) || (key.has('exp') && iat >= BigInt(key.get('exp').number))) {
    fail('key-window', `iat ${iat} outside the key window`);
  }
  if (!same(r.get('claims'), claims)) fail('claims-mismatch', 'readable claims differ from the signed payload');
  if (r.get('spec') !== claims.get('spec') || r.get('id') !== claims.get('receipt_id')) fail('claims-mismatch', 'spec or id differ');
  const wantTyp = typs[claims.get('spec')];
  if (wantTyp === undefined || typ !== wantTyp) fail('spec', `spec ${claims.get('spec')} with typ ${typ}`);
  if (claims.get('receipt_id') !== `rcpt_${claims.get('event_id')}`) fail('spec', 'receipt_id is not rcpt_ + event_id');
  // 3.0.0 signs no log index: the proof's index is the position.
  const v3 = claims.get('spec') === 'service.receipt/3.0.0';
  const logRef = claims.get('log');
  if (!isStr(logRef.get('origin')) || (v3 ? logRef.size !== 1 : !isInt(logRef.get('index')))) fail('spec', 'log is not {origin, index} (3.0.0: {origin})');
  if (v3) commitmentRules(claims);

  const { index, proof, cp } = checkpoint(r, log);
  if (cp.origin !== logRef.get('origin')) fail('origin', `checkpoint of ${cp.origin}`);
  if (!v3 && index !== BigInt(logRef.get('index').number)) fail('index', `proof for index ${index}`);
  inclusion(index, proof, cp, Buffer.from(jws, 'ascii'));
  const opened = openingsBytes ? checkOpenings(claims, openingsBytes) : [];
  return { receipt_id: claims.get('receipt_id'), spec: claims.get('spec'), log_index: Number(index), opened };
}

// The receipt key of a JWKS entry (doc.go "# Keys and rotation"): an OKP
// Ed25519 key whose kid is its RFC 7638 thumbprint, with a window.
function receiptKey(key, kid) {
  if (key.get('kty') !== 'OKP' || key.get('crv') !== 'Ed25519') throw new Error('not an OKP Ed25519 key');
  const x = key.get('x');
  if (!isStr(x) || b64url(x, 'x').length !== 32) throw new Error('x is not a 32-byte key');
  // RFC 7638 thumbprint: SHA-256 of the required members in lexical order.
  const tp = sha256(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).toString('base64url');
  if (tp !== kid) throw new Error('kid is not the RFC 7638 thumbprint of x');
  for (const [m, ok] of [['use', ['sig']], ['alg', ['EdDSA', 'Ed25519']]]) {
    if (key.has(m) && !ok.includes(key.get(m))) throw new Error(`${m} ${key.get(m)}`);
  }
  if (!isInt(key.get('nbf'))) throw new Error('nbf missing');
  if (key.has('exp') && !isInt(key.get('exp'))) throw new Error('exp is not an integer');
  return b64url(x, 'x');
}
const validAt = (key, iat) => iat >= BigInt(key.get('nbf').number) && (!key.has('exp') || iat < BigInt(key.get('exp').number));

// The tlog-proof (c2sp.org/tlog-proof@v1) and its checkpoint, signed by the
// log key: the index, the proof hashes, the checkpoint and its signed
// note's text and signature lines.
function checkpoint(r, log) {
  const { index, proof, note } = step('tlog-proof', () => {
    const lines = r.get('tlog_proof').split('\n');
    let n = 0;
    if (lines[n++] !== 'c2sp.org/tlog-proof@v1') throw new Error('bad first line');
    if (lines[n]?.startsWith('extra ')) {
      const extra = lines[n++].slice(6);
      if (extra === '') throw new Error('empty extra data');
      b64(extra, 'extra');
    }
    const m = /^index (0|[1-9]\d*)$/.exec(lines[n++] ?? '');
    if (!m) throw new Error('bad index line');
    const proof = [];
    for (;;) {
      if (n >= lines.length - 1) throw new Error('no empty line before the checkpoint');
      const l = lines[n++];
      if (l === '') break;
      const h = b64(l, 'proof hash');
      if (h.length !== 32 || proof.length === 63) throw new Error('bad proof hash');
      proof.push(h);
    }
    const note = lines.slice(n).join('\n');
    if (note === '') throw new Error('no checkpoint');
    return { index: BigInt(m[1]), proof, note };
  });

  // C2SP signed note: text, blank line, "— <name> base64(keyhash ‖ sig)" lines.
  const { text, sigs } = step('checkpoint-signature', () => {
    if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error('control character in note');
    const split = note.lastIndexOf('\n\n');
    if (split < 0 || !note.endsWith('\n')) throw new Error('malformed note');
    const text = note.slice(0, split + 1);
    const sigs = [];
    let verified = 0;
    const lines = note.slice(split + 2, -1).split('\n');
    if (lines.length > 100) throw new Error('more than 100 signatures');
    for (const line of lines) {
      // A key name as golang.org/x/mod/sumdb/note takes one: no '+', no
      // white space in Go's sense (unicode.IsSpace), which is not JS's \s.
      const m = /^\u2014 ([^\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]+) (\S+)$/u.exec(line);
      if (!m) throw new Error('malformed signature line');
      const raw = b64(m[2], 'note signature');
      if (raw.length < 5) throw new Error('short signature');
      sigs.push({ name: m[1], raw });
      if (m[1] !== log.name || !raw.subarray(0, 4).equals(log.hash)) continue; // unknown key: ignore
      if (!verify(null, Buffer.from(text, 'utf8'), log.key, raw.subarray(4))) throw new Error('invalid signature by the log key');
      verified++;
    }
    if (verified === 0) throw new Error('no signature by the log key');
    return { text, sigs };
  });
  const cp = step('checkpoint', () => {
    const l = text.slice(0, -1).split('\n');
    if (l.length < 3 || l[0] === '' || !/^(0|[1-9]\d*)$/.test(l[1])) throw new Error('not a checkpoint');
    const root = b64(l[2], 'root');
    if (root.length !== 32 || l.slice(3).some((e) => e === '')) throw new Error('not a checkpoint');
    return { origin: l[0], size: BigInt(l[1]), root, text, sigs };
  });
  return { index, proof, cp };
}

// RFC 9162 §2.1.3.2, leaf hash = SHA-256(0x00 ‖ leaf), node = SHA-256(0x01 ‖ l ‖ r);
// the leaf is the jws string (1.0.0 to 3.0.0) or the payload bytes (4.0.0).
function inclusion(index, proof, cp, leaf) {
  step('inclusion', () => {
    if (index >= cp.size) throw new Error(`index ${index} not below tree size ${cp.size}`);
    let fn = index, sn = cp.size - 1n;
    let h = sha256(Buffer.from([0]), leaf);
    for (const p of proof) {
      if (sn === 0n) throw new Error('proof too long');
      if ((fn & 1n) === 1n || fn === sn) {
        h = sha256(Buffer.from([1]), p, h);
        while ((fn & 1n) === 0n && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
      } else {
        h = sha256(Buffer.from([1]), h, p);
      }
      fn >>= 1n; sn >>= 1n;
    }
    if (sn !== 0n || !h.equals(cp.root)) throw new Error('proof does not lead to the checkpoint root');
  });
}

// 4.0.0, "signed by inclusion" (doc.go "# Version 4.0.0"): the payload is
// the log leaf; the checkpoint is signed by the log key and cosigned by a
// receipt key of the JWKS (signature line named by its kid, key hash
// SHA-256(kid ‖ 0x0A ‖ 0x01 ‖ key)[:4]) whose window holds iat.
const V4PREFIX = Buffer.from(`{"spec":"${V4}",`);
function verifyV4(r, keys, log, openingsBytes) {
  const p = step('payload', () => b64url(r.get('payload'), 'payload'));
  const claims = step('payload', () => {
    const c = parseJSON(p, 'payload');
    if (!isObj(c) || !isStr(c.get('spec'))) throw new Error('not a claims object');
    if (c.get('spec') !== V4 && SPECS.includes(c.get('spec'))) fail('spec', `a ${V4} document with claims of ${c.get('spec')}`);
    if (c.get('spec') !== V4 || !isInt(c.get('iat')) || !isObj(c.get('log'))) throw new Error('not 4.0.0 claims');
    // A 4.0.0 leaf is written in one form, which begins so (Go's IsLeafV4):
    // the receipt key's cosignature vouches for the leaves of that form only.
    if (!p.subarray(0, V4PREFIX.length).equals(V4PREFIX)) throw new Error('not 4.0.0 claims in the form the issuer writes');
    concealedShape(c, CONCEALED, '');
    return c;
  });
  if (!same(r.get('claims'), claims)) fail('claims-mismatch', 'readable claims differ from the payload');
  if (r.get('spec') !== claims.get('spec') || r.get('id') !== claims.get('receipt_id')) fail('claims-mismatch', 'spec or id differ');
  if (claims.get('receipt_id') !== `rcpt_${claims.get('event_id')}`) fail('spec', 'receipt_id is not rcpt_ + event_id');
  const logRef = claims.get('log');
  if (!isStr(logRef.get('origin')) || logRef.size !== 1) fail('spec', 'log is not {origin}');
  commitmentRules(claims);

  const { index, proof, cp } = checkpoint(r, log);
  if (cp.origin !== logRef.get('origin')) fail('origin', `checkpoint of ${cp.origin}`);
  inclusion(index, proof, cp, p);

  // The receipt key's cosignature: every line by a key of the JWKS must
  // verify; one by a key not revoked whose window holds iat must be there.
  const iat = BigInt(claims.get('iat').number);
  const cosigners = [];
  for (const { name, raw } of cp.sigs) {
    const matches = keys.filter((k) => isObj(k) && k.get('kid') === name);
    if (matches.length === 0) continue;
    if (matches.length > 1) fail('jwks', `kid ${name} listed twice`);
    const x = step('jwks', () => receiptKey(matches[0], name));
    const hash = sha256(Buffer.from(name + '\n'), Buffer.from([1]), x).subarray(0, 4);
    if (!raw.subarray(0, 4).equals(hash)) continue; // another key of that name
    if (raw.length !== 68 || !verify(null, Buffer.from(cp.text, 'utf8'), ed25519Key(x), raw.subarray(4))) fail('signature', `the cosignature by ${name} does not verify`);
    cosigners.push(matches[0]);
  }
  if (cosigners.length === 0) fail('kid', 'the checkpoint carries no signature by a key of the JWKS');
  if (!cosigners.some((k) => k.get('revoked') !== true && validAt(k, iat))) {
    if (cosigners.some((k) => validAt(k, iat))) fail('key-revoked', 'the key valid at iat is revoked');
    if (cosigners.some((k) => k.get('revoked') !== true)) fail('key-window', `iat ${iat} outside the window of every cosigning key`);
    fail('key-revoked', 'every cosigning key is revoked');
  }
  const opened = openingsBytes ? checkOpenings(claims, openingsBytes) : [];
  return { receipt_id: claims.get('receipt_id'), spec: claims.get('spec'), log_index: Number(index), opened };
}

function run(receipt, jwks, vkey, openings) {
  try {
    return { ok: true, ...verifyReceipt(receipt, jwks, vkey, openings) };
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    return { ok: false, step: e.step, error: e.message };
  }
}

// --commit FIELD VALUE SALT prints the commitment an opening opens (to
// compare with the receipt's claims.commitments by hand).
if (process.argv[2] === '--commit') {
  const [, , , field, value, salt] = process.argv;
  console.log(commitment(field, value, b64url(salt, 'salt')));
  process.exit(0);
}
// Batch mode for tests: --cases FILE, a JSON array of {name, receipt, jwks,
// vkey, openings?} (receipt, jwks and openings base64-encoded); prints one
// result line per case.
if (process.argv[2] === '--cases') {
  for (const c of JSON.parse(readFileSync(process.argv[3], 'utf8'))) {
    const openings = c.openings ? Buffer.from(c.openings, 'base64') : undefined;
    console.log(JSON.stringify({ name: c.name, ...run(Buffer.from(c.receipt, 'base64'), Buffer.from(c.jwks, 'base64'), c.vkey, openings) }));
  }
  process.exit(0);
}
const [, , receiptPath, jwksPath, vkey, openingsPath] = process.argv;
if (!receiptPath || !jwksPath || !vkey) {
  console.error('usage: node verify.mjs RECEIPT.json JWKS.json LOG_VERIFIER_KEY [OPENINGS.json]');
  process.exit(2);
}
const res = run(readFileSync(receiptPath), readFileSync(jwksPath), vkey, openingsPath ? readFileSync(openingsPath) : undefined);
console.log(JSON.stringify(res));
process.exit(res.ok ? 0 : 1);
