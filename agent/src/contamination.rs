//! The page side of the contamination guard: a page whose visible text holds the task's question together
//! with one of its reference answers (the task file's, WebArena's `reference_answers`, WebVoyager's
//! `reference_answer.json` given to `run --reference-file`) is evidence the agent found the benchmark's
//! answer rather than the site's. The run goes on; the step is flagged (`Trajectory::guard`), and `eval`
//! counts the task apart.
//!
//! Both are compared lower-cased with whitespace collapsed. The question must appear whole, or its first
//! [`QUESTION_PREFIX`] characters when it is longer (pages quote long tasks by their start); an answer must
//! appear as whole words and be at least [`MIN_ANSWER`] characters long (a bare "3" is on every page).

/// Characters of a long question that must appear.
pub const QUESTION_PREFIX: usize = 80;
/// Shortest answer looked for.
pub const MIN_ANSWER: usize = 2;

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// What a page is checked for.
#[derive(Debug, Clone)]
pub struct AnswerCheck {
    question: String,
    answers: Vec<String>,
}

impl AnswerCheck {
    /// The check for a task; None when it has no usable reference answer.
    pub fn new(question: &str, answers: &[String]) -> Option<Self> {
        let q = norm(question);
        let question = match q.char_indices().nth(QUESTION_PREFIX) {
            Some((i, _)) => q[..i].trim_end().to_string(),
            None => q,
        };
        let mut answers: Vec<String> = answers
            .iter()
            .map(|a| norm(a))
            .filter(|a| a.chars().count() >= MIN_ANSWER && a != "n/a")
            .collect();
        answers.sort();
        answers.dedup();
        (!question.is_empty() && !answers.is_empty()).then_some(Self { question, answers })
    }

    /// The question part and the answer a page's visible text shows together, if it does.
    pub fn find(&self, page_text: &str) -> Option<(String, String)> {
        let text = norm(page_text);
        if !text.contains(&self.question) {
            return None;
        }
        self.answers.iter().find(|a| has_words(&text, a)).map(|a| (self.question.clone(), a.clone()))
    }
}

/// Whether `needle` occurs in `hay` with no letter or digit right before or after it.
fn has_words(hay: &str, needle: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    hay.match_indices(needle)
        .any(|(i, m)| !word(hay[..i].chars().next_back()) && !word(hay[i + m.len()..].chars().next()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_table() {
        let q = "What is the price of the Blue Kettle in the Demo Shop?";
        let answers = vec!["24.00".to_string(), "N/A".to_string(), "7".to_string()];
        let check = AnswerCheck::new(q, &answers).unwrap();
        // (page text, flagged answer or "")
        let rows = [
            (
                "Leaked benchmark: What is the price of the Blue Kettle in the  Demo Shop? Answer: 24.00",
                "24.00",
            ),
            ("what is the price of the blue kettle in the demo shop?\n\n$24.00 (reference)", "24.00"),
            ("Blue Kettle $24.00 add to cart", ""),
            ("What is the price of the Blue Kettle in the Demo Shop? We do not know.", ""),
            ("What is the price of the Blue Kettle in the Demo Shop? 124.001 reviews", ""),
        ];
        for (text, want) in rows {
            let got = check.find(text).map(|(_, a)| a).unwrap_or_default();
            assert_eq!(got, want, "{text}");
        }
        assert!(AnswerCheck::new(q, &["N/A".into(), "7".into()]).is_none(), "no usable answer, no check");
        let long = format!("{} and then tell me everything else about it in great detail please", q);
        let check = AnswerCheck::new(&long, &answers).unwrap();
        assert!(
            check.find(&format!("{}... answer 24.00", &long[..90])).is_some(),
            "a long question by its start"
        );
    }
}
