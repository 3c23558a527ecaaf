//! What a reader found: paragraphs of lines, read from Tesseract's TSV result.

use std::fmt;

/// Lines whose words Tesseract is on average less sure of than this (0–100) are left out. Lines of
/// a printed page, even scanned, score 85–97; the garbage it reads in mirrored or upside-down
/// text scores 10–55 a line, whereas single words of either go anywhere from 0 to 96, which is
/// why whole lines are judged.
pub const MIN_LINE_CONFIDENCE: f32 = 60.0;

/// The text of a picture, in reading order. Empty when no word was found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text {
    pub paragraphs: Vec<Paragraph>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Paragraph {
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The line's words, one space apart.
    pub text: String,
    /// The mean of its words' confidences, 0–100.
    pub confidence: f32,
}

impl Text {
    pub fn is_empty(&self) -> bool {
        self.paragraphs.is_empty()
    }

    /// How many words were kept.
    pub fn words(&self) -> usize {
        self.lines().map(|line| line.text.split(' ').count()).sum()
    }

    pub fn lines(&self) -> impl Iterator<Item = &Line> {
        self.paragraphs.iter().flat_map(|paragraph| &paragraph.lines)
    }

    /// Reads the rows of `TessBaseAPI::GetTSVText`: `level page block paragraph line word left top
    /// width height confidence text`, a word per row at level 5, a row per block, paragraph and
    /// line before their words. With the text, the mean confidence of every word found, kept or
    /// not (`None` when there was none).
    pub(crate) fn from_tsv(tsv: &str) -> (Text, Option<f32>) {
        let mut text = Text::default();
        let (mut sum, mut count) = (0.0, 0);
        // The line being gathered, and the paragraph the last line went to.
        let mut line: Option<RawLine> = None;
        let mut paragraph = None;
        for row in tsv.lines() {
            let columns: Vec<&str> = row.splitn(12, '\t').collect();
            let [
                level,
                _,
                block,
                paragraph_number,
                line_number,
                _,
                _,
                _,
                _,
                _,
                confidence,
                word,
            ] = columns[..]
            else {
                continue;
            };
            let (Ok(5), Ok(confidence)) = (level.parse::<u8>(), confidence.parse::<f32>()) else {
                continue;
            };
            let word = word.trim();
            if word.is_empty() {
                continue;
            }
            (sum, count) = (sum + confidence, count + 1);
            let at = (block, paragraph_number, line_number);
            match &mut line {
                Some(line) if line.at == at => line.words.push((word, confidence)),
                _ => {
                    let words = vec![(word, confidence)];
                    if let Some(done) = line.replace(RawLine { at, words }) {
                        text.add_line(done, &mut paragraph);
                    }
                }
            }
        }
        if let Some(done) = line {
            text.add_line(done, &mut paragraph);
        }
        (text, (count > 0).then(|| sum / count as f32))
    }

    /// Adds a line to the last paragraph when it is in the same one, else to a new one; unless
    /// it is too unsure.
    fn add_line<'a>(
        &mut self,
        RawLine { at, words }: RawLine<'a>,
        paragraph: &mut Option<(&'a str, &'a str)>,
    ) {
        let (block, paragraph_number, _) = at;
        let confidence = words.iter().map(|(_, confidence)| confidence).sum::<f32>() / words.len() as f32;
        if confidence < MIN_LINE_CONFIDENCE {
            return;
        }
        let words: Vec<&str> = words.into_iter().map(|(word, _)| word).collect();
        let line = Line {
            text: words.join(" "),
            confidence,
        };
        match self.paragraphs.last_mut() {
            Some(last) if *paragraph == Some((block, paragraph_number)) => last.lines.push(line),
            _ => self.paragraphs.push(Paragraph { lines: vec![line] }),
        }
        *paragraph = Some((block, paragraph_number));
    }
}

/// A line's words as Tesseract gave them, with their confidences, at its (block, paragraph,
/// line) numbers.
struct RawLine<'a> {
    at: (&'a str, &'a str, &'a str),
    words: Vec<(&'a str, f32)>,
}

/// Lines one per line, paragraphs a blank line apart.
impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, paragraph) in self.paragraphs.iter().enumerate() {
            if n > 0 {
                f.write_str("\n\n")?;
            }
            for (m, line) in paragraph.lines.iter().enumerate() {
                if m > 0 {
                    f.write_str("\n")?;
                }
                f.write_str(&line.text)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_paragraphs_of_lines_without_unsure_lines() {
        let tsv = "1\t1\t0\t0\t0\t0\t0\t0\t2480\t3508\t-1\t\n\
                   2\t1\t1\t0\t0\t0\t10\t10\t900\t200\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t10\t10\t90\t30\t96.5\tHello\n\
                   5\t1\t1\t1\t1\t2\t110\t10\t90\t30\t93.5\tworld.\n\
                   4\t1\t1\t1\t2\t0\t10\t50\t900\t30\t-1\t\n\
                   5\t1\t1\t1\t2\t1\t10\t50\t90\t30\t91\tSecond\n\
                   5\t1\t1\t1\t2\t2\t110\t50\t90\t30\t41\t~%\n\
                   5\t1\t1\t1\t3\t1\t10\t70\t90\t30\t20\tZz\n\
                   5\t1\t1\t1\t3\t2\t110\t70\t90\t30\t93\tof\n\
                   5\t1\t1\t2\t1\t1\t10\t90\t90\t30\t88\tNext\n\
                   5\t1\t2\t1\t1\t1\t10\t900\t90\t30\t31\t#@!\n\
                   5\t1\t3\t1\t1\t1\t10\t990\t90\t30\t95\t \n\
                   5\t1\t3\t1\t1\t2\t10\t990\t90\t30\tx\tbad\n";
        let (text, confidence) = Text::from_tsv(tsv);
        // The third line (mean 56.5) and the last block (31) are left out; a line of 66 is kept
        // with its unsure word.
        assert_eq!(text.to_string(), "Hello world.\nSecond ~%\n\nNext");
        assert_eq!(text.words(), 5);
        assert_eq!(text.paragraphs[0].lines[0].confidence, 95.0);
        assert_eq!(text.paragraphs[0].lines[1].confidence, 66.0);
        assert_eq!(
            confidence,
            Some((96.5 + 93.5 + 91.0 + 41.0 + 20.0 + 93.0 + 88.0 + 31.0) / 8.0)
        );
    }

    #[test]
    fn no_words_no_text() {
        let (text, confidence) = Text::from_tsv("1\t1\t0\t0\t0\t0\t0\t0\t640\t480\t-1\t\n");
        assert!(text.is_empty());
        assert_eq!(confidence, None);
        assert_eq!(text.to_string(), "");
        assert_eq!(text.words(), 0);
    }
}
