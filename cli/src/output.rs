//! What commands print: aligned tables and sizes for people, one JSON document for scripts.

use anyhow::{Context, Result};
use chrono::{DateTime, Local, Utc};
use serde::Serialize;

/// Prints `value` as one JSON document on stdout.
pub fn print_json(value: &impl Serialize) -> Result<()> {
    println!(
        "{}",
        serde_json::to_string_pretty(value).context("encoding JSON")?
    );
    Ok(())
}

pub use drive_client::records::size;

/// A time in the local zone, to the minute.
pub fn time(at: DateTime<Utc>) -> String {
    at.with_timezone(&Local).format("%Y-%m-%d %H:%M").to_string()
}

/// How a column lines up.
#[derive(Debug, Clone, Copy)]
pub enum Align {
    Left,
    Right,
}

/// Prints rows under a header, each column as wide as its widest cell. The last column is not
/// padded, so names with spaces can go there.
pub fn print_table(columns: &[(&str, Align)], rows: &[Vec<String>]) {
    let table = Table::new(columns, rows);
    for line in std::iter::once(table.header()).chain(rows.iter().map(|row| table.line(row))) {
        println!("{line}");
    }
}

/// A table's layout, measured on its first rows: each column as wide as its title and its
/// widest cell there. A table written a page at a time (`drive list`) is laid out by its first
/// page; a wider cell on a later page widens its own row only.
pub struct Table<'a> {
    columns: &'a [(&'a str, Align)],
    widths: Vec<usize>,
}

impl<'a> Table<'a> {
    pub fn new(columns: &'a [(&'a str, Align)], first: &[Vec<String>]) -> Table<'a> {
        let mut widths: Vec<usize> = columns.iter().map(|(title, _)| title.chars().count()).collect();
        for row in first {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        Table { columns, widths }
    }

    pub fn header(&self) -> String {
        let titles: Vec<String> = self.columns.iter().map(|(title, _)| title.to_string()).collect();
        self.line(&titles)
    }

    pub fn line(&self, row: &[String]) -> String {
        let mut line = String::new();
        for (i, ((cell, width), (_, align))) in row.iter().zip(&self.widths).zip(self.columns).enumerate() {
            let last = i + 1 == self.columns.len();
            line.push_str(&match align {
                Align::Right => format!("{cell:>width$}"),
                Align::Left if last => cell.clone(),
                Align::Left => format!("{cell:<width$}"),
            });
            if !last {
                line.push_str("  ");
            }
        }
        line.trim_end().to_string()
    }
}

/// Prints `answer` as JSON, or `said` for people: what a command that makes one call prints.
pub fn show<T: Serialize>(answer: &T, json: bool, said: impl FnOnce(&T) -> String) -> Result<()> {
    if json {
        return print_json(answer);
    }
    println!("{}", said(answer));
    Ok(())
}
