//! The contamination list: where benchmarks' answers are published (their repositories and dataset
//! pages, leaderboards, trajectory dumps), by benchmark family. Live and recording runs must not read
//! them: a request there is answered locally and flagged.
//!
//! A user file adds places: `{ "places": [ { "family": "mine", "host": "example.org", "path": "^/answers" } ] }`
//! (`host` matches the host and its subdomains; `path`, a pattern over the path, may be left out).

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use super::rules_file::GuardRulesError;

/// (family, host, path pattern): the built-in list.
pub const PLACES: &[(&str, &str, &str)] = &[
    ("WebVoyager", "github.com", r"^/MinorJerry/WebVoyager"),
    ("WebVoyager", "raw.githubusercontent.com", r"^/MinorJerry/WebVoyager"),
    ("WebVoyager", "huggingface.co", r"^/(datasets|spaces)/[^/]+/[^/]*webvoyager"),
    ("WebArena", "github.com", r"^/web-arena-x/(webarena|visualwebarena)"),
    ("WebArena", "raw.githubusercontent.com", r"^/web-arena-x/"),
    ("WebArena", "webarena.dev", ""),
    ("WebArena", "jykoh.com", r"^/vwa"),
    ("WebArena", "github.com", r"^/ServiceNow/(webarena-verified|BrowserGym)"),
    ("WebArena", "raw.githubusercontent.com", r"^/ServiceNow/webarena-verified"),
    ("WebArena", "huggingface.co", r"^/(datasets|spaces)/[^/]+/[^/]*(webarena|visualwebarena)"),
    ("WebArena", "docs.google.com", r"^/spreadsheets/d/1M801lEpBbKSNwP-vDBkC_pF7LdyGU1f_ufZb_NWNBZQ"),
    ("Mind2Web", "github.com", r"^/OSU-NLP-Group/(Mind2Web|Online-Mind2Web|SeeAct)"),
    ("Mind2Web", "osu-nlp-group.github.io", r"^/Mind2Web"),
    ("Mind2Web", "huggingface.co", r"^/(datasets|spaces)/osunlp/"),
    ("GAIA", "huggingface.co", r"^/(datasets|spaces)/gaia-benchmark/"),
    ("BrowseComp", "github.com", r"^/openai/simple-evals"),
    ("BrowseComp", "raw.githubusercontent.com", r"^/openai/simple-evals"),
    ("BrowseComp", "openaipublic.blob.core.windows.net", r"^/simple-evals/"),
    ("BrowseComp", "huggingface.co", r"^/(datasets|spaces)/[^/]+/[^/]*browse_?comp"),
];

/// A place answers are published.
#[derive(Debug, Clone)]
struct Place {
    family: String,
    host: String,
    path: Option<Regex>,
}

/// Why a request was refused as a place a benchmark's answers are published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerHit {
    /// The benchmark family.
    pub family: String,
    /// The listed place (`host` or `host path`).
    pub place: String,
}

/// The list in force.
#[derive(Debug, Clone)]
pub struct AnswerPlaces {
    places: Vec<Place>,
}

/// The JSON an answer places file holds, for errors.
const PLACES_SHAPE: &str = r#"{"places": [{"family", "host", "path"}]}"#;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlacesFile {
    places: Vec<PlaceFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaceFile {
    family: String,
    host: String,
    #[serde(default)]
    path: String,
}

fn place(family: &str, host: &str, path: &str) -> Result<Place, regex::Error> {
    let path =
        if path.is_empty() { None } else { Some(RegexBuilder::new(path).case_insensitive(true).build()?) };
    Ok(Place { family: family.to_string(), host: host.to_ascii_lowercase(), path })
}

impl AnswerPlaces {
    /// The built-in list.
    pub fn builtin() -> Self {
        Self { places: PLACES.iter().filter_map(|(f, h, p)| place(f, h, p).ok()).collect() }
    }

    /// The built-in list plus a user file's places.
    pub fn with_file(path: &std::path::Path) -> Result<Self, GuardRulesError> {
        let (f, p) = super::rules_file::read_rules(path, PLACES_SHAPE)?;
        Self::builtin().with_places(f, &p)
    }

    /// The places in `text` added; `path` names the file in the error.
    #[cfg(test)]
    fn with_text(self, text: &str, path: &str) -> Result<Self, GuardRulesError> {
        self.with_places(super::rules_file::parse_rules(text, path, PLACES_SHAPE)?, path)
    }

    /// A places file's places added.
    fn with_places(mut self, f: PlacesFile, path: &str) -> Result<Self, GuardRulesError> {
        let invalid = |detail: String| GuardRulesError::Invalid { path: path.to_string(), detail };
        for p in f.places {
            self.places.push(
                place(&p.family, &p.host, &p.path)
                    .map_err(|e| invalid(format!("path pattern {:?}: {e}", p.path)))?,
            );
        }
        Ok(self)
    }

    /// The listed place a request to `host` and `path` reaches, if any.
    pub fn judge(&self, host: &str, path: &str) -> Option<AnswerHit> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.places
            .iter()
            .find(|p| {
                (host == p.host || host.ends_with(&format!(".{}", p.host)))
                    && p.path.as_ref().is_none_or(|r| r.is_match(path))
            })
            .map(|p| AnswerHit {
                family: p.family.clone(),
                place: match &p.path {
                    Some(r) => format!("{} {}", p.host, r.as_str()),
                    None => p.host.clone(),
                },
            })
    }
}

/// The list's test rows: (host, path, the family that must be refused or "" for pass); each is also a
/// seed of the `guard_rules` fuzz target.
pub const EXAMPLES: &[(&str, &str, &str)] = &[
    ("github.com", "/MinorJerry/WebVoyager/blob/main/data/reference_answer.json", "WebVoyager"),
    ("github.com", "/minorjerry/webvoyager", "WebVoyager"),
    ("github.com", "/rust-lang/rust", ""),
    ("raw.githubusercontent.com", "/web-arena-x/webarena/main/config_files/test.raw.json", "WebArena"),
    ("huggingface.co", "/datasets/osunlp/Mind2Web", "Mind2Web"),
    ("huggingface.co", "/datasets/gaia-benchmark/GAIA", "GAIA"),
    ("huggingface.co", "/spaces/gaia-benchmark/leaderboard", "GAIA"),
    ("huggingface.co", "/datasets/someone/browsecomp-plus", "BrowseComp"),
    ("huggingface.co", "/bert-base-uncased", ""),
    ("openaipublic.blob.core.windows.net", "/simple-evals/browse_comp_test_set.csv", "BrowseComp"),
    ("www.webarena.dev", "/", "WebArena"),
    ("shop.test", "/MinorJerry/WebVoyager", ""),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_table() {
        let places = AnswerPlaces::builtin();
        assert_eq!(places.places.len(), PLACES.len(), "every built-in pattern compiles");
        for (host, path, want) in EXAMPLES {
            let got = places.judge(host, path).map(|h| h.family).unwrap_or_default();
            assert_eq!(&got, want, "{host}{path}");
        }
        let mine = AnswerPlaces::builtin()
            .with_text(r#"{"places":[{"family":"mine","host":"answers.test","path":"^/q"}]}"#, "test")
            .unwrap();
        assert_eq!(mine.judge("answers.test", "/q/1").map(|h| h.family), Some("mine".into()));
        assert!(AnswerPlaces::builtin().with_text(r#"{"places":[{"host":"x"}]}"#, "test").is_err());
    }
}
