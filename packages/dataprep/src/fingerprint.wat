;; The exact pass's fingerprint of a normalised text: HighwayHash-128 of its bytes under a secret key (./fingerprint.ts
;; loads it; `npm run wasm:dataprep` assembles it into ./fingerprint-wasm.generated.ts). It shares the text scan's
;; memory, so a text the scan placed or decoded there is hashed where it lies.
;;
;; HighwayHash's state is four vectors of four 64-bit lanes (v0, v1, mul0, mul1); each is two v128 locals here, lanes
;; 0-1 in `a` and 2-3 in `b`, and every step of the reference's lane loop is done on both halves at once. The
;; products of 32-bit halves are `extmul`s of the lanes' low and high words, gathered by one shuffle each; the
;; zipper merge is one byte shuffle (the reference's SSE4.1 constant). The published test vectors check it
;; (packages/dataprep/test/fingerprint.unit.test.ts).
(module
  (import "scan" "memory" (memory 3))

  ;; `state` is 80 bytes of the caller's: the 32-byte key at `state`, 32 bytes of scratch for the last, partial
  ;; packet from `state + 32`, and the 16-byte digest written at `state + 64`. The text is `[at, at + len)`.
  (func (export "fingerprint") (param $at i32) (param $len i32) (param $state i32)
    (local $p i32) (local $end i32) (local $r i32) (local $tail i32) (local $i i32) (local $rounds i32) (local $pending i32)
    (local $v0a v128) (local $v0b v128) (local $v1a v128) (local $v1b v128)
    (local $m0a v128) (local $m0b v128) (local $m1a v128) (local $m1b v128)
    (local $pa v128) (local $pb v128) (local $lo v128) (local $hi v128) (local $k v128)
    ;; Reset: mul0 and mul1 are the reference's constants; v0 = mul0 ^ key, v1 = mul1 ^ (key with its 32-bit halves
    ;; swapped).
    (local.set $m0a (v128.const i64x2 0xdbe6d5d5fe4cce2f 0xa4093822299f31d0))
    (local.set $m0b (v128.const i64x2 0x13198a2e03707344 0x243f6a8885a308d3))
    (local.set $m1a (v128.const i64x2 0x3bd39e10cb0ef593 0xc0acf169b5f18a8c))
    (local.set $m1b (v128.const i64x2 0xbe5466cf34e90c6c 0x452821e638d01377))
    (local.set $k (v128.load (local.get $state)))
    (local.set $v0a (v128.xor (local.get $m0a) (local.get $k)))
    (local.set $v1a (v128.xor (local.get $m1a) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $k) (local.get $k))))
    (local.set $k (v128.load offset=16 (local.get $state)))
    (local.set $v0b (v128.xor (local.get $m0b) (local.get $k)))
    (local.set $v1b (v128.xor (local.get $m1b) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $k) (local.get $k))))

    (local.set $p (local.get $at))
    (local.set $end (i32.add (local.get $at) (i32.and (local.get $len) (i32.const -32))))
    (local.set $r (i32.and (local.get $len) (i32.const 31)))
    (local.set $pending (i32.ne (local.get $r) (i32.const 0)))
    ;; One update a packet: the text's whole packets, then its remainder's packet if it has one, then the six
    ;; permutations of the 128-bit finalisation, each of them the packet the loop updates with.
    (block $finished
      (loop $packet
        (if (i32.lt_u (local.get $p) (local.get $end))
          (then
            (local.set $pa (v128.load (local.get $p)))
            (local.set $pb (v128.load offset=16 (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 32))))
          (else
            (if (local.get $pending)
              (then
                (local.set $pending (i32.const 0))
                ;; v0 += (r << 32) + r in each lane, and each 32-bit half of v1 rotated left by r.
                (local.set $k (i64x2.splat (i64.or (i64.shl (i64.extend_i32_u (local.get $r)) (i64.const 32)) (i64.extend_i32_u (local.get $r)))))
                (local.set $v0a (i64x2.add (local.get $v0a) (local.get $k)))
                (local.set $v0b (i64x2.add (local.get $v0b) (local.get $k)))
                (local.set $v1a (v128.or (i32x4.shl (local.get $v1a) (local.get $r)) (i32x4.shr_u (local.get $v1a) (i32.sub (i32.const 32) (local.get $r)))))
                (local.set $v1b (v128.or (i32x4.shl (local.get $v1b) (local.get $r)) (i32x4.shr_u (local.get $v1b) (i32.sub (i32.const 32) (local.get $r)))))
                ;; The packet: zeros, the remainder's whole 4-byte words from its start, and then either its last
                ;; four bytes at 28 (16 bytes or more) or its first, middle and last odd bytes at 16.
                (v128.store offset=32 (local.get $state) (v128.const i64x2 0 0))
                (v128.store offset=48 (local.get $state) (v128.const i64x2 0 0))
                (local.set $tail (local.get $p))
                (local.set $i (i32.const 0))
                (block $copied
                  (loop $word
                    (br_if $copied (i32.ge_u (i32.add (local.get $i) (i32.const 4)) (i32.add (local.get $r) (i32.const 1))))
                    (i32.store offset=32 (i32.add (local.get $state) (local.get $i)) (i32.load (i32.add (local.get $tail) (local.get $i))))
                    (local.set $i (i32.add (local.get $i) (i32.const 4)))
                    (br $word)))
                (if (i32.and (local.get $r) (i32.const 16))
                  (then
                    (i32.store offset=60 (local.get $state) (i32.load (i32.sub (i32.add (local.get $tail) (local.get $r)) (i32.const 4)))))
                  (else
                    (if (i32.and (local.get $r) (i32.const 3))
                      (then
                        ;; $i is the remainder's whole words' length; its odd bytes follow.
                        (i32.store8 offset=48 (local.get $state) (i32.load8_u (i32.add (local.get $tail) (local.get $i))))
                        (i32.store8 offset=49 (local.get $state)
                          (i32.load8_u (i32.add (i32.add (local.get $tail) (local.get $i)) (i32.shr_u (i32.and (local.get $r) (i32.const 3)) (i32.const 1)))))
                        (i32.store8 offset=50 (local.get $state) (i32.load8_u (i32.sub (i32.add (local.get $tail) (local.get $r)) (i32.const 1))))))))
                (local.set $pa (v128.load offset=32 (local.get $state)))
                (local.set $pb (v128.load offset=48 (local.get $state))))
              (else
                (br_if $finished (i32.eq (local.get $rounds) (i32.const 6)))
                (local.set $rounds (i32.add (local.get $rounds) (i32.const 1)))
                ;; Permute: lanes 2, 3, 0, 1 of v0, each with its 32-bit halves swapped.
                (local.set $pa (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $v0b) (local.get $v0b)))
                (local.set $pb (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $v0a) (local.get $v0a)))))))
        ;; Update: v1 += mul0 + packet; mul0 ^= lo32(v1) * hi32(v0); v0 += mul1; mul1 ^= lo32(v0) * hi32(v1); then the
        ;; zipper merges, v0 += zip(v1) and v1 += zip(v0).
        (local.set $v1a (i64x2.add (local.get $v1a) (i64x2.add (local.get $m0a) (local.get $pa))))
        (local.set $v1b (i64x2.add (local.get $v1b) (i64x2.add (local.get $m0b) (local.get $pb))))
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $v1a) (local.get $v1b)))
        (local.set $hi (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $v0a) (local.get $v0b)))
        (local.set $m0a (v128.xor (local.get $m0a) (i64x2.extmul_low_i32x4_u (local.get $lo) (local.get $hi))))
        (local.set $m0b (v128.xor (local.get $m0b) (i64x2.extmul_high_i32x4_u (local.get $lo) (local.get $hi))))
        (local.set $v0a (i64x2.add (local.get $v0a) (local.get $m1a)))
        (local.set $v0b (i64x2.add (local.get $v0b) (local.get $m1b)))
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $v0a) (local.get $v0b)))
        (local.set $hi (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $v1a) (local.get $v1b)))
        (local.set $m1a (v128.xor (local.get $m1a) (i64x2.extmul_low_i32x4_u (local.get $lo) (local.get $hi))))
        (local.set $m1b (v128.xor (local.get $m1b) (i64x2.extmul_high_i32x4_u (local.get $lo) (local.get $hi))))
        (local.set $v0a (i64x2.add (local.get $v0a) (i8x16.shuffle 3 12 2 5 14 1 15 0 11 4 10 13 9 6 8 7 (local.get $v1a) (local.get $v1a))))
        (local.set $v0b (i64x2.add (local.get $v0b) (i8x16.shuffle 3 12 2 5 14 1 15 0 11 4 10 13 9 6 8 7 (local.get $v1b) (local.get $v1b))))
        (local.set $v1a (i64x2.add (local.get $v1a) (i8x16.shuffle 3 12 2 5 14 1 15 0 11 4 10 13 9 6 8 7 (local.get $v0a) (local.get $v0a))))
        (local.set $v1b (i64x2.add (local.get $v1b) (i8x16.shuffle 3 12 2 5 14 1 15 0 11 4 10 13 9 6 8 7 (local.get $v0b) (local.get $v0b))))
        (br $packet)))
    ;; hash[0] = v0[0] + mul0[0] + v1[2] + mul1[2], hash[1] = v0[1] + mul0[1] + v1[3] + mul1[3].
    (v128.store offset=64 (local.get $state)
      (i64x2.add (i64x2.add (local.get $v0a) (local.get $m0a)) (i64x2.add (local.get $v1b) (local.get $m1b))))))
