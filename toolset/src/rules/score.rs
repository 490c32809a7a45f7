//! The learned score: a linear model over the words and character n-grams of a tool's texts,
//! trained on the labelled corpus (`scripts/train-scorer`), published with the rule set.
//!
//! A tool's features are counted over the texts the pattern rules read (the same walk), each
//! [`super::fold`]ed, at most [`SCORE_MAX_CHARS`] folded characters of one tool in all:
//! * every word (a run of alphanumeric characters, at most [`WORD_MAX_CHARS`] of it read);
//! * every pair of adjacent words of one text;
//! * every run of 3, 4 and 5 characters of a word with a space before and after it.
//!
//! Each feature is hashed (64-bit FNV-1a over a kind byte and its UTF-8 bytes) into one of
//! [`DIM`] buckets. A bucket's value is `(1 + ln count) × idf`, the vector is scaled to unit
//! length, and the score is the bias plus its dot product with the weights. Buckets the
//! training data held fewer than twice carry no idf and are not counted at all, as a
//! vocabulary would leave them out. The model (idf and weight of every bucket, the bias, the
//! threshold) is data: its digest is part of the rule set's digest.

/// Feature buckets (2^16).
pub const DIM: usize = 1 << 16;

/// Folded characters of one tool (or the instructions) the features are counted over.
pub const SCORE_MAX_CHARS: usize = 32_768;

/// Original characters of one tool the features are read from (each text's first
/// `FIELD_MAX_CHARS` counted): what bounds the folding of texts that fold to little, such as
/// runs of spaces.
pub const SCORE_MAX_RAW_CHARS: usize = 4 * SCORE_MAX_CHARS;

/// Words of prose (texts other than names, of two words or more with a space between words: not
/// the tool's name, member names, a string read as a name, a type, an enum value, a URL) a tool
/// must hold for the learned score to read it: a name and a few words say too little
/// (`send_email`, "Does a thing." reads as the exfiltration it could serve; `add`, "Adds two
/// numbers.", `a`, `b` as the poisoning demos built on it).
pub const SCORE_MIN_WORDS: usize = 4;

/// Characters of one word read for its features.
pub const WORD_MAX_CHARS: usize = 40;

/// How a tool's features are counted and scored, as published in the rule-set document.
pub const FEATURES: &str = "The learned score reads each tool (not the instructions): every \
text the pattern rules read, in their order, folded as they read it (its first fieldMaxChars \
characters), at most maxChars folded and maxRawChars original characters of the tool in all (a \
text past the latter cut to it; a tool met after the scan's setMaxChars budget is spent is not \
scored); a tool of fewer than minWords words in texts of prose is not scored: texts not \
read as names, of two words or more with a space between words or of four characters or more \
of Han, Hiragana, Katakana, Thai, Lao, Myanmar or Khmer (U+3400-4DBF, 4E00-9FFF, F900-FAFF, \
3040-30FF, 0E00-0EFF, 1000-109F, 1780-17FF), each two of which count as a word more. Words are runs of alphanumeric characters (the first \
wordMaxChars of each are read). Features: each word (kind byte 'w'), each pair of adjacent \
words of one text joined by a space ('p'), each run of 3, 4 and 5 characters of the word with \
a space before and after it ('c'). A feature's bucket is the 64-bit FNV-1a hash of its kind \
byte then its UTF-8 bytes, modulo buckets. A bucket's value is (1 + ln count) * idf, for the \
buckets with an idf (the model's byte / 16; 0: none, the bucket not counted); the vector is \
scaled to unit length; the score is its dot product with the weights (the model's i16 times \
its scale) plus the bias. A tool scoring above the threshold gets one match, on the text whose \
features make the most of the score (each bucket's term shared by the counts), spanning the \
first fieldMaxChars characters of that text.";

/// Whether `c` is of a script written without spaces between words: Han, Hiragana, Katakana,
/// Thai, Lao, Myanmar, Khmer.
pub fn is_unspaced(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}'
        | '\u{3040}'..='\u{30FF}' | '\u{0E00}'..='\u{0EFF}' | '\u{1000}'..='\u{109F}'
        | '\u{1780}'..='\u{17FF}')
}

