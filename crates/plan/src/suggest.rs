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

/// Edit distance in characters, an adjacent swap counting as one edit
/// (`tset` is one from `test`): the optimal string alignment distance.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Rows i-2, i-1 and i of the table.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j - 1] + cost).min(last[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
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
        assert_eq!(distance("tset", "test"), 1);
        assert_eq!(closest("tset", ["test", "lint"]), Some("test"));
    }
}
