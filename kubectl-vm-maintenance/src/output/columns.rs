//! Output as `kubectl get` prints it: upper-case headers, no borders, columns aligned and
//! separated by three spaces, one line per object, no cell ever cut or wrapped (`-o wide` adds
//! columns, `--no-headers` leaves the header line out); `-o json` and `-o yaml` print the data.
//! The explanations below a table are wrapped at word boundaries to `--width` (or the
//! terminal's), never inside a word.

use serde::Serialize;

/// `-o`: the table, the wide table, or the data as JSON or YAML.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Table,
    Wide,
    Json,
    Yaml,
}

/// How to print an answer.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub output: Output,
    /// `false` with `--no-headers`: the rows of the table alone.
    pub headers: bool,
    /// Where the explanations wrap (`None`: they do not).
    pub width: Option<usize>,
}

/// The narrowest `--width` accepted.
pub const MIN_WIDTH: u16 = 40;

/// Written instead of an empty cell, as kubectl does.
pub const NONE: &str = "<none>";

impl Layout {
    pub fn wide(&self) -> bool {
        self.output == Output::Wide
    }

    /// A table (`-o wide` included), not the data.
    pub fn table(&self) -> bool {
        matches!(self.output, Output::Table | Output::Wide)
    }

    /// `-o json` / `-o yaml`: the data as text (ending in a newline); `None` for a table.
    pub fn data<T: Serialize>(&self, value: &T) -> Option<Result<String, String>> {
        match self.output {
            Output::Json => Some(
                serde_json::to_string_pretty(value)
                    .map(|text| text + "\n")
                    .map_err(|e| e.to_string()),
            ),
            Output::Yaml => Some(serde_yaml::to_string(value).map_err(|e| e.to_string())),
            Output::Table | Output::Wide => None,
        }
    }

    /// A titled list below a table: `Title:` then a line per entry, indented by two, wrapped
    /// with an indent of four. Nothing for no entries.
    pub fn section(&self, title: &str, lines: &[String], text: &mut String) {
        if lines.is_empty() {
            return;
        }
        text.push_str(title);
        text.push_str(":\n");
        for line in lines {
            text.push_str(&wrap(line, self.width, "  ", "    "));
        }
    }

    /// [`Layout::section`] after a blank line; nothing for no entries.
    pub fn next_section(&self, title: &str, lines: &[String], text: &mut String) {
        if !lines.is_empty() {
            text.push('\n');
            self.section(title, lines, text);
        }
    }

    /// A paragraph, wrapped.
    pub fn line(&self, line: &str, text: &mut String) {
        text.push_str(&wrap(line, self.width, "", "  "));
    }
}

/// The width the explanations wrap at: `--width`, else the terminal's when stdout is one, else
/// none (a file or a pipe gets whole lines, for grep).
pub fn explanation_width(given: Option<u16>) -> Option<usize> {
    given.map(usize::from).or_else(|| {
        let term = console::Term::stdout();
        term.is_term()
            .then(|| term.size_checked().map(|(_, cols)| usize::from(cols)))
            .flatten()
    })
}

/// A table: its header and its rows, cells as text.
#[derive(Debug, Default)]
pub struct Columns {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Columns {
    pub fn new(header: Vec<&'static str>) -> Columns {
        Columns {
            header,
            rows: Vec::new(),
        }
    }

    /// One row; an empty cell is written `<none>`, a line break or tab as a space.
    pub fn row(&mut self, cells: Vec<String>) {
        let cells = cells
            .into_iter()
            .map(|cell| {
                if cell.is_empty() {
                    NONE.to_owned()
                } else {
                    cell.replace(['\n', '\t'], " ")
                }
            })
            .collect();
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The lines: the header (unless `headers` is false), then the rows; each column as wide as
    /// its widest cell, three spaces apart, no trailing space.
    pub fn render(&self, headers: bool) -> String {
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        let lines: Vec<&Vec<String>> = headers
            .then_some(&header)
            .into_iter()
            .chain(&self.rows)
            .collect();
        let columns = self.header.len();
        let mut widths = vec![0; columns];
        for line in &lines {
            for (i, cell) in line.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut text = String::new();
        for line in lines {
            let mut out = String::new();
            for (i, cell) in line.iter().enumerate().take(columns) {
                out.push_str(cell);
                if i + 1 < columns {
                    let pad = widths[i] - cell.chars().count() + 3;
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            text.push_str(out.trim_end());
            text.push('\n');
        }
        text
    }
}

/// `line` wrapped at spaces to `width` columns: the first line starts with `first`, the others
/// with `rest`. A word longer than a line is never cut: it overflows. `None`: one line.
pub fn wrap(line: &str, width: Option<usize>, first: &str, rest: &str) -> String {
    let Some(width) = width else {
        return format!("{first}{line}\n");
    };
    let mut text = String::new();
    let mut current = first.to_owned();
    let mut empty = true;
    for word in line.split(' ').filter(|w| !w.is_empty()) {
        let len = current.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
            text.push_str(&current);
            text.push('\n');
            current = rest.to_owned();
            empty = true;
        }
        if !empty {
            current.push(' ');
        }
        current.push_str(word);
        empty = false;
    }
    text.push_str(&current);
    text.push('\n');
    text
}

/// Items joined as kubectl joins a list in a cell: by commas.
pub fn listed(items: &[impl AsRef<str>]) -> String {
    items
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_three_spaces_apart() {
        let mut table = Columns::new(vec!["NAMESPACE", "NAME", "NODE"]);
        table.row(vec![
            "ai".into(),
            "gpu-infer-02".into(),
            "harvester-node-2".into(),
        ]);
        table.row(vec!["default".into(), "web".into(), String::new()]);
        assert_eq!(
            table.render(true),
            "NAMESPACE   NAME           NODE\n\
             ai          gpu-infer-02   harvester-node-2\n\
             default     web            <none>\n"
        );
        assert_eq!(
            table.render(false),
            "ai        gpu-infer-02   harvester-node-2\n\
             default   web            <none>\n"
        );
    }

    #[test]
    fn wrapped_between_words_only() {
        let line = "prod/db-01: label Shutdown: /spec/template/metadata/labels/harvesterhci.io~1maintain-mode-strategy stops";
        assert_eq!(
            wrap(line, Some(30), "  ", "    "),
            "  prod/db-01: label Shutdown:\n    /spec/template/metadata/labels/harvesterhci.io~1maintain-mode-strategy\n    stops\n"
        );
        assert_eq!(wrap(line, None, "  ", "    "), format!("  {line}\n"));
    }
}