/// The kinds of feature, the first byte hashed.
const WORD: u8 = b'w';
const PAIR: u8 = b'p';
const GRAM: u8 = b'c';

fn fnv1a(kind: u8, parts: &[&[u8]]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for &b in std::iter::once(&kind).chain(parts.iter().flat_map(|p| p.iter())) {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

fn bucket(kind: u8, parts: &[&[u8]]) -> u32 {
    // DIM is a power of two below 2^32: the low bits, as u32.
    (fnv1a(kind, parts) & (DIM as u64 - 1)) as u32
}

/// The features of one tool's texts, as buckets: what [`Counter::text`] was given.
#[derive(Debug, Default, Clone)]
pub struct Counter {
    /// Every feature's bucket, in the order met (a bucket once per occurrence).
    buckets: Vec<u32>,
    words: usize,
    /// Folded characters still to read.
    left: usize,
    padded: String,
    bounds: Vec<usize>,
}

impl Counter {
    /// A counter with the whole [`SCORE_MAX_CHARS`] to read.
    pub fn new() -> Counter {
        Counter::with_budget(SCORE_MAX_CHARS)
    }

    /// A counter that reads at most `chars` folded characters.
    pub fn with_budget(chars: usize) -> Counter {
        Counter {
            left: chars,
            ..Counter::default()
        }
    }

    /// Count the features of one folded text (as [`super::fold`] gives it), its words counted
    /// towards [`SCORE_MIN_WORDS`].
    pub fn text(&mut self, folded: &str) {
        self.text_as(folded, true);
    }

    /// [`Counter::text`], its words counted towards [`SCORE_MIN_WORDS`] only when `prose` (a
    /// name's words are not: they say what the tool is, not what it tells the model) and the
    /// text is prose: two words or more with a space between words (not a type, an enum value,
    /// a URL, a property name listed as `required`), or four characters or more of scripts
    /// written without spaces ([`is_unspaced`]: Han, kana, Thai…), each two of which count as a
    /// word more.
    pub fn text_as(&mut self, folded: &str, prose: bool) {
        let (words, unspaced) = self.count(folded);
        if prose && ((words >= 2 && folded.contains(' ')) || unspaced >= 4) {
            self.words += words + unspaced / 2;
        }
    }

    /// Count the features of `folded` within the budget; returns its words read, and its
    /// characters read of scripts written without spaces.
    fn count(&mut self, folded: &str) -> (usize, usize) {
        let (mut words, mut unspaced) = (0, 0);
        let mut previous: Option<(usize, usize)> = None;
        let mut chars = folded.char_indices().peekable();
        while self.left > 0 {
            // Skip to the next word.
            while chars.next_if(|(_, c)| !c.is_alphanumeric()).is_some() {
                self.left -= 1;
                if self.left == 0 {
                    return (words, unspaced);
                }
            }
            let Some(&(start, _)) = chars.peek() else {
                return (words, unspaced);
            };
            let mut read_end = start;
            let mut n = 0;
            while self.left > 0
                && let Some((i, c)) = chars.next_if(|(_, c)| c.is_alphanumeric())
            {
                self.left -= 1;
                unspaced += usize::from(is_unspaced(c));
                if n < WORD_MAX_CHARS {
                    read_end = i + c.len_utf8();
                    n += 1;
                }
            }
            let word = &folded[start..read_end];
            words += 1;
            self.buckets.push(bucket(WORD, &[word.as_bytes()]));
            if let Some((ps, pe)) = previous {
                let pair = [&folded.as_bytes()[ps..pe], b" ", word.as_bytes()];
                self.buckets.push(bucket(PAIR, &pair));
            }
            self.grams_of_word(word);
            previous = Some((start, read_end));
        }
        (words, unspaced)
    }

    /// The 3-, 4- and 5-character runs of ` word `.
    fn grams_of_word(&mut self, word: &str) {
        self.padded.clear();
        self.padded.push(' ');
        self.padded.push_str(word);
        self.padded.push(' ');
        self.bounds.clear();
        self.bounds
            .extend(self.padded.char_indices().map(|(i, _)| i));
        self.bounds.push(self.padded.len());
        let chars = self.bounds.len() - 1;
        let bytes = self.padded.as_bytes();
        for n in 3..=5 {
            for start in 0..(chars + 1).saturating_sub(n) {
                let gram = &bytes[self.bounds[start]..self.bounds[start + n]];
                self.buckets.push(bucket(GRAM, &[gram]));
            }
        }
    }

    /// Every feature's bucket, in the order met.
    pub fn buckets(&self) -> &[u32] {
        &self.buckets
    }

    /// The words counted towards [`SCORE_MIN_WORDS`].
    pub fn words(&self) -> usize {
        self.words
    }

    /// Folded characters still to read.
    pub fn left(&self) -> usize {
        self.left
    }

    /// The count of every bucket met, sorted by bucket.
    pub fn counts(&self) -> Vec<(u32, u32)> {
        let mut sorted = self.buckets.clone();
        sorted.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::new();
        for b in sorted {
            match out.last_mut() {
                Some((last, n)) if *last == b => *n += 1,
                _ => out.push((b, 1)),
            }
        }
        out
    }
}

/// A tool's feature counts summed text by text, in a table of [`DIM`] counts kept between
/// tools (and the buckets met), for [`Tally::score`].
#[derive(Debug, Default)]
pub struct Tally {
    counts: Vec<u32>,
    touched: Vec<u32>,
}

impl Tally {
    /// The counts table (made at first use) and the buckets met.
    fn table(&mut self) -> (&mut [u32], &mut Vec<u32>) {
        if self.counts.len() != DIM {
            self.counts = vec![0; DIM];
        }
        (&mut self.counts, &mut self.touched)
    }

    /// Add the buckets of `counter` that have an idf in `model`.
    pub fn add(&mut self, model: &Model, counter: &Counter) {
        self.add_each(
            counter
                .buckets()
                .iter()
                .copied()
                .filter(|&b| model.has_idf(b)),
        );
    }

    /// Add buckets as [`Model::with_idf`] gave them: the same as adding the counter they came
    /// from.
    pub fn add_buckets(&mut self, buckets: &[u32]) {
        self.add_each(buckets.iter().copied());
    }

    fn add_each(&mut self, buckets: impl Iterator<Item = u32>) {
        let (counts, touched) = self.table();
        for b in buckets {
            let c = &mut counts[b as usize];
            if *c == 0 {
                touched.push(b);
            }
            *c += 1;
        }
    }

    /// The score of what was added, which is then taken away (the tally is left empty). The
    /// sums run in the order the buckets were first added: the score depends on the texts added
    /// and their order alone.
    pub fn score(&mut self, model: &Model) -> f64 {
        let (mut dot, mut norm) = (0.0, 0.0);
        for &b in &self.touched {
            let c = std::mem::take(&mut self.counts[b as usize]);
            if let Some((idf, w)) = model.bucket(b) {
                let v = log_tf(c) * idf;
                norm += v * v;
                dot += v * w;
            }
        }
        self.touched.clear();
        if norm == 0.0 {
            model.bias
        } else {
            dot / norm.sqrt() + model.bias
        }
    }
}

/// `1 + ln count`, from a table for the counts met most.
fn log_tf(count: u32) -> f64 {
    static TABLE: std::sync::LazyLock<[f64; 256]> =
        std::sync::LazyLock::new(|| std::array::from_fn(|c| 1.0 + (c.max(1) as f64).ln()));
    TABLE
        .get(count as usize)
        .copied()
        .unwrap_or_else(|| 1.0 + f64::from(count).ln())
}

/// The model as published: the `toolmark-score/1` bytes of `score-model.bin`.
pub const MODEL_BYTES: &[u8] = include_bytes!("score-model.bin");

const MAGIC: &[u8] = b"toolmark-score/1\n";

/// A parsed model.
#[derive(Debug)]
pub struct Model {
    idf: Box<[u8]>,
    weights: Box<[i16]>,
    scale: f64,
    bias: f64,
    /// Scores above this flag a tool.
    pub threshold: f64,
}

/// Why model bytes do not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    /// Not `toolmark-score/1` bytes of [`DIM`] buckets.
    #[error("not a toolmark-score/1 model of {DIM} buckets ({0} bytes)")]
    Shape(usize),
}

fn f32_at(bytes: &[u8], at: usize) -> f64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    f64::from(f32::from_le_bytes(b))
}

