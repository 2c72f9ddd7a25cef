//! `config.toml` files (Codex): parsed with `toml_edit`, which keeps comments and layout, with
//! their BOM and line endings set aside ([`Envelope`]).

use toml_edit::DocumentMut;

use super::envelope::Envelope;
use super::{Change, InstallError};

/// A parsed `config.toml` with its BOM and line endings set aside ([`Envelope`]).
pub struct TomlDoc {
    doc: DocumentMut,
    envelope: Envelope,
}

impl std::ops::Deref for TomlDoc {
    type Target = DocumentMut;
    fn deref(&self) -> &DocumentMut {
        &self.doc
    }
}

impl std::ops::DerefMut for TomlDoc {
    fn deref_mut(&mut self) -> &mut DocumentMut {
        &mut self.doc
    }
}

impl TomlDoc {
    /// The file's text now, in its envelope.
    pub fn text(&self) -> String {
        self.envelope.close(&self.doc.to_string())
    }

    /// `Unchanged` when the text is still `before`.
    pub fn change_from(&self, before: Option<&str>) -> Change {
        let new_text = self.text();
        if before.unwrap_or_default() == new_text {
            Change::Unchanged
        } else {
            Change::Changed { new_text }
        }
    }
}

/// Parses `config.toml`; a missing file is an empty document.
pub fn parse_toml(text: Option<&str>) -> Result<TomlDoc, InstallError> {
    let (envelope, body) = Envelope::open(text.unwrap_or_default());
    let doc = body.parse::<DocumentMut>().map_err(|e| {
        let at = e.span().map_or(0, |s| s.start).min(body.len());
        let before = &body[..body.floor_char_boundary(at)];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        InstallError::Parse {
            what: "Codex config.toml".to_owned(),
            line,
            column,
            message: e.message().trim().to_owned(),
        }
    })?;
    Ok(TomlDoc { doc, envelope })
}
