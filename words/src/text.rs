//! PostgreSQL's text forms of `tsvector` (`'brake':3 'pad':4,7`) and `tsquery`
//! (`'brake' & !( 'pad' <-> 'wear' )`), read as the server writes them: lexemes quoted, a quote
//! inside doubled and a backslash escaped.

use crate::WordsError;

/// One lexeme of a tsvector and its positions (from 1), in the order written.
pub(crate) type Entry = (String, Vec<u16>);

/// The entries of a tsvector's text. Weights (`3A`) are read and dropped: the moments' words
/// carry none. A lexeme written without positions (a stripped vector) gets none.
pub(crate) fn tsvector(text: &str) -> Result<Vec<Entry>, WordsError> {
    let mut reader = Reader::new(text);
    let mut entries = Vec::new();
    while reader.skip_spaces() {
        let lexeme = reader.lexeme()?;
        let mut positions = Vec::new();
        if reader.eat(':') {
            loop {
                let position = reader.number()?;
                positions.push(position);
                while reader.peek().is_some_and(|c| matches!(c, 'A'..='D')) {
                    reader.next();
                }
                if !reader.eat(',') {
                    break;
                }
            }
        }
        entries.push((lexeme, positions));
    }
    Ok(entries)
}

/// A query as `websearch_to_tsquery` writes it: lexemes joined by `&`, `|`, `!` and phrase
/// operators, whose operands are lexemes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Query {
    Lexeme(String),
    /// Lexemes at these distances: each one `distance` positions after the one before it
    /// (the first's distance is 0). `'a' <-> 'b' <2> 'c'`: b right after a, c two after b.
    Phrase(Vec<(String, u16)>),
    Not(Box<Query>),
    And(Box<Query>, Box<Query>),
    Or(Box<Query>, Box<Query>),
}

/// The query of a tsquery's text; `None` for the empty query (only stop words), which
/// matches nothing. Prefixes (`:*`), weights and operators inside a phrase other than phrases
/// of lexemes are refused: `websearch_to_tsquery` writes none of them for a query of the 500
/// characters `/search-files` takes (it writes `&` inside a phrase only for words past
/// position 16,383, which PostgreSQL clamps to one).
pub(crate) fn tsquery(text: &str) -> Result<Option<Query>, WordsError> {
    let mut reader = Reader::new(text);
    if !reader.skip_spaces() {
        return Ok(None);
    }
    let query = or(&mut reader)?;
    if reader.skip_spaces() {
        return Err(reader.error("an operator or the end"));
    }
    Ok(Some(query))
}

// Precedence, loosest first: `|`, `&`, phrase, `!` (PostgreSQL's).
fn or(reader: &mut Reader) -> Result<Query, WordsError> {
    let mut query = and(reader)?;
    while reader.skip_spaces() && reader.eat('|') {
        query = Query::Or(Box::new(query), Box::new(and(reader)?));
    }
    Ok(query)
}

fn and(reader: &mut Reader) -> Result<Query, WordsError> {
    let mut query = phrase(reader)?;
    while reader.skip_spaces() && reader.eat('&') {
        query = Query::And(Box::new(query), Box::new(phrase(reader)?));
    }
    Ok(query)
}

fn phrase(reader: &mut Reader) -> Result<Query, WordsError> {
    let first = unary(reader)?;
    let mut chain: Vec<(String, u16)> = Vec::new();
    while reader.skip_spaces() && reader.peek() == Some('<') {
        let distance = reader.distance()?;
        let Query::Lexeme(next) = unary(reader)? else {
            return Err(reader.error("a lexeme after a phrase operator"));
        };
        if chain.is_empty() {
            let Query::Lexeme(first) = &first else {
                return Err(reader.error("a lexeme before a phrase operator"));
            };
            chain.push((first.clone(), 0));
        }
        chain.push((next, distance));
    }
    Ok(if chain.is_empty() {
        first
    } else {
        Query::Phrase(chain)
    })
}

