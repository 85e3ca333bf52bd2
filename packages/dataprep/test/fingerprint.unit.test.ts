import { describe, expect, it } from 'vitest';
import { decodedText, scanBytes } from '../src/text-scan.js';
import { FINGERPRINT_CHARS, fingerprintOf, fingerprintOfString, setFingerprintKey } from '../src/fingerprint.js';

/**
 * HighwayHash-128's published test vectors (the reference implementation's highwayhash_test.cc): the key is the
 * bytes 0..31, and the input of size n is the bytes 0..n-1, for every n from 0 to 64, which covers no packet, one
 * and two whole packets, and every remainder's branch. Each is two 64-bit words, the first the digest's low 8 bytes.
 */
const VECTORS_128: readonly (readonly [bigint, bigint])[] = [
  [0x0fed268f9d8ffec7n, 0x33565e767f093e6fn], [0xd6b0a8893681e7a8n, 0xdc291df9eb9cdcb4n],
  [0x3d15ad265a16da04n, 0x78085638dc32e868n], [0x0607621b295f0bebn, 0xbfe69a0fd9cedd79n],
  [0x26399eb46dace49en, 0x2e922ad039319208n], [0x3250bdc386d12ed8n, 0x193810906c63c23an],
  [0x6f476ab3cb896547n, 0x7cde576f37ed1019n], [0x2a401fca697171b4n, 0xbe1f03ff9f02796cn],
  [0xa1e96d84280552e8n, 0x695cf1c63bec0ac2n], [0x142a2102f31e63b2n, 0x1a85b98c5b5000ccn],
  [0x51a1b70e26b6bc5bn, 0x929e1f3b2da45559n], [0x88990362059a415bn, 0xbed21f22c47b7d13n],
  [0xcd1f1f5f1caf9566n, 0xa818ba8ce0f9c8d4n], [0xa225564112fe6157n, 0xb2e94c78b8ddb848n],
  [0xbd492febd1cc0919n, 0xcecd1dbc025641a2n], [0x142237a52bc4af54n, 0xe0796c0b6e26bcd7n],
  [0x414460ffd5a401adn, 0x029ea3d5019f18c8n], [0xc52a4b96c51c9962n, 0xecb878b1169b5ea0n],
  [0xd940ca8f11fbeacen, 0xf93a46d616f8d531n], [0x8ac49d0ae5c0cbf5n, 0x3ffdbf8df51d7c93n],
  [0xac6d279b852d00a8n, 0x7dcd3a6ba5ebaa46n], [0xf11621bd93f08a56n, 0x3173c398163dd9d5n],
  [0x0c4ce250f68cf89fn, 0xb3123cda411898edn], [0x15ab97ed3d9a51cen, 0x7ce274479169080en],
  [0xcd001e198d4845b8n, 0xd0d9d98bd8aa2d77n], [0x34f3d617a0493d79n, 0x7dd304f6397f7e16n],
  [0x5cb56890a9f4c6b6n, 0x130829166567304fn], [0x30da6f8b245bd1c0n, 0x6f828b7e3fd9748cn],
  [0xe0580349204c12c0n, 0x93f6da0cac5f441cn], [0xf648731ba5073045n, 0x5fb897114fb65976n],
  [0x024f8354738a5206n, 0x509a4918eb7e0991n], [0x06e7b465e8a57c29n, 0x52415e3a07f5d446n],
  [0x1984df66c1434aaan, 0x16fc1958f9b3e4b9n], [0x111678afe0c6c36cn, 0xf958b59de5a2849dn],
  [0x773fbc8440fb0490n, 0xc96ed5d243658536n], [0x91e3dc710bb6c941n, 0xea336a0bc1eeace9n],
  [0x25cfe3815d7ad9d4n, 0xf2e94f8c828fc59en], [0xb9fb38b83cc288f2n, 0x7479c4c8f850ec04n],
  [0x1d85d5c525982b8cn, 0x6e26b1c16f48dbf4n], [0x8a4e55bd6060bde7n, 0x2134d599058b3fd0n],
  [0x2a958ff994778f36n, 0xe8052d1ae61d6423n], [0x89233ae6be453233n, 0x3acf9c87d7e8c0b9n],
  [0x4458f5e27ea9c8d5n, 0x418fb49bca2a5140n], [0x090301837ed12a68n, 0x1017f69633c861e6n],
  [0x330dd84704d49590n, 0x339df1ad3a4ba6e4n], [0x569363a663f2c576n, 0x363b3d95e3c95ef6n],
  [0xacc8d08586b90737n, 0x2ba0e8087d4e28e9n], [0x39c27a27c86d9520n, 0x8db620a45160932en],
  [0x8e6a4aeb671a072dn, 0x6ed3561a10e47ee6n], [0x0011d765b1bec74an, 0xd80e6e656ede842en],
  [0x2515d62b936ac64cn, 0xce088794d7088a7dn], [0x91621552c16e23afn, 0x264f0094eb23ccefn],
  [0x1e21880d97263480n, 0xd8654807d3a31086n], [0x39d76aaf097f432dn, 0xa517e1e09d074739n],
  [0x0f17a4f337c65a14n, 0x2f51215f69f976d4n], [0xa0fb5cda12895e44n, 0x568c3dc4d1f13cd1n],
  [0x93c8fc00d89c46cen, 0xbad5da947e330e69n], [0x817c07501d1a5694n, 0x584d6ee72cbfac2bn],
  [0x91d668af73f053bfn, 0xf98e647683c1e0edn], [0x5281e1ef6b3ccf8bn, 0xbc4cc3df166083d8n],
  [0xaad61b6dbeaaeeb9n, 0xff969d000c16787bn], [0x4325d84fc0475879n, 0x14b919bd905f1c2dn],
  [0x79a176d1aa6ba6d1n, 0xf1f720c5a53a2b86n], [0x74bd7018022f3ef0n, 0x3aea94a8ad5f4bcbn],
  [0x98bb1f7198d4c4f2n, 0xe0bc0571de918fc8n],
];