impl Model {
    /// Parse `toolmark-score/1` bytes.
    pub fn parse(bytes: &[u8]) -> Result<Model, ModelError> {
        let head = MAGIC.len() + 16;
        let bad = || ModelError::Shape(bytes.len());
        if bytes.len() != head + 3 * DIM || !bytes.starts_with(MAGIC) {
            return Err(bad());
        }
        let mut dim = [0u8; 4];
        dim.copy_from_slice(&bytes[MAGIC.len()..MAGIC.len() + 4]);
        if u32::from_le_bytes(dim) as usize != DIM {
            return Err(bad());
        }
        let [scale, bias, threshold] = [4, 8, 12].map(|o| f32_at(bytes, MAGIC.len() + o));
        if ![scale, bias, threshold].iter().all(|v| v.is_finite()) {
            return Err(bad());
        }
        let idf = bytes[head..head + DIM].into();
        let weights = bytes[head + DIM..]
            .chunks_exact(2)
            .map(|w| i16::from_le_bytes([w[0], w[1]]))
            .collect();
        Ok(Model {
            idf,
            weights,
            scale,
            bias,
            threshold,
        })
    }

    /// A bucket's `(idf, weight)`; `None` when it has no idf.
    fn bucket(&self, b: u32) -> Option<(f64, f64)> {
        let i = b as usize;
        let idf = *self.idf.get(i)?;
        (idf > 0).then(|| {
            (
                f64::from(idf) / 16.0,
                f64::from(self.weights[i]) * self.scale,
            )
        })
    }

