//! The raw TCP trap's side of a conversation, for the clients that wait for a server to speak:
//! FTP, POP3 and IMAP (and their TLS ports) wait for a greeting before they send anything, and
//! for an answer to each command before the next. The trap greets them after [`SILENCE`] and
//! accepts every command, so a client logging in sends its password. Other ports get nothing:
//! what their clients send unasked is the payload.

/// How long a raw trap connection stays silent before the trap greets it (a client that
/// speaks first is never greeted) and records what it has read so far (a `progress` record).
pub const SILENCE: std::time::Duration = std::time::Duration::from_millis(300);

/// Longest a raw trap connection that keeps sending goes without a `progress` record of what
/// it sent: a connection held open until the run ends keeps its payload.
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The line protocols the raw trap speaks, by port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialogue {
    /// FTP (21): `220` first, `331` to `USER`, `230` to `PASS`, `221` to `QUIT`, `200` else.
    Ftp,
    /// POP3 (110, 995 after TLS): `+OK` to everything.
    Pop3,
    /// IMAP (143, 993 after TLS): `* OK` first, `TAG OK` to each tagged command.
    Imap,
    /// SSH (22): the server's version line first; nothing after it (the key exchange is
    /// binary: what the client sends is the payload).
    Ssh,
}

impl Dialogue {
    /// The dialogue of a raw trap port (`None`: the trap stays silent).
    pub fn of(port: u16) -> Option<Dialogue> {
        match port {
            21 => Some(Dialogue::Ftp),
            110 | 995 => Some(Dialogue::Pop3),
            143 | 993 => Some(Dialogue::Imap),
            22 => Some(Dialogue::Ssh),
            _ => None,
        }
    }

    /// What the trap says first, to a client silent for [`SILENCE`].
    pub fn greeting(self) -> &'static [u8] {
        match self {
            Dialogue::Ftp => b"220 FTP server ready\r\n",
            Dialogue::Pop3 => b"+OK POP3 server ready\r\n",
            Dialogue::Imap => b"* OK IMAP4rev1 server ready\r\n",
            Dialogue::Ssh => b"SSH-2.0-OpenSSH_9.6\r\n",
        }
    }

    /// The answer to one command line (without its line ending); `None`: no answer.
    pub fn reply(self, line: &[u8]) -> Option<Vec<u8>> {
        let text = String::from_utf8_lossy(line);
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or("").to_ascii_uppercase();
        match self {
            Dialogue::Ftp => Some(
                match first.as_str() {
                    "USER" => "331 Password required\r\n",
                    "PASS" => "230 Logged in\r\n",
                    "QUIT" => "221 Bye\r\n",
                    _ => "200 OK\r\n",
                }
                .into(),
            ),
            Dialogue::Pop3 => Some(b"+OK\r\n".to_vec()),
            Dialogue::Imap => {
                // The tag is the client's own first word; an untagged line gets none.
                (!first.is_empty()).then(|| {
                    let tag = text.split_whitespace().next().unwrap_or("");
                    format!("{tag} OK done\r\n").into_bytes()
                })
            }
            Dialogue::Ssh => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ftp_pop3_and_imap_ports_are_greeted_and_others_are_not() {
        assert_eq!(
            Dialogue::of(21).map(Dialogue::greeting),
            Some(&b"220 FTP server ready\r\n"[..])
        );
        assert!(Dialogue::of(110).unwrap().greeting().starts_with(b"+OK"));
        assert!(Dialogue::of(995).unwrap().greeting().starts_with(b"+OK"));
        assert!(Dialogue::of(143).unwrap().greeting().starts_with(b"* OK"));
        assert!(Dialogue::of(993).unwrap().greeting().starts_with(b"* OK"));
        assert!(
            Dialogue::of(22)
                .unwrap()
                .greeting()
                .starts_with(b"SSH-2.0-")
        );
        for port in [23, 53, 1080, 4444, 6667, 31337] {
            assert_eq!(Dialogue::of(port), None, "{port}");
        }
    }

    #[test]
    fn an_ftp_login_is_asked_its_password_and_accepted() {
        let ftp = Dialogue::Ftp;
        assert_eq!(
            ftp.reply(b"USER anonymous").unwrap(),
            b"331 Password required\r\n"
        );
        assert_eq!(ftp.reply(b"pass secret").unwrap(), b"230 Logged in\r\n");
        assert_eq!(ftp.reply(b"TYPE I").unwrap(), b"200 OK\r\n");
        assert_eq!(ftp.reply(b"QUIT").unwrap(), b"221 Bye\r\n");
    }

    #[test]
    fn pop3_is_accepted_and_imap_answered_with_the_clients_tag() {
        assert_eq!(Dialogue::Pop3.reply(b"PASS secret").unwrap(), b"+OK\r\n");
        assert_eq!(
            Dialogue::Imap.reply(b"a001 LOGIN user secret").unwrap(),
            b"a001 OK done\r\n"
        );
        assert_eq!(Dialogue::Imap.reply(b""), None);
        assert_eq!(Dialogue::Ssh.reply(b"anything"), None);
    }
}
