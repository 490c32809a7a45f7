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

use std::collections::HashMap;

/// Feature buckets (2^18).
pub const DIM: usize = 1 << 18;

/// Folded characters of one tool (or the instructions) the features are counted over.
pub const SCORE_MAX_CHARS: usize = 32_768;

/// Characters of one word read for its features.
pub const WORD_MAX_CHARS: usize = 40;

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

/// The feature counts of one tool's texts, by bucket: what [`Counter::text`] was given.
#[derive(Debug, Default, Clone)]
pub struct Counter {
    counts: HashMap<u32, u32>,
    /// Folded characters still to read.
    left: usize,
    word: String,
    grams: Vec<usize>,
}

impl Counter {
    /// A counter with the whole [`SCORE_MAX_CHARS`] to read.
    pub fn new() -> Counter {
        Counter {
            left: SCORE_MAX_CHARS,
            ..Counter::default()
        }
    }

    /// Count the features of one folded text (as [`super::fold`] gives it).
    pub fn text(&mut self, folded: &str) {
        let mut previous: Option<String> = None;
        let mut chars = folded.chars().peekable();
        while self.left > 0 {
            // Skip to the next word.
            while chars.next_if(|c| !c.is_alphanumeric()).is_some() {
                self.left = self.left.saturating_sub(1);
            }
            if chars.peek().is_none() || self.left == 0 {
                break;
            }
            self.word.clear();
            let mut n = 0;
            while let Some(c) = chars.next_if(|c| c.is_alphanumeric()) {
                self.left = self.left.saturating_sub(1);
                if n < WORD_MAX_CHARS {
                    self.word.push(c);
                    n += 1;
                }
            }
            *self.counts.entry(bucket(WORD, &[self.word.as_bytes()])).or_default() += 1;
            if let Some(p) = &previous {
                let b = bucket(PAIR, &[p.as_bytes(), b" ", self.word.as_bytes()]);
                *self.counts.entry(b).or_default() += 1;
            }
            self.grams_of_word();
            previous = Some(std::mem::take(&mut self.word));
        }
    }

    /// The 3-, 4- and 5-character runs of ` word `.
    fn grams_of_word(&mut self) {
        let padded = format!(" {} ", self.word);
        self.grams.clear();
        self.grams.extend(padded.char_indices().map(|(i, _)| i));
        self.grams.push(padded.len());
        let chars = self.grams.len() - 1;
        for n in 3..=5 {
            for start in 0..(chars + 1).saturating_sub(n) {
                let gram = &padded.as_bytes()[self.grams[start]..self.grams[start + n]];
                *self.counts.entry(bucket(GRAM, &[gram])).or_default() += 1;
            }
        }
    }

    /// A counter that reads at most `chars` folded characters.
    pub fn with_budget(chars: usize) -> Counter {
        Counter {
            left: chars,
            ..Counter::default()
        }
    }

    /// Folded characters still to read.
    pub fn left(&self) -> usize {
        self.left
    }

    /// The counts, sorted by bucket.
    pub fn counts(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = self.counts.iter().map(|(&b, &c)| (b, c)).collect();
        v.sort_unstable();
        v
    }
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
        (idf > 0).then(|| (f64::from(idf) / 16.0, f64::from(self.weights[i]) * self.scale))
    }

    /// The values of `counter`'s buckets that have an idf: `(bucket, value, weight)`, and the
    /// vector's length.
    fn values(&self, counter: &Counter) -> (Vec<(u32, f64, f64)>, f64) {
        let mut norm = 0.0;
        let values: Vec<(u32, f64, f64)> = counter
            .counts()
            .into_iter()
            .filter_map(|(b, c)| {
                let (idf, w) = self.bucket(b)?;
                let v = (1.0 + f64::from(c).ln()) * idf;
                norm += v * v;
                Some((b, v, w))
            })
            .collect();
        (values, norm.sqrt())
    }

    /// The score of a tool's features.
    pub fn score(&self, counter: &Counter) -> f64 {
        let (values, norm) = self.values(counter);
        if norm == 0.0 {
            return self.bias;
        }
        values.iter().map(|(_, v, w)| v * w).sum::<f64>() / norm + self.bias
    }

    /// How much of `whole`'s score the features of one of its texts (`part`) make: each
    /// bucket's term of the dot product, shared out by the counts.
    pub fn contribution(&self, part: &Counter, whole: &Counter) -> f64 {
        let (values, norm) = self.values(whole);
        if norm == 0.0 {
            return 0.0;
        }
        values
            .iter()
            .filter_map(|&(b, v, w)| {
                let mine = *part.counts.get(&b)?;
                let all = whole.counts[&b];
                Some(v * w * f64::from(mine) / f64::from(all))
            })
            .sum::<f64>()
            / norm
    }
}

/// The published model, parsed at first use.
pub static MODEL: std::sync::LazyLock<Model> = std::sync::LazyLock::new(|| {
    Model::parse(MODEL_BYTES).expect("score-model.bin is a toolmark-score/1 model")
});
