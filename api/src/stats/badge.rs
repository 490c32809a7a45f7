//! Badges: what a target's badge says ([`Badge::for_target`]), drawn as a small SVG
//! ([`Badge::svg`]) or as a shields.io endpoint answer ([`Badge::shields`]).
//!
//! A target's badge (label `toolmark`) says, first match wins:
//!
//! | state | message | colour | when |
//! |---|---|---|---|
//! | `not-listed` | `not listed` | red | the id names no target, or the target or its server left the registry |
//! | `not-observed` | `not observed` | light grey | listed, but never observed `ok` with a complete tool set (skipped ones included) |
//! | `pinned` | `pinned YYYY-MM-DD` | bright green | a tool set is pinned and no change (of any kind) was ever recorded; the date is the first complete `ok` observation |
//! | `changed` | `changed YYYY-MM-DD` | orange | the newest change was observed within [`CHANGED_DAYS`] days |
//! | `unchanged` | `unchanged Nd` | green | the newest change is older: N whole days since it |
//!
//! Every kind of change counts (tool set, authorization servers, a package's behaviour): a badge
//! never says "pinned" of a server whose authorization server was swapped.
//!
//! The SVG is a [`maud`] template, so every value in it is escaped; the messages are built from
//! dates and numbers only, never from registry text. Widths are computed from the text
//! ([`text_width`]): per-character advance widths approximating Verdana at 11 px (the font the
//! badge names first), wide enough that the text never overflows its box in the fonts a
//! browser falls back to.

use maud::html;
use serde::Serialize;
use toolmark_index::BadgeFacts;

/// A target's badge says `changed <date>` for this many days after its newest change, then
/// `unchanged Nd`.
pub const CHANGED_DAYS: u64 = 7;

/// A checkpoint older than this many seconds turns the `checkpoint` badge yellow: two days,
/// twice the default daily crawl (the API does not read the schedules' configuration).
pub const CHECKPOINT_STALE_SECONDS: u64 = 2 * 86_400;

/// The label of a target's badge.
pub const LABEL: &str = "toolmark";

/// A colour a badge may have: its shields.io name and the hex the SVG fills with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// `brightgreen`, `#4c1`.
    BrightGreen,
    /// `green`, `#97ca00`.
    Green,
    /// `yellow`, `#dfb317`.
    Yellow,
    /// `orange`, `#fe7d37`.
    Orange,
    /// `red`, `#e05d44`.
    Red,
    /// `blue`, `#007ec6`.
    Blue,
    /// `lightgrey`, `#9f9f9f`.
    LightGrey,
}

impl Color {
    /// The shields.io name.
    pub fn name(self) -> &'static str {
        match self {
            Color::BrightGreen => "brightgreen",
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Orange => "orange",
            Color::Red => "red",
            Color::Blue => "blue",
            Color::LightGrey => "lightgrey",
        }
    }

    /// The fill.
    pub fn hex(self) -> &'static str {
        match self {
            Color::BrightGreen => "#4c1",
            Color::Green => "#97ca00",
            Color::Yellow => "#dfb317",
            Color::Orange => "#fe7d37",
            Color::Red => "#e05d44",
            Color::Blue => "#007ec6",
            Color::LightGrey => "#9f9f9f",
        }
    }
}

/// One badge: a label, a message and a colour, and the state it shows (for a target's badge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Badge {
    /// The left part.
    pub label: String,
    /// The right part.
    pub message: String,
    /// The right part's colour.
    pub color: Color,
    /// `pinned`, `unchanged`, `changed`, `not-observed`, `not-listed` (a target's badge), or
    /// the global badge's name.
    pub state: &'static str,
}

/// The shields.io endpoint answer (`https://shields.io/badges/endpoint-badge`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shields {
    /// Always 1.
    pub schema_version: u8,
    /// The label.
    pub label: String,
    /// The message.
    pub message: String,
    /// The colour's shields.io name.
    pub color: &'static str,
    /// How long shields.io may cache it.
    pub cache_seconds: u64,
}

/// How long a badge may be cached (`Cache-Control: public, max-age=…`, shields.io's
/// `cacheSeconds`): an hour, as HISTOR.
pub const BADGE_CACHE_SECONDS: u64 = 3600;

/// The `YYYY-MM-DD` of a log time.
fn date(t: &str) -> &str {
    t.get(..10).unwrap_or(t)
}

