//! Git reference name rules (`git check-ref-format`), without running git.

/// Why `name` cannot be a git branch name, or `None` when it can.
pub fn ref_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name == "@" {
        return Some("`@` alone is not a valid name");
    }
    if name.contains("..") {
        return Some("it contains `..`");
    }
    if name.contains("@{") {
        return Some("it contains `@{`");
    }
    if name.ends_with('.') {
        return Some("it ends with `.`");
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Some("it has an empty path component");
    }
    if name
        .chars()
        .any(|c| c.is_control() || " ~^:?*[\\".contains(c))
    {
        return Some("it contains a space, a control character or one of ~ ^ : ? * [ \\");
    }
    for component in name.split('/') {
        // Every component becomes a file name under .git/refs.
        if component.len() > 255 {
            return Some("a component is longer than 255 bytes, more than file systems allow");
        }
        if component.starts_with('.') {
            return Some("a component starts with `.`");
        }
        if component.ends_with(".lock") {
            return Some("a component ends with `.lock`");
        }
    }
    if name.starts_with('-') {
        return Some("it starts with `-`");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::ref_name_problem;

    #[test]
    fn matches_git_check_ref_format() {
        for ok in ["main", "release/1.2", "T1", "feature-x_y"] {
            assert_eq!(ref_name_problem(ok), None, "{ok}");
        }
        for bad in [
            "", "a..b", "x.lock", "a.", "a@{b", "a b", "/a", "a//b", ".a", "a/.b", "-a", "a:b",
            "a~1",
        ] {
            assert!(ref_name_problem(bad).is_some(), "{bad}");
        }
    }
}
