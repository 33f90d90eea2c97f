//! The policy's authors (`io.kubewarden.policy.author`): an RFC 5322 address list, read with
//! mail-parser and checked address by address; the metadata check and the Artifact Hub package
//! both read it here.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
}

/// `Name <mail>, Other <mail>` (RFC 5322 `name-addr` list) as Artifact Hub maintainers.
pub fn maintainers(authors: &str) -> Result<Vec<Maintainer>, String> {
    let header = format!("To: {authors}\r\n\r\n");
    let message = mail_parser::MessageParser::default()
        .parse(header.as_bytes())
        .ok_or("not an RFC 5322 address list")?;
    let list = message
        .to()
        .ok_or("not an RFC 5322 address list (Name <mail@example.org>, ...)")?;
    let mut out = Vec::new();
    for addr in list.iter() {
        let address = addr.address.as_deref().unwrap_or_default();
        let email = email_address::EmailAddress::from_str(address)
            .map_err(|e| format!("{address:?} is not an e-mail address: {e}"))?;
        out.push(Maintainer {
            name: addr.name.as_deref().unwrap_or_default().to_owned(),
            email: email.to_string(),
        });
    }
    if out.is_empty() {
        return Err("not an RFC 5322 address list (Name <mail@example.org>, ...)".to_owned());
    }
    Ok(out)
}