fn unary(reader: &mut Reader) -> Result<Query, WordsError> {
    reader.skip_spaces();
    if reader.eat('!') {
        return Ok(Query::Not(Box::new(unary(reader)?)));
    }
    if reader.eat('(') {
        let query = or(reader)?;
        reader.skip_spaces();
        if !reader.eat(')') {
            return Err(reader.error("`)`"));
        }
        return Ok(query);
    }
    let lexeme = reader.lexeme()?;
    if reader.peek() == Some(':') {
        return Err(reader.error("no prefix or weight after a lexeme"));
    }
    Ok(Query::Lexeme(lexeme))
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader { text, at: 0 }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += c.len_utf8();
        }
        found
    }

    /// Skips spaces; whether anything is left.
    fn skip_spaces(&mut self) -> bool {
        while self.peek().is_some_and(char::is_whitespace) {
            self.next();
        }
        self.peek().is_some()
    }

    /// `'…'`, with `''` for a quote and `\x` for x.
    fn lexeme(&mut self) -> Result<String, WordsError> {
        if !self.eat('\'') {
            return Err(self.error("a quoted lexeme"));
        }
        let mut lexeme = String::new();
        loop {
            match self.next() {
                None => return Err(self.error("the lexeme's closing quote")),
                Some('\\') => lexeme.push(self.next().ok_or_else(|| self.error("an escaped character"))?),
                Some('\'') if self.eat('\'') => lexeme.push('\''),
                Some('\'') => return Ok(lexeme),
                Some(c) => lexeme.push(c),
            }
        }
    }

    fn number(&mut self) -> Result<u16, WordsError> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.next();
        }
        self.text[start..self.at]
            .parse()
            .map_err(|_| self.error("a position"))
    }

    /// `<->` (1) or `<N>`.
    fn distance(&mut self) -> Result<u16, WordsError> {
        self.eat('<');
        let distance = if self.eat('-') { 1 } else { self.number()? };
        if !self.eat('>') {
            return Err(self.error("`>` closing a phrase operator"));
        }
        Ok(distance)
    }

    fn error(&self, expected: &str) -> WordsError {
        WordsError::Unexpected {
            expected: expected.to_string(),
            at: self.at,
            text: self.text.chars().take(200).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Query, tsquery, tsvector};

    fn lexeme(l: &str) -> Box<Query> {
        Box::new(Query::Lexeme(l.to_string()))
    }

    #[test]
    fn a_tsvector_is_its_lexemes_and_positions() {
        let entries = tsvector("'brake':3 'it''s':1,7B 'back\\\\slash' 'pad':4").unwrap();
        assert_eq!(
            entries,
            [
                ("brake".to_string(), vec![3]),
                ("it's".to_string(), vec![1, 7]),
                ("back\\slash".to_string(), vec![]),
                ("pad".to_string(), vec![4]),
            ]
        );
        assert_eq!(tsvector("").unwrap(), []);
        assert!(tsvector("'open").is_err());
        assert!(tsvector("'a':x").is_err());
    }

    #[test]
    fn every_shape_websearch_writes_is_read() {
        assert_eq!(tsquery("").unwrap(), None);
        assert_eq!(tsquery("'cat'").unwrap(), Some(*lexeme("cat")));
        assert_eq!(
            tsquery("'cat' & !'dog' | 'rat'").unwrap(),
            Some(Query::Or(
                Box::new(Query::And(lexeme("cat"), Box::new(Query::Not(lexeme("dog"))))),
                lexeme("rat")
            ))
        );
        let phrase =
            |words: &[(&str, u16)]| Query::Phrase(words.iter().map(|(w, d)| (w.to_string(), *d)).collect());
        assert_eq!(
            tsquery("'state-of-the-art' <-> 'state' <3> 'art' & 'design'").unwrap(),
            Some(Query::And(
                Box::new(phrase(&[("state-of-the-art", 0), ("state", 1), ("art", 3)])),
                lexeme("design")
            ))
        );
        assert_eq!(
            tsquery("'cat' | !( 'dog' <-> 'bark' )").unwrap(),
            Some(Query::Or(
                lexeme("cat"),
                Box::new(Query::Not(Box::new(phrase(&[("dog", 0), ("bark", 1)]))))
            ))
        );
    }

    #[test]
    fn what_websearch_never_writes_is_refused() {
        for text in [
            "'cat':*",
            "'cat':AB",
            "!'cat' <-> 'dog'",
            "'cat' <-> ( 'dog' | 'rat' )",
            "( 'cat' & 'dog' ) <-> 'rat'",
            "'cat' 'dog'",
            "( 'cat'",
            "'cat' <1 'dog'",
            "cat",
        ] {
            assert!(tsquery(text).is_err(), "{text:?} was read");
        }
    }
}