    /// The score of a tool's features.
    pub fn score(&self, counter: &Counter) -> f64 {
        let mut tally = Tally::default();
        tally.add(self, counter);
        tally.score(self)
    }

    /// The buckets of `counter` that have an idf, in order: what [`Tally::add`] adds of it.
    pub fn with_idf(&self, counter: &Counter) -> Vec<u32> {
        counter
            .buckets()
            .iter()
            .copied()
            .filter(|&b| self.has_idf(b))
            .collect()
    }

    /// Whether bucket `b` has an idf (is counted at all).
    fn has_idf(&self, b: u32) -> bool {
        self.idf[b as usize] != 0
    }

    /// What each bucket of `whole` gives its score, per occurrence: `(bucket, term / count)`
    /// sorted by bucket, the term being the bucket's share of the dot product over the vector's
    /// length. [`Shares::of`] then says how much of the score one of its texts makes.
    pub fn shares(&self, whole: &Counter) -> Shares {
        // (bucket, count, value, weight) of the buckets with an idf.
        let values: Vec<(u32, u32, f64, f64)> = whole
            .counts()
            .into_iter()
            .filter_map(|(b, c)| {
                let (idf, w) = self.bucket(b)?;
                Some((b, c, log_tf(c) * idf, w))
            })
            .collect();
        let norm = values.iter().map(|v| v.2 * v.2).sum::<f64>().sqrt();
        if norm == 0.0 {
            return Shares(Vec::new());
        }
        Shares(
            values
                .into_iter()
                .map(|(b, c, v, w)| (b, v * w / f64::from(c) / norm))
                .collect(),
        )
    }
}

/// A tool's score shared out by bucket occurrence ([`Model::shares`]).
#[derive(Debug, Clone)]
pub struct Shares(Vec<(u32, f64)>);

impl Shares {
    /// How much of the tool's score the features of `part` (one of its texts) make.
    pub fn of(&self, part: &Counter) -> f64 {
        part.counts()
            .into_iter()
            .filter_map(|(b, mine)| {
                let at = self.0.binary_search_by_key(&b, |s| s.0).ok()?;
                Some(self.0[at].1 * f64::from(mine))
            })
            .sum()
    }
}

/// The published model, parsed at first use.
pub static MODEL: std::sync::LazyLock<Model> = std::sync::LazyLock::new(|| {
    Model::parse(MODEL_BYTES).expect("score-model.bin is a toolmark-score/1 model")
});
