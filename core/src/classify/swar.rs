//! Byte searches many bytes at a time, in safe code: string bodies 32 bytes a block with
//! SSE2 on x86_64 (through `safe_arch`), everything else eight bytes a word (SWAR: SIMD
//! within a register).
//!
//! The classic bit tricks flag a byte by setting its high bit. A borrow can only flag a
//! byte *above* a truly matching one, so the lowest flagged byte is always a real match.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes of `c` (exactly 8 long) as a little-endian word.
#[inline(always)]
pub(super) fn word(c: &[u8]) -> u64 {
    u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
}

#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(LO) & !x & HI
}

/// Flags `"`, `\` and control bytes (< 0x20): where a JSON string body stops.
#[inline(always)]
pub(super) fn special(x: u64) -> u64 {
    zero_bytes(x ^ (LO * u64::from(b'"')))
        | zero_bytes(x ^ (LO * u64::from(b'\\')))
        | (x.wrapping_sub(LO * 0x20) & !x & HI)
}

/// One bit per byte of a 32-byte block (bit `k` for byte `k`) that may be `"`, `\\` or a
/// control byte. Every such byte is flagged. The word-at-a-time fallback may also flag the
/// byte just above a real one (a borrow), so callers look at the byte.
#[inline(always)]
pub(super) fn special_bits(block: &[u8; 32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::special_bits(block)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        special_bits_by_words(block)
    }
}

/// [`special_bits`] a word at a time, for targets without SSE2.
#[cfg(any(not(target_arch = "x86_64"), test))]
#[inline(always)]
fn special_bits_by_words(block: &[u8; 32]) -> u32 {
    let mut bits = 0;
    for (k, c) in block.chunks_exact(8).enumerate() {
        // The high bit of each flagged byte, packed into 8 bits.
        let m = (special(word(c)) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        bits |= (m as u32) << (8 * k);
    }
    bits
}

/// Sixteen bytes per compare, exact.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use safe_arch::{
        bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, min_u8_m128i, move_mask_i8_m128i,
        set_splat_i8_m128i,
    };

    #[inline(always)]
    fn half(c: &[u8; 16]) -> u32 {
        let x = load_unaligned_m128i(c);
        let quote = cmp_eq_mask_i8_m128i(x, set_splat_i8_m128i(b'"' as i8));
        let backslash = cmp_eq_mask_i8_m128i(x, set_splat_i8_m128i(b'\\' as i8));
        // x <= 0x1f (unsigned) exactly when min(x, 0x1f) == x.
        let control = cmp_eq_mask_i8_m128i(min_u8_m128i(x, set_splat_i8_m128i(0x1f)), x);
        move_mask_i8_m128i(bitor_m128i(bitor_m128i(quote, backslash), control)) as u32
    }

    #[inline(always)]
    pub(super) fn special_bits(block: &[u8; 32]) -> u32 {
        let (lo, hi) = block.split_at(16);
        match (lo.try_into(), hi.try_into()) {
            (Ok(lo), Ok(hi)) => half(lo) | (half(hi) << 16),
            // Never taken (two halves of 16); flagging every byte would still be correct.
            _ => u32::MAX,
        }
    }
}

/// Flags `\n`.
#[inline(always)]
fn newline(x: u64) -> u64 {
    zero_bytes(x ^ (LO * u64::from(b'\n')))
}

/// First index at or after `i` whose byte `mask` flags (`is` decides single bytes).
#[inline(always)]
fn find(b: &[u8], i: usize, mask: impl Fn(u64) -> u64, is: impl Fn(u8) -> bool) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    // Dense hits (escapes in text) are usually close: look at one word first.
    if let Some(c) = rest.get(..8) {
        let m = mask(word(c));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
    } else {
        return i + rest.iter().position(|&c| is(c)).unwrap_or(rest.len());
    }
    // Then 32 bytes a round while nothing is there, so long strings and lines go fast; a
    // hit is resolved from the masks already computed, without scanning the round again.
    let mut at = 8;
    for c in rest[8..].chunks_exact(32) {
        let m = [
            mask(word(&c[..8])),
            mask(word(&c[8..16])),
            mask(word(&c[16..24])),
            mask(word(&c[24..])),
        ];
        if m[0] | m[1] | m[2] | m[3] != 0 {
            let (k, m) = if m[0] != 0 {
                (0, m[0])
            } else if m[1] != 0 {
                (8, m[1])
            } else if m[2] != 0 {
                (16, m[2])
            } else {
                (24, m[3])
            };
            return i + at + k + (m.trailing_zeros() / 8) as usize;
        }
        at += 32;
    }
    for c in rest[at..].chunks_exact(8) {
        let m = mask(word(c));
        if m != 0 {
            return i + at + (m.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    i + at
        + rest[at..]
            .iter()
            .position(|&c| is(c))
            .unwrap_or(rest.len() - at)
}

/// Index of the first `\n` in `b`.
#[inline]
pub(super) fn find_newline(b: &[u8]) -> Option<usize> {
    let i = find(b, 0, newline, |c| c == b'\n');
    (i < b.len()).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find_special(b: &[u8], i: usize) -> usize {
        find(b, i, special, |c| matches!(c, b'"' | b'\\' | 0..=0x1f))
    }

    #[test]
    fn finds_bytes_at_every_offset() {
        for len in [7, 8, 31, 32, 33, 70] {
            for pos in 0..len {
                let mut v = vec![b'a'; len];
                assert_eq!((find_special(&v, 0), find_newline(&v)), (len, None));
                for (hit, special) in [
                    (b'"', true),
                    (b'\\', true),
                    (0x1f, true),
                    (b'\n', true),
                    (0xe9, false),
                    (b' ', false),
                    (0x8a, false),
                ] {
                    v[pos] = hit;
                    assert_eq!(
                        find_special(&v, 0),
                        if special { pos } else { len },
                        "{hit:#x} at {pos} of {len}"
                    );
                    assert_eq!(
                        find_newline(&v),
                        (hit == b'\n').then_some(pos),
                        "{hit:#x} at {pos} of {len}"
                    );
                }
                v[pos] = 0x01;
                v[len - 1] = b'"';
                assert_eq!(find_special(&v, 0), pos, "first of two at {pos}");
            }
        }
    }

    #[test]
    fn block_bits_flag_every_special_byte() {
        for byte in 0..=255u8 {
            let is_special = matches!(byte, b'"' | b'\\' | 0..=0x1f);
            for pos in 0..32 {
                let mut block = [b'a'; 32];
                block[pos] = byte;
                let by_words = special_bits_by_words(&block);
                assert_eq!(
                    special_bits(&block),
                    u32::from(is_special) << pos,
                    "{byte:#x} at {pos}"
                );
                assert_eq!(by_words & (1 << pos) != 0, is_special, "{byte:#x} at {pos}");
                // Word at a time, a borrow may flag the byte just above a real one.
                assert_eq!(by_words & !(0b11 << pos), 0, "{byte:#x} at {pos}");
            }
        }
        let every = [b'"'; 32];
        assert_eq!(
            (special_bits(&every), special_bits_by_words(&every)),
            (u32::MAX, u32::MAX)
        );
    }
}
