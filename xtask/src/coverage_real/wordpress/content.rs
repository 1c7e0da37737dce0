//! The blog's generated content: categories, tags, topics and the posts made of them (the same on every run),
//! and the site's size in pages.

use std::collections::BTreeMap;

use super::{PER_PAGE, POSTS};

pub(super) const CATEGORIES: &[&str] =
    &["garden", "kitchen", "birds", "rivers", "tools", "bridges", "music", "weather", "trains", "maps"];
pub(super) const TAGS: &[&str] = &[
    "spring",
    "summer",
    "autumn",
    "winter",
    "howto",
    "history",
    "photos",
    "review",
    "letters",
    "field-notes",
    "repairs",
    "recipes",
    "walks",
    "archive",
    "guide",
    "abroad",
    "plans",
    "small-things",
    "long-read",
    "quick-tip",
];
/// Words a post is about (each post draws ten: a word is in about 25 posts, so a search for one pages).
pub(super) const TOPICS: &[&str] = &[
    "lantern",
    "orchard",
    "harbour",
    "meadow",
    "kettle",
    "copper",
    "valley",
    "signal",
    "engine",
    "bridge",
    "market",
    "winter",
    "stone",
    "river",
    "garden",
    "willow",
    "heron",
    "ferry",
    "quarry",
    "beacon",
    "barley",
    "cider",
    "chapel",
    "cottage",
    "dormouse",
    "estuary",
    "fiddle",
    "granary",
    "hedgerow",
    "island",
    "juniper",
    "kestrel",
    "lighthouse",
    "mill",
    "nettle",
    "oyster",
    "pantry",
    "quince",
    "rowan",
    "saddle",
    "thistle",
    "upland",
    "violin",
    "walnut",
    "yarrow",
    "anchor",
    "bellows",
    "compass",
    "drystone",
    "elderflower",
    "foxglove",
    "gorse",
    "harvest",
    "inkwell",
    "jetty",
    "kiln",
    "lichen",
    "marsh",
    "nightjar",
    "otter",
    "pebble",
    "quayside",
    "reed",
    "sorrel",
    "tidepool",
    "umbrella",
    "viaduct",
    "wagon",
    "yew",
    "acorn",
    "bramble",
    "candle",
    "damson",
    "ember",
    "fern",
    "glacier",
    "hawthorn",
    "ivy",
    "jam",
    "knot",
    "loom",
    "moss",
    "nutmeg",
    "oak",
    "plough",
    "quilt",
    "rhubarb",
    "spindle",
    "teapot",
    "urn",
    "vane",
    "weir",
    "almanac",
    "beehive",
    "cobble",
    "dovecote",
    "eel",
    "flint",
    "gate",
    "hazel",
    "iris",
    "journal",
    "kite",
    "lamp",
    "mackerel",
    "needle",
    "orchid",
    "parsley",
    "rope",
    "sextant",
    "timber",
    "vinegar",
    "wren",
];
pub(super) const FILLER: &[&str] = &[
    "the", "a", "small", "old", "green", "light", "north", "quiet", "bright", "narrow", "long", "early",
    "late", "keeps", "holds", "turns", "runs", "opens", "near", "under", "over", "beside", "with", "for",
    "and", "of", "in", "on", "by",
];

pub(super) fn next(seed: &mut u64) -> u64 {
    // xorshift: the same blog on every run.
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A post to seed (generated here, or the agreement bench's own), its category one of [`CATEGORIES`].
pub(crate) struct Article {
    pub(crate) title: String,
    pub(crate) slug: String,
    /// Block markup.
    pub(crate) content: String,
    pub(crate) date: String,
    pub(crate) category: &'static str,
    pub(crate) tags: Vec<&'static str>,
}

pub(super) fn posts() -> anyhow::Result<Vec<Article>> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let day0 = time::Date::from_calendar_date(2024, time::Month::January, 1)?;
    let mut out = Vec::new();
    for i in 0..POSTS {
        let category = CATEGORIES[i % CATEGORIES.len()];
        let mut topics: Vec<&str> = Vec::new();
        while topics.len() < 10 {
            let w = TOPICS[(next(&mut seed) % TOPICS.len() as u64) as usize];
            if !topics.contains(&w) {
                topics.push(w);
            }
        }
        let mut tags: Vec<&'static str> = Vec::new();
        while tags.len() < 3 {
            let t = TAGS[(next(&mut seed) % TAGS.len() as u64) as usize];
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        let mut paragraphs = Vec::new();
        for p in 0..3 {
            let mut words = Vec::new();
            for k in 0..36 {
                words.push(if k % 3 == 2 {
                    topics[(p * 4 + k / 3) % topics.len()]
                } else {
                    FILLER[(next(&mut seed) % FILLER.len() as u64) as usize]
                });
            }
            paragraphs
                .push(format!("<!-- wp:paragraph -->\n<p>{}.</p>\n<!-- /wp:paragraph -->", words.join(" ")));
        }
        let n = i + 1;
        let date = day0 + time::Duration::days(i as i64);
        out.push(Article {
            title: format!("{} note {n}: the {} and the {}", capitalise(category), topics[0], topics[1]),
            slug: format!("{category}-note-{n}"),
            content: paragraphs.join("\n\n"),
            date: format!("{date} 10:00:00"),
            category,
            tags,
        });
    }
    Ok(out)
}

pub(crate) fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Pages a reader reaches by links without searching: the posts, the two pages (About and WordPress's
/// Sample Page), and every list page with its paging (the home page's, each category's, each tag's).
pub(super) fn site_size(posts: &[Article]) -> usize {
    let pages = |n: usize| n.div_ceil(PER_PAGE);
    let mut per_term: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for p in posts {
        *per_term.entry(("category", p.category)).or_default() += 1;
        for t in &p.tags {
            *per_term.entry(("tag", t)).or_default() += 1;
        }
    }
    posts.len() + 2 + pages(posts.len()) + per_term.values().map(|n| pages(*n)).sum::<usize>()
}