/// Seconds since the Unix epoch of a log time (`YYYY-MM-DDTHH:MM:SSZ`).
pub fn unix(t: &str) -> Option<u64> {
    humantime::parse_rfc3339(t)
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

impl Badge {
    /// A target's badge from its facts (`None`: the id names no target) at `now` (Unix
    /// seconds); the table in the module documentation says which.
    pub fn for_target(facts: Option<&BadgeFacts>, now: u64) -> Badge {
        let (message, color, state) = match facts {
            None => ("not listed".to_owned(), Color::Red, "not-listed"),
            Some(f) if f.delisted => ("not listed".to_owned(), Color::Red, "not-listed"),
            Some(f) if !f.pinned => ("not observed".to_owned(), Color::LightGrey, "not-observed"),
            Some(f) => match f.last_change_at.as_deref().filter(|_| f.changes > 0) {
                None => (
                    match f.first_pinned_at.as_deref() {
                        Some(t) => format!("pinned {}", date(t)),
                        None => "pinned".to_owned(),
                    },
                    Color::BrightGreen,
                    "pinned",
                ),
                Some(t) => {
                    let days = unix(t).map_or(0, |at| now.saturating_sub(at) / 86_400);
                    if days < CHANGED_DAYS {
                        (format!("changed {}", date(t)), Color::Orange, "changed")
                    } else {
                        (format!("unchanged {days}d"), Color::Green, "unchanged")
                    }
                }
            },
        };
        Badge {
            label: LABEL.to_owned(),
            message,
            color,
            state,
        }
    }

    /// The shields.io endpoint answer.
    pub fn shields(&self) -> Shields {
        Shields {
            schema_version: 1,
            label: self.label.clone(),
            message: self.message.clone(),
            color: self.color.name(),
            cache_seconds: BADGE_CACHE_SECONDS,
        }
    }

    /// The badge as a standalone SVG document (flat style, 20 px high).
    pub fn svg(&self) -> String {
        let lw = text_width(&self.label) + 2 * PADDING;
        let mw = text_width(&self.message) + 2 * PADDING;
        let w = lw + mw;
        let title = format!("{}: {}", self.label, self.message);
        let markup = html! {
            svg xmlns="http://www.w3.org/2000/svg" width=(w) height="20" viewBox={ "0 0 " (w) " 20" } role="img" aria-label=(title) {
                title { (title) }
                // The message's colour under the whole badge, the label's over its part, its
                // right corners squared; no ids, so badges inlined together cannot clash.
                rect width=(w) height="20" rx="3" fill=(self.color.hex()) {}
                rect width=(lw) height="20" rx="3" fill="#555" {}
                rect x=(lw - 3) width="3" height="20" fill="#555" {}
                g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11" {
                    text x=(half(lw)) y="14" { (self.label) }
                    text x=(half(2 * lw + mw)) y="14" { (self.message) }
                }
            }
        };
        markup.into_string()
    }
}

/// Space on each side of a badge's text, in px.
const PADDING: u32 = 6;

/// `n / 2` with its half, as SVG writes it.
fn half(n: u32) -> String {
    if n % 2 == 0 {
        (n / 2).to_string()
    } else {
        format!("{}.5", n / 2)
    }
}

/// The width in px of `text` at 11 px Verdana, approximated per character (tenths of a px,
/// rounded up to whole px): narrow punctuation and `i l j`, medium `f t r` and space, wide `m w`
/// and capitals `M W`, digits and other capitals, and everything else (non-ASCII included)
/// as a wide lower-case letter.
pub fn text_width(text: &str) -> u32 {
    let tenths: u32 = text
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 35,
            'f' | 't' | 'r' | ' ' | '(' | ')' | '[' | ']' | '-' | 'I' => 45,
            'm' | 'w' | 'M' | 'W' => 100,
            '0'..='9' => 70,
            'A'..='Z' => 76,
            'a'..='z' => 66,
            _ => 80,
        })
        .sum();
    tenths.div_ceil(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(pinned: bool, changes: u64, last: Option<&str>) -> BadgeFacts {
        BadgeFacts {
            delisted: false,
            pinned,
            first_pinned_at: pinned.then(|| "2026-11-30T00:01:00Z".to_owned()),
            changes,
            last_change_at: last.map(str::to_owned),
        }
    }

    const NOW: u64 = 1_796_169_600; // 2026-12-02T00:00:00Z

    #[test]
    fn the_changed_window_ends_after_seven_whole_days() {
        let at = |days_ago: u64| toolmark_index::time::from_unix(NOW - days_ago * 86_400 - 1);
        let b = Badge::for_target(Some(&facts(true, 1, Some(&at(6)))), NOW);
        assert_eq!(b.state, "changed");
        let b = Badge::for_target(Some(&facts(true, 1, Some(&at(7)))), NOW);
        assert_eq!((b.state, b.message.as_str()), ("unchanged", "unchanged 7d"));
    }

    #[test]
    fn widths_grow_with_the_text_and_wide_letters_count_more() {
        assert!(text_width("pinned 2026-11-30") > text_width("not listed"));
        assert!(text_width("mmmm") > text_width("iiii"));
        assert_eq!(text_width(""), 0);
    }
}
