;; The exact pass's byte scan of a document's text (./text-scan.ts loads it; `npm run wasm:dataprep` assembles it
;; into ./text-scan-wasm.generated.ts). The caller places the text's bytes at [16, 16 + len) of the memory, keeps
;; byte 15 zero, and fills the 16 bytes after the text with 'a' so that a whole vector can be read past its end.
;; The bytes are valid UTF-8 (the reader checked them).
(module
  (memory (export "memory") 1)

  ;; 1 when the text is, as it lies, what normalizeText leaves unchanged and a JSON string literal's content
  ;; with no escape, so its bytes are the normalised text's UTF-8; otherwise 0, or 2 when `decode` would refuse
  ;; it. Sixteen bytes at a time, a byte is bad when it is below 0x20 (a control character: not JSON, and white
  ;; space), a backslash (an escape), 0xC2 (the lead byte of U+0080-U+00BF, which holds U+00A0, white space),
  ;; from 0xCC up (a character from U+0300 up, where NFC may change the text), or a space after a space (not
  ;; collapsed); with `fold`, also from 0x80 up or A-Z (lower-casing would change it). A space at either end is
  ;; the caller's test.
  (func (export "plain") (param $len i32) (param $fold i32) (result i32)
    (local $p i32) (local $end i32) (local $v v128) (local $bad v128)
    (local.set $p (i32.const 16))
    (local.set $end (i32.add (i32.const 16) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $bad
          (v128.or
            (v128.or
              (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
              (i8x16.ge_u (local.get $v) (v128.const i8x16 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc)))
            (v128.or
              (v128.or
                (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))
                (i8x16.eq (local.get $v) (v128.const i8x16 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2)))
              ;; A space whose previous byte (the vector read one byte earlier) is a space too.
              (v128.and
                (i8x16.eq (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
                (i8x16.eq
                  (v128.load (i32.sub (local.get $p) (i32.const 1)))
                  (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))))))
        (if (local.get $fold)
          (then
            (local.set $bad
              (v128.or
                (local.get $bad)
                (v128.or
                  (i8x16.lt_s (local.get $v) (v128.const i64x2 0 0))
                  (i8x16.lt_u
                    (i8x16.sub (local.get $v) (v128.const i8x16 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41))
                    (v128.const i8x16 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26)))))))
        (if (v128.any_true (local.get $bad)) (then (return (call $beyond (local.get $p) (local.get $end) (local.get $fold)))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $next)))
    (i32.const 1))

  ;; What `plain` answers for a text that is not plain, from `p` (the first vector found wrong) on: 2 when a lead
  ;; byte from 0xCC up lies at or after `p` (with `fold`, from 0xC3 up: a character from U+00C0, beyond ASCII and
  ;; not white space), so `decode` would refuse the text too; 0 otherwise.
  (func $beyond (param $p i32) (param $end i32) (param $fold i32) (result i32)
    (local $top v128)
    (local.set $top
      (select
        (v128.const i8x16 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3 0xc3)
        (v128.const i8x16 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc)
        (local.get $fold)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (if (v128.any_true (i8x16.ge_u (v128.load (local.get $p)) (local.get $top))) (then (return (i32.const 2))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $next)))
    (i32.const 0))

  ;; The normalised text's UTF-8, written at `out` (at least 16 + len + 16, so it never overlaps the text): its
  ;; length, or -1 when the string path must decide. Unless `raw` (a text shard's line), the text is a JSON string
  ;; literal's content whose escapes the caller checked: they are decoded, and a raw control character is refused
  ;; (-1). Every character must be below U+0300, where NFC changes nothing; with `fold`, ASCII or U+00A0 (white
  ;; space: lower-casing cannot change it). White space below
  ;; U+0300 (tab to carriage return, the space and U+00A0: what `\s` and `trim()` match there) is collapsed, each
  ;; run to one space and none at either end; with `fold`, A-Z are lower-cased.
  (func (export "decode") (param $len i32) (param $out i32) (param $fold i32) (param $raw i32) (result i32)
    (local $p i32) (local $end i32) (local $o i32) (local $c i32) (local $cp i32) (local $pend i32)
    (local $v v128) (local $sp v128) (local $bad v128)
    (local.set $p (i32.const 16))
    (local.set $end (i32.add (i32.const 16) (local.get $len)))
    (local.set $o (local.get $out))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        ;; Sixteen bytes at once, copied as they are (with `fold`, A-Z lower-cased) when the steps below would copy
        ;; them so: no white space pending, no control byte, backslash, 0xC2 (U+0080-U+00BF, which holds U+00A0) or
        ;; byte from 0xCC up (with `fold`, nothing beyond ASCII), no space at either end nor two in a row, and an
        ;; ASCII last byte, so that no character is cut at the vector's end.
        (if (i32.and (i32.eqz (local.get $pend)) (i32.le_u (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
          (then
            (local.set $v (v128.load (local.get $p)))
            (local.set $sp (i8x16.eq (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
            (local.set $bad
              (v128.or
                (v128.or
                  (v128.or
                    (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
                    (i8x16.ge_u (local.get $v) (v128.const i8x16 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc 0xcc)))
                  (v128.or
                    (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))
                    (i8x16.eq (local.get $v) (v128.const i8x16 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2 0xc2))))
                (v128.or
                  (v128.and
                    (local.get $sp)
                    (v128.or
                      (i8x16.shuffle 16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 (local.get $sp) (v128.const i64x2 0 0))
                      (v128.const i8x16 0xff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0xff)))
                  (v128.and
                    (i8x16.lt_s (local.get $v) (v128.const i64x2 0 0))
                    (v128.const i8x16 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0xff)))))
            (if (local.get $fold)
              (then
                (local.set $bad (v128.or (local.get $bad) (i8x16.lt_s (local.get $v) (v128.const i64x2 0 0))))
                (local.set $v
                  (v128.or
                    (local.get $v)
                    (v128.and
                      (i8x16.lt_u
                        (i8x16.sub (local.get $v) (v128.const i8x16 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41))
                        (v128.const i8x16 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26 26))
                      (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))))))
            (if (i32.eqz (v128.any_true (local.get $bad)))
              (then
                (v128.store (local.get $o) (local.get $v))
                (local.set $o (i32.add (local.get $o) (i32.const 16)))
                (local.set $p (i32.add (local.get $p) (i32.const 16)))
                (br $next)))))
        (local.set $c (i32.load8_u (local.get $p)))
        (block $have
          (if (i32.and (i32.eq (local.get $c) (i32.const 0x5c)) (i32.eqz (local.get $raw)))
            (then
              (local.set $cp (call $escape (local.get $p) (local.get $end)))
              (if (i32.lt_s (local.get $cp) (i32.const 0)) (then (return (i32.const -1))))
              (local.set $p (i32.add (local.get $p) (select (i32.const 6) (i32.const 2) (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 0x75)))))
              (br $have)))
          (if (i32.lt_u (local.get $c) (i32.const 0x80))
            (then
              (if (i32.and (i32.lt_u (local.get $c) (i32.const 0x20)) (i32.eqz (local.get $raw))) (then (return (i32.const -1))))
              (local.set $cp (local.get $c))
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (br $have)))
          ;; Below U+0300 a character is two bytes with a lead byte from 0xC2 to 0xCB.
          (if (i32.or
                (i32.or (i32.lt_u (local.get $c) (i32.const 0xc2)) (i32.ge_u (local.get $c) (i32.const 0xcc)))
                (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
            (then (return (i32.const -1))))
          (local.set $cp
            (i32.or
              (i32.shl (i32.and (local.get $c) (i32.const 0x1f)) (i32.const 6))
              (i32.and (i32.load8_u offset=1 (local.get $p)) (i32.const 0x3f))))
          (local.set $p (i32.add (local.get $p) (i32.const 2))))
        (if (i32.or
              (i32.or (i32.eq (local.get $cp) (i32.const 0x20)) (i32.lt_u (i32.sub (local.get $cp) (i32.const 9)) (i32.const 5)))
              (i32.eq (local.get $cp) (i32.const 0xa0)))
          (then
            ;; A run at the start is dropped; one elsewhere becomes a space before the next character, if any.
            (local.set $pend (i32.ne (local.get $o) (local.get $out))))
          (else
            (if (local.get $pend)
              (then
                (i32.store8 (local.get $o) (i32.const 0x20))
                (local.set $o (i32.add (local.get $o) (i32.const 1)))
                (local.set $pend (i32.const 0))))
            (if (i32.lt_u (local.get $cp) (i32.const 0x80))
              (then
                (if (i32.and (local.get $fold) (i32.lt_u (i32.sub (local.get $cp) (i32.const 0x41)) (i32.const 26)))
                  (then (local.set $cp (i32.or (local.get $cp) (i32.const 0x20)))))
                (i32.store8 (local.get $o) (local.get $cp))
                (local.set $o (i32.add (local.get $o) (i32.const 1))))
              (else
                (if (local.get $fold) (then (return (i32.const -1))))
                (i32.store8 (local.get $o) (i32.or (i32.const 0xc0) (i32.shr_u (local.get $cp) (i32.const 6))))
                (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 0x3f))))
                (local.set $o (i32.add (local.get $o) (i32.const 2)))))))
        (br $next)))
    (i32.sub (local.get $o) (local.get $out)))

  ;; The character the escape at `p` (a backslash) stands for, or -1: JSON's escapes, `\u` with four hex digits
  ;; giving a character from U+0001 to U+02FF (NUL is refused by the strict parser; from U+0300 up, and so any
  ;; surrogate, NFC may change the text).
  (func $escape (param $p i32) (param $end i32) (result i32)
    (local $e i32) (local $cp i32) (local $i i32) (local $h i32)
    (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $end)) (then (return (i32.const -1))))
    (local.set $e (i32.load8_u offset=1 (local.get $p)))
    (if (i32.eq (local.get $e) (i32.const 0x22)) (then (return (i32.const 0x22))))
    (if (i32.eq (local.get $e) (i32.const 0x5c)) (then (return (i32.const 0x5c))))
    (if (i32.eq (local.get $e) (i32.const 0x2f)) (then (return (i32.const 0x2f))))
    (if (i32.eq (local.get $e) (i32.const 0x62)) (then (return (i32.const 0x08))))
    (if (i32.eq (local.get $e) (i32.const 0x66)) (then (return (i32.const 0x0c))))
    (if (i32.eq (local.get $e) (i32.const 0x6e)) (then (return (i32.const 0x0a))))
    (if (i32.eq (local.get $e) (i32.const 0x72)) (then (return (i32.const 0x0d))))
    (if (i32.eq (local.get $e) (i32.const 0x74)) (then (return (i32.const 0x09))))
    (if (i32.or (i32.ne (local.get $e) (i32.const 0x75)) (i32.gt_u (i32.add (local.get $p) (i32.const 6)) (local.get $end)))
      (then (return (i32.const -1))))
    (loop $digit
      (local.set $h (i32.load8_u offset=2 (i32.add (local.get $p) (local.get $i))))
      (if (i32.lt_u (i32.sub (local.get $h) (i32.const 0x30)) (i32.const 10))
        (then (local.set $h (i32.sub (local.get $h) (i32.const 0x30))))
        (else
          ;; A-F and a-f alike (no other byte becomes a-f with bit 0x20 set).
          (local.set $h (i32.sub (i32.or (local.get $h) (i32.const 0x20)) (i32.const 0x61)))
          (if (i32.ge_u (local.get $h) (i32.const 6)) (then (return (i32.const -1))))
          (local.set $h (i32.add (local.get $h) (i32.const 10)))))
      (local.set $cp (i32.or (i32.shl (local.get $cp) (i32.const 4)) (local.get $h)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (i32.const 4))))
    (if (i32.or (i32.eqz (local.get $cp)) (i32.ge_u (local.get $cp) (i32.const 0x300))) (then (return (i32.const -1))))
    (local.get $cp)))
