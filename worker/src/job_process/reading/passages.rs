//! Written text cut into moments.

use super::MAX_PASSAGE;

/// Text cut into moments: each paragraph (lines up to a blank line, joined by spaces, spaces
/// collapsed) is one, and a paragraph over [`MAX_PASSAGE`] characters is cut between sentences
/// into pieces of at most that (a sentence longer than that between words). A paragraph is what
/// a person would quote as "where it says so", and a few sentences are what the model reads
/// well: it sees 256 tokens at most, some 1,000 characters.
pub fn passages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut paragraph = String::new();
    for line in text.lines().chain([""]) {
        let line: String = line
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if line.trim().is_empty() {
            if !paragraph.is_empty() {
                pieces(&paragraph, &mut out);
                paragraph.clear();
            }
            continue;
        }
        for word in line.split_whitespace() {
            if !paragraph.is_empty() {
                paragraph.push(' ');
            }
            paragraph.push_str(word);
        }
    }
    out
}

/// `paragraph` (spaces collapsed) into pieces of at most [`MAX_PASSAGE`] characters, cut after
/// a sentence's end where one is near enough, else between words.
pub fn pieces(paragraph: &str, out: &mut Vec<String>) {
    let mut rest = paragraph;
    while rest.chars().count() > MAX_PASSAGE {
        let limit = rest
            .char_indices()
            .nth(MAX_PASSAGE)
            .map_or(rest.len(), |(i, _)| i);
        let head = &rest[..limit];
        let sentence_end = head
            .match_indices(['.', '!', '?'])
            .map(|(i, _)| i + 1)
            .rfind(|&i| rest[i..].starts_with(' '));
        let cut = sentence_end
            .or_else(|| head.rfind(' '))
            .filter(|&i| i > 0)
            .unwrap_or(limit);
        out.push(rest[..cut].trim().to_string());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_moments_and_long_ones_are_cut_between_sentences() {
        let text = "Title\r\n\r\nFirst line of a paragraph\ncontinued  here.\n\n\n\tSecond.\n";
        assert_eq!(
            passages(text),
            ["Title", "First line of a paragraph continued here.", "Second."]
        );
        let sentence = "This sentence is exactly fifty characters long ok. ";
        let long = sentence.repeat(20);
        let cut = passages(&long);
        assert_eq!(cut.len(), 2);
        assert!(
            cut.iter()
                .all(|p| p.chars().count() <= MAX_PASSAGE && p.ends_with("ok."))
        );
        assert_eq!(cut.join(" "), long.trim());
        let words = "word ".repeat(300);
        assert!(
            passages(&words)
                .iter()
                .all(|p| p.chars().count() <= MAX_PASSAGE && !p.contains("  "))
        );
        let unbroken = "é".repeat(1500);
        assert_eq!(passages(&unbroken).concat(), unbroken);
    }
}
