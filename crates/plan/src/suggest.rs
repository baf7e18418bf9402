//! "Did you mean" for misspelt names: the closest known name, when it is
//! close enough to be the likely intent.

/// The candidate closest to `word` by edit distance, if at most a third of
/// `word`'s length (at least 1) away; ties keep the first candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested_far_ones_not() {
        let fields = ["estimate_minutes", "depends_on", "scope"];
        assert_eq!(closest("estimat_minutes", fields), Some("estimate_minutes"));
        assert_eq!(closest("dependson", fields), Some("depends_on"));
        assert_eq!(closest("colour", fields), None);
        assert_eq!(
            closest("creat", ["any", "create", "modify"]),
            Some("create")
        );
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
