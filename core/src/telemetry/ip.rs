//! Host syntax for the privacy filter: WHATWG-style IPv4 parsing (decimal, hex, octal and
//! short forms such as `2130706433`, `0x7f000001`, `0177.1`, `127.1`), IPv6 serialisation
//! as URL parsers write it, and the address ranges that must never be reported.

use super::host::BlockReason;
use std::net::{Ipv4Addr, Ipv6Addr};

/// WHATWG "IPv4 number parser": `0x`/`0X` → hex, a leading `0` → octal, else decimal.
/// Values too large for `u64` saturate (they fail the range checks later anyway).
fn ipv4_number(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if s.len() >= 2 && (s.starts_with("0x") || s.starts_with("0X")) {
        (&s[2..], 16)
    } else if s.len() >= 2 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix)?;
        n = n
            .saturating_mul(u64::from(radix))
            .saturating_add(u64::from(d));
    }
    Some(n)
}

/// WHATWG "ends in a number checker": whether a host must be parsed as IPv4.
pub(crate) fn ends_in_number(host: &str) -> bool {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") {
        if parts.len() == 1 {
            return false;
        }
        parts.pop();
    }
    let last = parts.last().copied().unwrap_or("");
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())) || ipv4_number(last).is_some()
}

/// WHATWG "IPv4 parser": `None` where a browser would reject the URL.
pub(crate) fn parse_ipv4(host: &str) -> Option<Ipv4Addr> {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.len() > 4 {
        return None;
    }
    let numbers = parts
        .iter()
        .map(|p| ipv4_number(p))
        .collect::<Option<Vec<u64>>>()?;
    let (last, init) = numbers.split_last()?;
    if init.iter().any(|&n| n > 255) || *last >= 256u64.pow(5 - numbers.len() as u32) {
        return None;
    }
    let mut v = *last;
    for (i, &n) in init.iter().enumerate() {
        v += n << (8 * (3 - i));
    }
    u32::try_from(v).ok().map(Ipv4Addr::from)
}

/// IPv6 text as a URL parser writes it: lowercase hex, no leading zeros, the first longest
/// run of two or more zero pieces written `::`, no dotted-quad tail, inside brackets.
pub(crate) fn serialize_ipv6(a: Ipv6Addr) -> String {
    let s = a.segments();
    let (mut best, mut best_len, mut i) = (None, 1, 0);
    while i < 8 {
        if s[i] == 0 {
            let start = i;
            while i < 8 && s[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                best = Some(start);
                best_len = i - start;
            }
        } else {
            i += 1;
        }
    }
    let hex = |r: &[u16]| {
        r.iter()
            .map(|p| format!("{p:x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    match best {
        Some(b) => format!("[{}::{}]", hex(&s[..b]), hex(&s[b + best_len..])),
        None => format!("[{}]", hex(&s)),
    }
}

/// Cloud metadata endpoints reached by address: AWS/GCP/Azure/OpenStack `169.254.169.254`,
/// ECS `169.254.170.2`, EKS pod identity `169.254.170.23`, Alibaba `100.100.100.200`,
/// Oracle `192.0.0.192`.
const METADATA_V4: [[u8; 4]; 5] = [
    [169, 254, 169, 254],
    [169, 254, 170, 2],
    [169, 254, 170, 23],
    [100, 100, 100, 200],
    [192, 0, 0, 192],
];

/// AWS IMDS and EKS pod identity over IPv6: `fd00:ec2::254`, `fd00:ec2::23`.
const METADATA_V6: [[u16; 8]; 2] = [
    [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
    [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23],
];

/// Why an IPv4 address must not be reported, or `None` for a public address.
pub(crate) fn classify_v4(a: Ipv4Addr) -> Option<BlockReason> {
    let o = a.octets();
    if METADATA_V4.contains(&o) {
        return Some(BlockReason::Metadata);
    }
    Some(match o {
        [0, ..] => BlockReason::Unspecified,
        [127, ..] => BlockReason::Loopback,
        [10, ..] | [192, 168, ..] => BlockReason::Private,
        [172, b, ..] if (16..=31).contains(&b) => BlockReason::Private,
        [169, 254, ..] => BlockReason::LinkLocal,
        [100, b, ..] if (64..=127).contains(&b) => BlockReason::Cgnat,
        // IETF assignments, documentation and benchmarking ranges, multicast, class E, broadcast.
        [192, 0, 0, _] | [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => {
            BlockReason::Reserved
        }
        [198, 18 | 19, ..] => BlockReason::Reserved,
        [a, ..] if a >= 224 => BlockReason::Reserved,
        _ => return None,
    })
}

fn v4_from(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
}

/// Why an IPv6 address must not be reported, or `None` for a public address. Addresses
/// that embed an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, translated
/// `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that address.
/// Teredo (`2001::/32`) is reported: it names a public relay and obfuscates the client.
pub(crate) fn classify_v6(a: Ipv6Addr) -> Option<BlockReason> {
    let s = a.segments();
    if METADATA_V6.contains(&s) {
        return Some(BlockReason::Metadata);
    }
    if a.is_unspecified() {
        return Some(BlockReason::Unspecified);
    }
    if a == Ipv6Addr::LOCALHOST {
        return Some(BlockReason::Loopback);
    }
    let embedded = match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo]
        | [0, 0, 0, 0, 0, 0, hi, lo]
        | [0, 0, 0, 0, 0xffff, 0, hi, lo] => Some(v4_from(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4_from(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4_from(hi, lo)),
        _ => None,
    };
    if let Some(v4) = embedded {
        return classify_v4(v4);
    }
    Some(match s[0] {
        0x64 if s[1] == 0xff9b && s[2] == 1 => BlockReason::Private,
        p if p & 0xfe00 == 0xfc00 => BlockReason::UniqueLocal,
        p if p & 0xffc0 == 0xfe80 => BlockReason::LinkLocal,
        p if p & 0xffc0 == 0xfec0 => BlockReason::Private,
        p if p & 0xff00 == 0xff00 => BlockReason::Reserved,
        0x2001 if s[1] == 0xdb8 => BlockReason::Reserved,
        0x100 if s[1..4] == [0, 0, 0] => BlockReason::Reserved,
        _ => return None,
    })
}
