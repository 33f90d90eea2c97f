//! How a message lists names (`a, b`): one small loop for every kind of list (std's `join` is
//! compiled once per element type, about 1.3 KB of module each).

/// `items` with `separator` between them.
pub(crate) fn listed<S: AsRef<str>>(items: &[S], separator: &str) -> String {
    let mut text = String::new();
    for (at, item) in items.iter().enumerate() {
        if at > 0 {
            text.push_str(separator);
        }
        text.push_str(item.as_ref());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::listed;

    #[test]
    fn lists_with_the_separator_between() {
        assert_eq!(listed::<&str>(&[], ", "), "");
        assert_eq!(listed(&["a"], ", "), "a");
        assert_eq!(listed(&["a".to_owned(), "b".to_owned()], "; "), "a; b");
    }
}
