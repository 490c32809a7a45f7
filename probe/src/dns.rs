//! The DNS sink's wire format: one question read from a query (RFC 1035 §4.1), one answer
//! written. The query is the package's: every length is checked, compression is refused in
//! the question (no resolver sends it there), and a query that is not exactly understood gets
//! no answer (the client times out: the lookup is still recorded as attempted by the trace).

use std::net::Ipv4Addr;

/// Record type `A`.
pub const TYPE_A: u16 = 1;
/// Class `IN`.
pub const CLASS_IN: u16 = 1;

/// The question of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The query's id.
    pub id: u16,
    /// The name asked, lowercased, without the root dot; a byte that is not printable ASCII
    /// (or is a dot or backslash inside a label) written `\DDD`, as `dig` does (so at most
    /// four times the wire name's 255 bytes).
    pub name: String,
    /// The record type asked.
    pub qtype: u16,
    /// The question's bytes as sent (name, type, class), echoed in the answer.
    pub raw: Vec<u8>,
}

/// The first question of `query`; `None` when it is not a standard query with one.
pub fn parse(query: &[u8]) -> Option<Question> {
    if query.len() < 12 || query.len() > 512 + 4096 {
        return None;
    }
    let id = u16::from_be_bytes([query[0], query[1]]);
    let flags = u16::from_be_bytes([query[2], query[3]]);
    // A query (QR 0) with opcode 0 (standard).
    if flags & 0x8000 != 0 || (flags >> 11) & 0xf != 0 {
        return None;
    }
    if u16::from_be_bytes([query[4], query[5]]) == 0 {
        return None;
    }
    let mut i = 12;
    let mut labels = Vec::new();
    let mut length = 0usize;
    loop {
        let n = *query.get(i)? as usize;
        i += 1;
        if n == 0 {
            break;
        }
        // 0xC0: a compression pointer; 0x40/0x80: reserved label types.
        if n > 63 {
            return None;
        }
        let label = query.get(i..i + n)?;
        length += n + 1;
        if length > 255 {
            return None;
        }
        labels.push(escape(label));
        i += n;
    }
    let qtype = u16::from_be_bytes([*query.get(i)?, *query.get(i + 1)?]);
    let _class = u16::from_be_bytes([*query.get(i + 2)?, *query.get(i + 3)?]);
    Some(Question {
        id,
        name: labels.join("."),
        qtype,
        raw: query[12..i + 4].to_vec(),
    })
}

/// A label as text: printable ASCII lowercased, anything else (and `.`, `\\`) as `\DDD`.
fn escape(label: &[u8]) -> String {
    let mut out = String::with_capacity(label.len());
    for &b in label {
        match b {
            b'.' | b'\\' => out.push_str(&format!("\\{b:03}")),
            0x21..=0x7e => out.push(char::from(b.to_ascii_lowercase())),
            _ => out.push_str(&format!("\\{b:03}")),
        }
    }
    out
}

/// The answer to `q`: `addr` for an `A` question, else no records (NOERROR).
pub fn answer(q: &Question, addr: Option<Ipv4Addr>) -> Vec<u8> {
    let a = addr.filter(|_| q.qtype == TYPE_A);
    let mut out = Vec::with_capacity(12 + q.raw.len() + 16);
    out.extend_from_slice(&q.id.to_be_bytes());
    out.extend_from_slice(&0x8180u16.to_be_bytes()); // response, recursion desired+available
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&u16::from(a.is_some()).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&q.raw);
    if let Some(a) = a {
        out.extend_from_slice(&[0xc0, 0x0c]); // the question's name
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&60u32.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&a.octets());
    }
    out
}

/// The address the sink hands the `n`th name (from 0): `127.128.0.1` onwards.
pub fn address(n: usize) -> Ipv4Addr {
    let n = n + 1;
    Ipv4Addr::new(127, 128, (n >> 8) as u8, (n & 0xff) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query for `exfil.example.` type A, as glibc sends it (with an EDNS record).
    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&CLASS_IN.to_be_bytes());
        q.extend_from_slice(&[0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 0]);
        q
    }

    #[test]
    fn a_question_is_read_and_an_a_record_answered() {
        let q = parse(&query("Exfil.Example", TYPE_A)).unwrap();
        assert_eq!(
            (q.id, q.name.as_str(), q.qtype),
            (0x1234, "exfil.example", 1)
        );
        let a = answer(&q, Some(address(0)));
        assert_eq!(&a[..2], &[0x12, 0x34]);
        assert_eq!(&a[6..8], &[0, 1], "one answer");
        assert_eq!(&a[a.len() - 4..], &[127, 128, 0, 1]);
    }

    #[test]
    fn other_types_get_no_records() {
        let q = parse(&query("exfil.example", 28)).unwrap();
        let a = answer(&q, Some(address(0)));
        assert_eq!(&a[6..8], &[0, 0]);
        assert_eq!(a.len(), 12 + q.raw.len());
    }

    #[test]
    fn malformed_queries_get_no_answer() {
        assert_eq!(parse(&[0; 11]), None);
        let mut response = query("a.example", 1);
        response[2] |= 0x80;
        assert_eq!(parse(&response), None, "a response is not a query");
        let mut pointer = query("a.example", 1);
        pointer[12] = 0xc0;
        assert_eq!(parse(&pointer), None, "no compression in the question");
        let mut short = query("a.example", 1);
        short.truncate(20);
        assert_eq!(parse(&short), None);
        let long = format!("{}.example", "a".repeat(64));
        assert_eq!(parse(&query(&long, 1)), None, "a label over 63 bytes");
    }

    #[test]
    fn bytes_that_are_not_printable_ascii_are_escaped_not_lost() {
        let mut q = query("xx.example", TYPE_A);
        q[13] = 0xff;
        q[14] = b'.';
        assert_eq!(parse(&q).unwrap().name, "\\255\\046.example");
    }

    #[test]
    fn names_get_addresses_of_their_own() {
        assert_eq!(address(0), Ipv4Addr::new(127, 128, 0, 1));
        assert_eq!(address(255), Ipv4Addr::new(127, 128, 1, 0));
        assert_ne!(address(1), address(2));
    }
}
