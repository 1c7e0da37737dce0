//! What a body's shape says it does, whatever its path is called (issue 60, the tenth round, written
//! from the eighth table's failures):
//!
//! - a **trade order**: a side (`side`, `direction`, `transactionType`: buy or sell) with an order's type
//!   (market, limit, stop) or its time in force (GTC, IOC, FOK), or with a size or a quantity and a price:
//!   a broker's or an exchange's order, placed in the user's name;
//! - a **text to a number**: a phone number under a recipient's key (`destination`, `to`, `msisdn`,
//!   `mobile`, `phone`, `number`) with a text under a message's key (`message`, `text`, `body`, `msg`):
//!   an SMS or a chat message sent.
//!
//! A path that computes what the act would cost (`/margincalculator`, `/order/test`, `/orders/whatif`,
//! `/sms/price`) does neither.

/// Keys of an order's side.
const SIDE_KEYS: &[&str] =
    &["side", "direction", "transactiontype", "transaction_type", "order_side", "orderside", "action"];
/// Keys of an order's type or its time in force.
const ORDER_TYPE_KEYS: &[&str] = &[
    "ordertype",
    "order_type",
    "type",
    "child_order_type",
    "time_in_force",
    "timeinforce",
    "tif",
    "validity",
];
/// Values of an order's type or time in force.
const ORDER_TYPES: &[&str] =
    &["market", "limit", "stop", "stop_limit", "stoplimit", "gtc", "ioc", "fok", "day"];
/// Keys of an order's size and price.
const SIZE_KEYS: &[&str] = &["size", "quantity", "qty", "amount", "volume", "units"];
const PRICE_KEYS: &[&str] = &["price", "limitprice", "limit_price", "level"];
/// Path words of a computation of what an order would cost.
const COMPUTES: &[&str] = &[
    "calc",
    "margin",
    "estimate",
    "preview",
    "quote",
    "simulate",
    "test",
    "whatif",
    "price",
    "pricing",
    "cost",
    "fee",
    "validate",
    "preflight",
];

/// Keys of a message's recipient number, and of its text.
const NUMBER_KEYS: &[&str] =
    &["destination", "to", "msisdn", "mobile", "phone", "numbers", "recipient", "receiver"];
const TEXT_KEYS: &[&str] = &["message", "text", "body", "msg", "content", "sms"];

/// The act a body's shape names, if it names one (see the module docs): the rule and what matched.
pub(crate) fn body_act(path: &str, leaves: &[(String, String)]) -> Option<(&'static str, String)> {
    let leaf = |k: &str| super::facts::key_leaf(k).to_string();
    let value = |set: &[&str]| {
        leaves
            .iter()
            .find(|(k, v)| set.contains(&leaf(k).as_str()) && !v.is_empty())
            .map(|(_, v)| v.to_ascii_lowercase())
    };
    // A computation of what the act would cost (`/order/test`, `/orders/whatif`, `/sms/price`) does none.
    let computes =
        path.split('/').flat_map(super::acts::words).any(|w| COMPUTES.iter().any(|c| w.starts_with(c)));
    if computes {
        return None;
    }
    let side = value(SIDE_KEYS).filter(|v| matches!(v.as_str(), "buy" | "sell" | "b" | "s"));
    if side.is_some() {
        let typed = leaves.iter().any(|(k, v)| {
            ORDER_TYPE_KEYS.contains(&leaf(k).as_str())
                && ORDER_TYPES.contains(&v.to_ascii_lowercase().as_str())
        });
        let sized = value(SIZE_KEYS).is_some() && value(PRICE_KEYS).is_some();
        if typed || sized {
            return Some(("purchase", "a trade order (a side with its order type or size)".into()));
        }
    }
    let phone = |v: &str| {
        let digits = v.chars().filter(|c| c.is_ascii_digit()).count();
        digits >= 7 && v.chars().all(|c| c.is_ascii_digit() || matches!(c, '+' | ' ' | ',' | '-'))
    };
    let number = leaves.iter().find(|(k, v)| NUMBER_KEYS.contains(&leaf(k).as_str()) && phone(v));
    if let Some((k, _)) = number {
        if value(TEXT_KEYS).is_some() {
            return Some(("message", format!("a text to the number in {k}")));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_act() {
        let l = |pairs: &[(&str, &str)]| {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
        };
        type Leaves = Vec<(String, String)>;
        let rows: &[(&str, Leaves, Option<&str>)] = &[
            (
                "/v1/orders",
                l(&[("side", "BUY"), ("type", "LIMIT"), ("price", "1"), ("size", "2")]),
                Some("purchase"),
            ),
            (
                "/positions/otc",
                l(&[("direction", "SELL"), ("ordertype", "MARKET"), ("size", "2")]),
                Some("purchase"),
            ),
            (
                "/v2/margincalculator",
                l(&[("transactiontype", "BUY"), ("quantity", "5"), ("price", "9")]),
                None,
            ),
            ("/v1/quotes", l(&[("side", "buy"), ("symbol", "AAPL")]), None),
            ("/wa/api/v1/msg", l(&[("destination", "919999999999"), ("message", "hi")]), Some("message")),
            ("/v1/lookup", l(&[("number", "919999999999")]), None),
            ("/v1/orders", l(&[("to", "12"), ("message", "gift note")]), None),
        ];
        for (path, leaves, want) in rows {
            assert_eq!(body_act(path, leaves).map(|h| h.0), *want, "{path} {leaves:?}");
        }
    }
}