const iota = (n: number) => Uint8Array.from({ length: n }, (_, i) => i);

function expectedDigest([low, high]: readonly [bigint, bigint]): string {
  const bytes = Buffer.alloc(16);
  bytes.writeBigUInt64LE(low, 0);
  bytes.writeBigUInt64LE(high, 8);
  return bytes.toString('latin1');
}

describe('the exact pass fingerprint (HighwayHash-128)', () => {
  it('gives the published test vectors for every size from 0 to 64 bytes', () => {
    setFingerprintKey(iota(32));
    try {
      VECTORS_128.forEach((vector, size) => {
        expect(fingerprintOf(iota(size)), `size ${size}`).toBe(expectedDigest(vector));
      });
    } finally {
      setFingerprintKey(crypto.getRandomValues(new Uint8Array(32)));
    }
  });

  it('gives the same digest for a text wherever its bytes lie: an array, part of one, the scan memory, a string', () => {
    for (const text of ['', 'a', 'the quick brown fox jumps over the lazy dog', 'é'.repeat(300), 'x'.repeat(100_000), '日本語のテキスト'.repeat(9)]) {
      const utf8 = Buffer.from(text, 'utf8');
      const digest = fingerprintOfString(text);
      expect(digest).toHaveLength(FINGERPRINT_CHARS);
      expect(fingerprintOf(utf8)).toBe(digest);
      const framed = Buffer.concat([Buffer.from('[['), utf8, Buffer.from(']]')]);
      expect(fingerprintOf(new Uint8Array(framed), 2, framed.length - 2)).toBe(digest);
      // A decoded text is a view of the scan's memory, hashed where it lies.
      const decoded = decodedText(framed, 2, framed.length - 2, false, true);
      if (decoded !== null && text.trim() === text) {
        expect(decoded.buffer).toBe(scanBytes().buffer);
        expect(fingerprintOf(decoded)).toBe(digest);
      }
    }
  });

  it('tells apart texts that differ in one byte anywhere, or in length', () => {
    const base = new Uint8Array(200).fill(0x61);
    const seen = new Set<string>([fingerprintOf(base)]);
    for (let at = 0; at < base.length; at++) {
      const changed = base.slice();
      changed[at] = 0x62;
      seen.add(fingerprintOf(changed));
      seen.add(fingerprintOf(base, 0, at));
    }
    expect(seen.size).toBe(1 + 2 * base.length);
  });

  it('is keyed: the same text under another key has another digest', () => {
    const text = iota(100);
    setFingerprintKey(iota(32));
    const one = fingerprintOf(text);
    const key = iota(32);
    key[31] ^= 1;
    setFingerprintKey(key);
    try {
      expect(fingerprintOf(text)).not.toBe(one);
    } finally {
      setFingerprintKey(crypto.getRandomValues(new Uint8Array(32)));
    }
  });
});
