;; The exact pass's byte scan of a document's text (./text-scan.ts loads it; `npm run wasm:dataprep` assembles it
;; into ./text-scan-wasm.generated.ts). The first two memory pages hold the Unicode tables the caller writes there
;; (./text-scan-tables.generated.ts: two bits of class a code point below U+40000 from byte 0, composition slots
;; from byte 65536); the globals below place the rest. The caller places
;; the text's bytes (or the JSON line `line` reads) at [$TEXT, $TEXT + len), keeps the byte before it zero, and leaves 16 bytes free after the text,
;; which each function fills with 'a' so that a whole vector can be read past its end. The bytes are valid UTF-8
;; (the reader checked them).
(module
  (import "scan" "memory" (memory 3))
  ;; The fingerprint of ./fingerprint.wat, which `line` takes of the text it reads.
  (import "fingerprint" "fingerprint" (func $fingerprint (param i32 i32 i32)))
  ;; The fingerprint's state (its key, scratch and digest); `line`'s keys, 32 pairs of start and length; the keys
  ;; the strict reader refuses (a count, then each as a length and its bytes), which the caller writes; 16 zero
  ;; bytes; the text.
  (global $STATE i32 (i32.const 131072))
  (global $KEYS i32 (i32.const 131152))
  (global $FORBIDDEN i32 (i32.const 131408))
  (global $TEXT i32 (i32.const 131488))
  ;; Set by $chars when a character makes the text not plain, though `decode` may answer.
  (global $notPlain (mut i32) (i32.const 0))

  ;; 1 when the text is, as it lies, what normalizeText leaves unchanged and a JSON string literal's content
  ;; with no escape, so its bytes are the normalised text's UTF-8; otherwise 0 (`decode` may answer), or 2 when
  ;; `decode` would refuse it. Sixteen bytes at a time, a byte is bad when it is below 0x20 (a control character: not JSON, and white
  ;; space), a backslash (an escape), 0xC2 (the lead byte of U+0080-U+00BF, which holds U+00A0, white space),
  ;; from 0xCC up (a character from U+0300 up, which the tables must class), or a space after a space (not
  ;; collapsed); with `fold`, also from 0x80 up or A-Z (lower-casing may change it). A bad vector's characters are
  ;; read one at a time ($chars), and the scan goes on after them; it stops at the first character that is not
  ;; plain, so 2 is answered only when a character `decode` would refuse comes first. A space at either end
  ;; (normalizeText trims it) makes it 0 as well.
  (func (export "plain") (param $len i32) (param $fold i32) (result i32)
    (call $plainAt (global.get $TEXT) (local.get $len) (local.get $fold)))

  ;; `plain` of the text at [$at, $at + len), whose byte before is not a space.
  (func $plainAt (param $at i32) (param $len i32) (param $fold i32) (result i32)
    (local $p i32) (local $end i32) (local $v v128) (local $bad v128)
    (local.set $p (local.get $at))
    (local.set $end (i32.add (local.get $at) (local.get $len)))
    ;; The padding: a vector read past the text's end finds nothing there to read one character at a time.
    (v128.store (local.get $end) (v128.const i8x16 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61))
    (global.set $notPlain (i32.const 0))
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
        (if (v128.any_true (local.get $bad))
          (then
            ;; From the first bad byte (a character's first: no continuation byte is bad unless its lead is).
            (local.set $p
              (call $chars
                (i32.add (local.get $p) (i32.ctz (i8x16.bitmask (local.get $bad))))
                (i32.add (local.get $p) (i32.const 16))
                (local.get $end)
                (local.get $fold)))
            (if (i32.eqz (local.get $p)) (then (return (i32.const 2))))
            ;; Not plain: `decode` decides the rest, refusing what it must.
            (if (global.get $notPlain) (then (return (i32.const 0))))
            (br $next)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $next)))
    (if (global.get $notPlain) (then (return (i32.const 0))))
    (if (i32.and
          (i32.ne (local.get $len) (i32.const 0))
          (i32.or
            (i32.eq (i32.load8_u (local.get $at)) (i32.const 0x20))
            (i32.eq (i32.load8_u (i32.sub (local.get $end) (i32.const 1))) (i32.const 0x20))))
      (then (return (i32.const 0))))
    (i32.const 1))

  ;; The characters of a vector `plain` found bad, those that start in [p, stop), one at a time; the position after
  ;; them, where `plain` goes on sixteen bytes at a time, or 0 when `decode` would refuse the text (a character
  ;; neither a starter the tables keep as it is, class 3, or 1 without `fold`, nor white space nor a mark; one cut
  ;; by the end). At a character that makes the text not plain though `decode` may answer (an escape, a control
  ;; character, white space, two spaces, A-Z with `fold`, a mark that may compose) it sets $notPlain and stops
  ;; after that character.
  (func $chars (param $p i32) (param $stop i32) (param $end i32) (param $fold i32) (result i32)
    (local $c i32) (local $n i32) (local $cp i32) (local $k i32) (local $prev i32)
    ;; The continuation bytes of a two-byte character the good vector before began.
    (block $aligned
      (loop $skip
        (br_if $aligned (i32.ge_u (local.get $p) (local.get $end)))
        (br_if $aligned (i32.ne (i32.and (i32.load8_u (local.get $p)) (i32.const 0xc0)) (i32.const 0x80)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $skip)))
    (local.set $prev (i32.load8_u (i32.sub (local.get $p) (i32.const 1))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $stop)))
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.lt_u (local.get $c) (i32.const 0x80))
          (then
            (if (i32.or
                  (i32.or (i32.lt_u (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x5c)))
                  (i32.or
                    (i32.and (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $prev) (i32.const 0x20)))
                    (i32.and (local.get $fold) (i32.lt_u (i32.sub (local.get $c) (i32.const 0x41)) (i32.const 26)))))
              (then (global.set $notPlain (i32.const 1)) (return (i32.add (local.get $p) (i32.const 1)))))
            (local.set $prev (local.get $c))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $next)))
        ;; Two and three bytes decoded here, as most text from U+0080 up is; four by $utf8.
        (if (i32.lt_u (local.get $c) (i32.const 0xe0))
          (then
            (local.set $n (i32.const 2))
            (local.set $cp
              (i32.or (i32.shl (i32.and (local.get $c) (i32.const 0x1f)) (i32.const 6)) (i32.and (i32.load8_u offset=1 (local.get $p)) (i32.const 0x3f)))))
          (else
            (if (i32.lt_u (local.get $c) (i32.const 0xf0))
              (then
                (local.set $n (i32.const 3))
                (local.set $cp
                  (i32.or
                    (i32.or
                      (i32.shl (i32.and (local.get $c) (i32.const 0x0f)) (i32.const 12))
                      (i32.shl (i32.and (i32.load8_u offset=1 (local.get $p)) (i32.const 0x3f)) (i32.const 6)))
                    (i32.and (i32.load8_u offset=2 (local.get $p)) (i32.const 0x3f)))))
              (else
                (local.set $n (i32.const 4))
                (local.set $cp (call $utf8 (local.get $p) (i32.const 4)))))))
        (if (i32.gt_u (i32.add (local.get $p) (local.get $n)) (local.get $end)) (then (return (i32.const 0))))
        (local.set $prev (local.get $c))
        (local.set $p (i32.add (local.get $p) (local.get $n)))
        ;; No white space lies above U+3000 but U+FEFF.
        (if (i32.or (i32.le_u (local.get $cp) (i32.const 0x3000)) (i32.eq (local.get $cp) (i32.const 0xfeff)))
          (then (if (call $space (local.get $cp)) (then (global.set $notPlain (i32.const 1)) (return (local.get $p))))))
        (local.set $k (call $class (local.get $cp)))
        (if (i32.eq (local.get $k) (i32.const 2)) (then (global.set $notPlain (i32.const 1)) (return (local.get $p))))
        (br_if $next (i32.or (i32.eq (local.get $k) (i32.const 3)) (i32.and (i32.eq (local.get $k) (i32.const 1)) (i32.eqz (local.get $fold)))))
        (return (i32.const 0))))
    (local.get $p))

  ;; The class of `cp` in the table at byte 0: 0 for the string path (and from U+40000 up), 1 a starter NFC leaves
  ;; as it is that lower-casing changes, 2 a mark that may compose with what precedes it, 3 a starter neither
  ;; changes. Not for ASCII, which the scans read themselves.
  (func $class (param $cp i32) (result i32)
    (if (i32.ge_u (local.get $cp) (i32.const 0x40000)) (then (return (i32.const 0))))
    (i32.and
      (i32.shr_u (i32.load8_u (i32.shr_u (local.get $cp) (i32.const 2))) (i32.shl (i32.and (local.get $cp) (i32.const 3)) (i32.const 1)))
      (i32.const 3)))

  ;; Whether `cp` is white space as `\s` and `trim()` match it: tab to carriage return, the space, U+00A0, U+1680,
  ;; U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF.
  (func $space (param $cp i32) (result i32)
    (if (i32.lt_u (local.get $cp) (i32.const 0x100))
      (then
        (return
          (i32.or
            (i32.or (i32.eq (local.get $cp) (i32.const 0x20)) (i32.lt_u (i32.sub (local.get $cp) (i32.const 9)) (i32.const 5)))
            (i32.eq (local.get $cp) (i32.const 0xa0))))))
    (i32.or
      (i32.or
        (i32.or (i32.eq (local.get $cp) (i32.const 0x1680)) (i32.lt_u (i32.sub (local.get $cp) (i32.const 0x2000)) (i32.const 11)))
        (i32.or (i32.eq (local.get $cp) (i32.const 0x2028)) (i32.eq (local.get $cp) (i32.const 0x2029))))
      (i32.or
        (i32.or (i32.eq (local.get $cp) (i32.const 0x202f)) (i32.eq (local.get $cp) (i32.const 0x205f)))
        (i32.or (i32.eq (local.get $cp) (i32.const 0x3000)) (i32.eq (local.get $cp) (i32.const 0xfeff))))))

  ;; The length of the UTF-8 character whose lead byte (from 0xC0 up) is `c`.
  (func $width (param $c i32) (result i32)
    (select (i32.const 2) (select (i32.const 3) (i32.const 4) (i32.lt_u (local.get $c) (i32.const 0xf0))) (i32.lt_u (local.get $c) (i32.const 0xe0))))

  ;; The code point of the `n`-byte UTF-8 character at `p` (n from 2 to 4).
  (func $utf8 (param $p i32) (param $n i32) (result i32)
    (local $cp i32) (local $i i32)
    (local.set $cp (i32.and (i32.load8_u (local.get $p)) (i32.shr_u (i32.const 0x7f) (local.get $n))))
    (local.set $i (i32.const 1))
    (loop $more
      (local.set $cp
        (i32.or (i32.shl (local.get $cp) (i32.const 6)) (i32.and (i32.load8_u (i32.add (local.get $p) (local.get $i))) (i32.const 0x3f))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $cp))

  ;; Writes `cp` (from U+0080 up) as UTF-8 at `o`; the position after it.
  (func $emit (param $o i32) (param $cp i32) (result i32)
    (if (i32.lt_u (local.get $cp) (i32.const 0x800))
      (then
        (i32.store8 (local.get $o) (i32.or (i32.const 0xc0) (i32.shr_u (local.get $cp) (i32.const 6))))
        (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 0x3f))))
        (return (i32.add (local.get $o) (i32.const 2)))))
    (if (i32.lt_u (local.get $cp) (i32.const 0x10000))
      (then
        (i32.store8 (local.get $o) (i32.or (i32.const 0xe0) (i32.shr_u (local.get $cp) (i32.const 12))))
        (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $cp) (i32.const 6)) (i32.const 0x3f))))
        (i32.store8 offset=2 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 0x3f))))
        (return (i32.add (local.get $o) (i32.const 3)))))
    (i32.store8 (local.get $o) (i32.or (i32.const 0xf0) (i32.shr_u (local.get $cp) (i32.const 18))))
    (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $cp) (i32.const 12)) (i32.const 0x3f))))
    (i32.store8 offset=2 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $cp) (i32.const 6)) (i32.const 0x3f))))
    (i32.store8 offset=3 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 0x3f))))
    (i32.add (local.get $o) (i32.const 4)))

  ;; The one character NFC makes of `base` and `mark`, from the composition slots at byte 65536 (placed as
  ;; ../test/text-scan-tables.ts places them), or -1 when there is none there.
  (func $compose (param $base i32) (param $mark i32) (result i32)
    (local $slot i32) (local $at i32)
    (local.set $slot
      (i32.shr_u
        (i32.xor (i32.mul (local.get $base) (i32.const 0x9e3779b1)) (i32.mul (local.get $mark) (i32.const 0x85ebca77)))
        (i32.const 20)))
    (loop $probe
      (local.set $at (i32.add (i32.const 65536) (i32.shl (local.get $slot) (i32.const 4))))
      (if (i32.eqz (i32.load (local.get $at))) (then (return (i32.const -1))))
      (if (i32.and (i32.eq (i32.load (local.get $at)) (local.get $base)) (i32.eq (i32.load offset=4 (local.get $at)) (local.get $mark)))
        (then (return (i32.load offset=8 (local.get $at)))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (i32.const 4095)))
      (br $probe))
    (i32.const -1))

  ;; The normalised text's UTF-8, written at `out` (at least 16 + len + 16 past the text, so it never overlaps
  ;; it; the output is never longer than the text): its length, or -1 when the string path must decide. Unless `raw`
  ;; (a text shard's line), the text is a JSON string literal's content whose escapes the caller checked: they are
  ;; decoded, and a raw control character is refused (-1). NFC: a starter the tables class as one (1 or 3; with
  ;; `fold`, 3) is kept as it is; a mark (2) right after a character that is no mark is composed with it when the
  ;; composition slots hold the pair (with `fold`, into a starter of class 3); anything else is refused. White space (what `\s` and `trim()` match) is collapsed, each run to one space and none at either
  ;; end; with `fold`, A-Z are lower-cased.
  (func (export "decode") (param $len i32) (param $out i32) (param $fold i32) (param $raw i32) (result i32)
    (call $decodeAt (global.get $TEXT) (local.get $len) (local.get $out) (local.get $fold) (local.get $raw)))

  ;; `decode` of the text at [$at, $at + len).
  (func $decodeAt (param $at i32) (param $len i32) (param $out i32) (param $fold i32) (param $raw i32) (result i32)
    (local $p i32) (local $end i32) (local $o i32) (local $c i32) (local $cp i32) (local $pend i32) (local $n i32) (local $k i32)
    ;; The character written last, as the text had it (before folding), and where it was written: a mark after it
    ;; composes with it. 0 when white space or a composition came last.
    (local $last i32) (local $lasto i32)
    (local $v v128) (local $sp v128) (local $bad v128)
    (local.set $p (local.get $at))
    (local.set $end (i32.add (local.get $at) (local.get $len)))
    (v128.store (local.get $end) (v128.const i8x16 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61 0x61))
    (local.set $o (local.get $out))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        ;; Sixteen bytes at once, copied as they are (with `fold`, A-Z lower-cased) when the steps below would copy
        ;; them so: no white space pending, no control byte, backslash, 0xC2 (U+0080-U+00BF, which holds U+00A0) or
        ;; byte from 0xCC up (with `fold`, nothing beyond ASCII), no two spaces in a row, and no space first when
        ;; nothing is written yet (white space at the start is dropped).
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
                (v128.and
                  (local.get $sp)
                  (v128.or
                    (i8x16.shuffle 16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 (local.get $sp) (v128.const i64x2 0 0))
                    (v128.and
                      (v128.const i8x16 0xff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)
                      (i8x16.splat (i32.sub (i32.const 0) (i32.eq (local.get $o) (local.get $out)))))))))
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
            ;; The bytes before the first bad one are copied ($n of them); a space just before it is left to the
            ;; steps below, since it may start a run. A vector with none bad is copied but for a space or a lead
            ;; byte in its last lane, taken again as the next vector's first: the space may start a run, the
            ;; character ends in the next vector. No character is cut where the copy ends: no continuation byte
            ;; is bad unless its lead is.
            (if (v128.any_true (local.get $bad))
              (then
                (local.set $n (i32.ctz (i8x16.bitmask (local.get $bad))))
                (if (local.get $n)
                  (then
                    (if (i32.eq (i32.load8_u (i32.sub (i32.add (local.get $p) (local.get $n)) (i32.const 1))) (i32.const 0x20))
                      (then (local.set $n (i32.sub (local.get $n) (i32.const 1))))))))
              (else
                (local.set $c (i32.load8_u offset=15 (local.get $p)))
                (local.set $n (i32.sub (i32.const 16) (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.ge_u (local.get $c) (i32.const 0xc0)))))))
            (if (local.get $n)
              (then
                (v128.store (local.get $o) (local.get $v))
                ;; The last character copied, for a mark that may follow: ASCII, or two bytes below U+0300.
                (local.set $c (i32.load8_u (i32.add (local.get $p) (i32.sub (local.get $n) (i32.const 1)))))
                (if (i32.lt_u (local.get $c) (i32.const 0x80))
                  (then
                    (local.set $last (local.get $c))
                    (local.set $lasto (i32.add (local.get $o) (i32.sub (local.get $n) (i32.const 1)))))
                  (else
                    (local.set $last
                      (i32.or
                        (i32.shl (i32.and (i32.load8_u (i32.add (local.get $p) (i32.sub (local.get $n) (i32.const 2)))) (i32.const 0x1f)) (i32.const 6))
                        (i32.and (local.get $c) (i32.const 0x3f))))
                    (local.set $lasto (i32.add (local.get $o) (i32.sub (local.get $n) (i32.const 2))))))
                (local.set $o (i32.add (local.get $o) (local.get $n)))
                (local.set $p (i32.add (local.get $p) (local.get $n)))
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
          ;; A character of two to four bytes.
          (local.set $n (call $width (local.get $c)))
          (if (i32.gt_u (i32.add (local.get $p) (local.get $n)) (local.get $end)) (then (return (i32.const -1))))
          (local.set $cp (call $utf8 (local.get $p) (local.get $n)))
          (local.set $p (i32.add (local.get $p) (local.get $n))))
        (if (call $space (local.get $cp))
          (then
            ;; A run at the start is dropped; one elsewhere becomes a space before the next character, if any.
            (local.set $pend (i32.ne (local.get $o) (local.get $out)))
            (local.set $last (i32.const 0)))
          (else
            (if (local.get $pend)
              (then
                (i32.store8 (local.get $o) (i32.const 0x20))
                (local.set $o (i32.add (local.get $o) (i32.const 1)))
                (local.set $pend (i32.const 0))))
            (if (i32.lt_u (local.get $cp) (i32.const 0x80))
              (then
                (local.set $last (local.get $cp))
                (local.set $lasto (local.get $o))
                (if (i32.and (local.get $fold) (i32.lt_u (i32.sub (local.get $cp) (i32.const 0x41)) (i32.const 26)))
                  (then (local.set $cp (i32.or (local.get $cp) (i32.const 0x20)))))
                (i32.store8 (local.get $o) (local.get $cp))
                (local.set $o (i32.add (local.get $o) (i32.const 1))))
              (else
                (local.set $k (call $class (local.get $cp)))
                (if (i32.eq (local.get $k) (i32.const 2))
                  (then
                    ;; A mark: composed with the character before it into the one NFC makes of them, which then
                    ;; takes that character's place. Refused after white space, at the start, and for a pair the
                    ;; slots do not hold; and after a composition ($last is 0 then), since canonical order and a
                    ;; second composition are the string path's.
                    (if (i32.eqz (local.get $last)) (then (return (i32.const -1))))
                    (local.set $cp (call $compose (local.get $last) (local.get $cp)))
                    (if (i32.lt_s (local.get $cp) (i32.const 0)) (then (return (i32.const -1))))
                    (if (i32.and (local.get $fold) (i32.ne (call $class (local.get $cp)) (i32.const 3))) (then (return (i32.const -1))))
                    (local.set $o (call $emit (local.get $lasto) (local.get $cp)))
                    (local.set $last (i32.const 0)))
                  (else
                    (if (i32.eqz (i32.or (i32.eq (local.get $k) (i32.const 3)) (i32.and (i32.eq (local.get $k) (i32.const 1)) (i32.eqz (local.get $fold)))))
                      (then (return (i32.const -1))))
                    (local.set $last (local.get $cp))
                    (local.set $lasto (local.get $o))
                    (local.set $o (call $emit (local.get $o) (local.get $cp)))))))))
        (br $next)))
    (i32.sub (local.get $o) (local.get $out)))

  ;; The character the escape at `p` (a backslash) stands for, or -1: JSON's escapes, `\u` with four hex digits
  ;; giving a character from U+0001 up that is not a surrogate (NUL is refused by the strict parser; a surrogate
  ;; pair is left to the string path).
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
    (if (i32.or (i32.eqz (local.get $cp)) (i32.eq (i32.and (local.get $cp) (i32.const 0xf800)) (i32.const 0xd800))) (then (return (i32.const -1))))
    (local.get $cp))

  ;; ---- A JSON line, read whole here when it is the common shape ----

  ;; The JSON line at [$TEXT, $TEXT + len), as ./json-text-bytes.ts would read it, narrower: 1 when the line is one
  ;; flat object (no value an object or an array) of at most 32 keys without escapes, none repeated nor one the
  ;; strict reader refuses, whose `text` is a string that `plain` or `decode` answers; its normalised text's
  ;; fingerprint is then written in the state (decoded at `out` first when it is not plain). 0 for anything else,
  ;; which the caller's own scan reads as before: this one never refuses a line, it only declines it.
  (func (export "line") (param $len i32) (param $fold i32) (param $out i32) (result i32)
    (local $p i32) (local $end i32) (local $c i32) (local $k i32) (local $n i32) (local $q i32) (local $keys i32) (local $i i32)
    (local $isText i32) (local $ts i32) (local $te i32) (local $tesc i32)
    (local.set $end (i32.add (global.get $TEXT) (local.get $len)))
    (local.set $ts (i32.const -1))
    (local.set $p (call $ws (global.get $TEXT) (local.get $end)))
    (if (i32.ne (call $at (local.get $p) (local.get $end)) (i32.const 0x7b)) (then (return (i32.const 0))))
    (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
    (loop $member
      ;; The key: no escape (an escaped key could spell one seen unescaped), not refused, not seen before.
      (if (i32.ne (call $at (local.get $p) (local.get $end)) (i32.const 0x22)) (then (return (i32.const 0))))
      (local.set $k (i32.add (local.get $p) (i32.const 1)))
      (local.set $q (call $stringEnd (local.get $k) (local.get $end)))
      (if (i32.or (i32.lt_s (local.get $q) (i32.const 0)) (global.get $escaped)) (then (return (i32.const 0))))
      (local.set $n (i32.sub (local.get $q) (local.get $k)))
      (if (i32.ge_u (local.get $keys) (i32.const 32)) (then (return (i32.const 0))))
      (if (call $forbidden (local.get $k) (local.get $n)) (then (return (i32.const 0))))
      (local.set $i (i32.const 0))
      (block $unique
        (loop $earlier
          (br_if $unique (i32.ge_u (local.get $i) (local.get $keys)))
          (if (i32.eq (i32.load offset=4 (i32.add (global.get $KEYS) (i32.shl (local.get $i) (i32.const 3)))) (local.get $n))
            (then
              (if (call $same (i32.load (i32.add (global.get $KEYS) (i32.shl (local.get $i) (i32.const 3)))) (local.get $k) (local.get $n))
                (then (return (i32.const 0))))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $earlier)))
      (i32.store (i32.add (global.get $KEYS) (i32.shl (local.get $keys) (i32.const 3))) (local.get $k))
      (i32.store offset=4 (i32.add (global.get $KEYS) (i32.shl (local.get $keys) (i32.const 3))) (local.get $n))
      (local.set $keys (i32.add (local.get $keys) (i32.const 1)))
      ;; "text", as a little-endian word.
      (local.set $isText (i32.and (i32.eq (local.get $n) (i32.const 4)) (i32.eq (i32.load (local.get $k)) (i32.const 0x74786574))))
      (local.set $p (call $ws (i32.add (local.get $q) (i32.const 1)) (local.get $end)))
      (if (i32.ne (call $at (local.get $p) (local.get $end)) (i32.const 0x3a)) (then (return (i32.const 0))))
      (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
      ;; The value: a string, a number, true, false or null.
      (local.set $c (call $at (local.get $p) (local.get $end)))
      (if (i32.eq (local.get $c) (i32.const 0x22))
        (then
          (local.set $q (call $stringEnd (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
          (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const 0))))
          (if (local.get $isText)
            (then
              (local.set $ts (i32.add (local.get $p) (i32.const 1)))
              (local.set $te (local.get $q))
              (local.set $tesc (global.get $escaped))))
          (local.set $p (i32.add (local.get $q) (i32.const 1))))
        (else
          ;; (A `text` that is not a string leaves no text found: declined below.)
          (if (i32.or (i32.eq (local.get $c) (i32.const 0x2d)) (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))
            (then (local.set $p (call $numberEnd (local.get $p) (local.get $end))))
            (else (local.set $p (call $wordEnd (local.get $p) (local.get $end)))))
          (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const 0))))))
      (local.set $p (call $ws (local.get $p) (local.get $end)))
      (local.set $c (call $at (local.get $p) (local.get $end)))
      (if (i32.eq (local.get $c) (i32.const 0x2c))
        (then
          (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $end)))
          (br $member)))
      (if (i32.ne (local.get $c) (i32.const 0x7d)) (then (return (i32.const 0)))))
    ;; Nothing but white space after the object, and a text found.
    (if (i32.ne (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $end)) (local.get $end)) (then (return (i32.const 0))))
    (if (i32.lt_s (local.get $ts) (i32.const 0)) (then (return (i32.const 0))))
    ;; The text, whose bytes after it the grammar no longer needs (`plain` and `decode` pad it): hashed where it
    ;; lies when it has no escape and is plain; else decoded, then hashed.
    (local.set $n (i32.sub (local.get $te) (local.get $ts)))
    (if (i32.eqz (local.get $tesc))
      (then
        (local.set $c (call $plainAt (local.get $ts) (local.get $n) (local.get $fold)))
        (if (i32.eq (local.get $c) (i32.const 2)) (then (return (i32.const 0))))
        (if (i32.eq (local.get $c) (i32.const 1))
          (then
            (call $fingerprint (local.get $ts) (local.get $n) (global.get $STATE))
            (return (i32.const 1))))))
    (local.set $n (call $decodeAt (local.get $ts) (local.get $n) (local.get $out) (local.get $fold) (i32.const 0)))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (i32.const 0))))
    (call $fingerprint (local.get $out) (local.get $n) (global.get $STATE))
    (i32.const 1))

  ;; Set by $stringEnd: whether the string it read had an escape.
  (global $escaped (mut i32) (i32.const 0))

  ;; The byte at $p, or 0x100 (which matches nothing) from $end on.
  (func $at (param $p i32) (param $end i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $p) (local.get $end))
      (then (i32.load8_u (local.get $p)))
      (else (i32.const 0x100))))

  ;; The first position from $p that is not JSON white space (space, tab, line feed, carriage return).
  (func $ws (param $p i32) (param $end i32) (result i32)
    (local $c i32)
    (block $done
      (loop $next
        (local.set $c (call $at (local.get $p) (local.get $end)))
        (br_if $done
          (i32.eqz
            (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x09)))
              (i32.or (i32.eq (local.get $c) (i32.const 0x0a)) (i32.eq (local.get $c) (i32.const 0x0d))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $p))

  ;; The closing quote of the string literal whose content starts at $p, or -1: a raw control character, an escape
  ;; `$escape` does not take (it takes JSON's, but no NUL and no surrogate) or no closing quote before $end.
  ;; Sixteen bytes at a time to the next quote, backslash or control byte (the caller leaves 16 bytes after $end
  ;; readable). Sets $escaped.
  (func $stringEnd (param $p i32) (param $end i32) (result i32)
    (local $m i32) (local $c i32) (local $v v128)
    (global.set $escaped (i32.const 0))
    (loop $next
      (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
      (local.set $v (v128.load (local.get $p)))
      (local.set $m
        (i8x16.bitmask
          (v128.or
            (v128.or
              (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
              (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))
            (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))))
      (if (i32.eqz (local.get $m))
        (then
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (br $next)))
      (local.set $p (i32.add (local.get $p) (i32.ctz (local.get $m))))
      ;; A byte past the end is no part of the line (the grammar's next step would decline it too).
      (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (local.get $p))))
      (if (i32.lt_u (local.get $c) (i32.const 0x20)) (then (return (i32.const -1))))
      (global.set $escaped (i32.const 1))
      (if (i32.lt_s (call $escape (local.get $p) (local.get $end)) (i32.const 0)) (then (return (i32.const -1))))
      (local.set $p
        (i32.add (local.get $p) (select (i32.const 6) (i32.const 2) (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 0x75)))))
      (br $next))
    (unreachable))

  ;; The end of the number at $p by JSON's grammar (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), or -1.
  (func $numberEnd (param $p i32) (param $end i32) (result i32)
    (local $c i32)
    (if (i32.eq (call $at (local.get $p) (local.get $end)) (i32.const 0x2d)) (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (local.set $c (call $at (local.get $p) (local.get $end)))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $p (i32.add (local.get $p) (i32.const 1))))
      (else
        (if (i32.ge_u (i32.sub (local.get $c) (i32.const 0x31)) (i32.const 9)) (then (return (i32.const -1))))
        (local.set $p (call $digits (local.get $p) (local.get $end)))))
    (if (i32.eq (call $at (local.get $p) (local.get $end)) (i32.const 0x2e))
      (then
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.ge_u (i32.sub (call $at (local.get $p) (local.get $end)) (i32.const 0x30)) (i32.const 10)) (then (return (i32.const -1))))
        (local.set $p (call $digits (local.get $p) (local.get $end)))))
    ;; e or E (bit 0x20 makes E e; 0x100 past the end stays no letter).
    (if (i32.eq (i32.or (call $at (local.get $p) (local.get $end)) (i32.const 0x20)) (i32.const 0x65))
      (then
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $c (call $at (local.get $p) (local.get $end)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
          (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
        (if (i32.ge_u (i32.sub (call $at (local.get $p) (local.get $end)) (i32.const 0x30)) (i32.const 10)) (then (return (i32.const -1))))
        (local.set $p (call $digits (local.get $p) (local.get $end)))))
    (local.get $p))

  ;; The first position from $p that is not a digit.
  (func $digits (param $p i32) (param $end i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (i32.sub (call $at (local.get $p) (local.get $end)) (i32.const 0x30)) (i32.const 10)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $p))

  ;; The end of `true`, `false` or `null` at $p, or -1 (words as little-endian: "true", "null", "fals").
  (func $wordEnd (param $p i32) (param $end i32) (result i32)
    (local $w i32)
    (if (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)) (then (return (i32.const -1))))
    (local.set $w (i32.load (local.get $p)))
    (if (i32.or (i32.eq (local.get $w) (i32.const 0x65757274)) (i32.eq (local.get $w) (i32.const 0x6c6c756e)))
      (then (return (i32.add (local.get $p) (i32.const 4)))))
    (if (i32.and (i32.eq (local.get $w) (i32.const 0x736c6166)) (i32.eq (call $at (i32.add (local.get $p) (i32.const 4)) (local.get $end)) (i32.const 0x65)))
      (then (return (i32.add (local.get $p) (i32.const 5)))))
    (i32.const -1))

  ;; Whether the key [$k, $k + n) is one of the refused keys the caller wrote at $FORBIDDEN.
  (func $forbidden (param $k i32) (param $n i32) (result i32)
    (local $e i32) (local $count i32) (local $i i32)
    (local.set $count (i32.load8_u (global.get $FORBIDDEN)))
    (local.set $e (i32.add (global.get $FORBIDDEN) (i32.const 1)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (if (i32.eq (i32.load8_u (local.get $e)) (local.get $n))
          (then (if (call $same (i32.add (local.get $e) (i32.const 1)) (local.get $k) (local.get $n)) (then (return (i32.const 1))))))
        (local.set $e (i32.add (local.get $e) (i32.add (i32.load8_u (local.get $e)) (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; Whether [$a, $a + n) and [$b, $b + n) are the same bytes.
  (func $same (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i))) (i32.load8_u (i32.add (local.get $b) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1)))

