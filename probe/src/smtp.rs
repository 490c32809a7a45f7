//! The SMTP trap's conversation: a server that accepts every command it knows, refuses
//! `STARTTLS` (so the message comes in the clear), and takes the message after `DATA`.

/// What one client line earns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Send this line and go on.
    Line(&'static str),
    /// A recipient, to record; then `250`.
    Recipient(String),
    /// `354`: the message follows, up to a line holding only `.`.
    Data,
    /// `221`, then close.
    Quit,
}

/// The greeting sent first.
pub const GREETING: &str = "220 mail.example ESMTP\r\n";

/// The reply to one command line (without its line ending).
pub fn reply(line: &str) -> Reply {
    let upper = line.to_ascii_uppercase();
    let verb = upper.split_whitespace().next().unwrap_or("");
    match verb {
        "EHLO" => Reply::Line("250-mail.example\r\n250 8BITMIME\r\n"),
        "HELO" | "MAIL" | "RSET" | "NOOP" => Reply::Line("250 OK\r\n"),
        "RCPT" => {
            let rest = &line[line.find(':').map_or(line.len(), |i| i + 1)..];
            let addr = rest
                .trim()
                .trim_start_matches('<')
                .split('>')
                .next()
                .unwrap_or("")
                .to_owned();
            Reply::Recipient(addr)
        }
        "DATA" => Reply::Data,
        "QUIT" => Reply::Quit,
        "STARTTLS" => Reply::Line("454 TLS not available\r\n"),
        _ => Reply::Line("502 Command not implemented\r\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_led_through_a_message() {
        assert!(matches!(reply("EHLO client"), Reply::Line(l) if l.starts_with("250")));
        assert_eq!(reply("MAIL FROM:<a@b>"), Reply::Line("250 OK\r\n"));
        assert_eq!(
            reply("RCPT TO:<boss@outside.example>"),
            Reply::Recipient("boss@outside.example".into())
        );
        assert_eq!(reply("rcpt to: x@y"), Reply::Recipient("x@y".into()));
        assert_eq!(reply("DATA"), Reply::Data);
        assert_eq!(reply("STARTTLS"), Reply::Line("454 TLS not available\r\n"));
        assert_eq!(reply("QUIT"), Reply::Quit);
        assert_eq!(
            reply("VRFY x"),
            Reply::Line("502 Command not implemented\r\n")
        );
    }
}
