//! GET links that act: exploration and the crawl follow no link a side-effect guard would not let a GET
//! do. A link is judged by its URL and its text:
//! - query parameters that act on the platforms agents meet (WooCommerce's `?add-to-cart=`, MediaWiki's and
//!   DokuWiki's `action=`/`do=` values that change a page, WordPress's `?action=logout`, `?replytocom=`,
//!   Magento's `/checkout/cart/delete`, generic `?action=delete`, `?unsubscribe=`, `?vote=`);
//! - path pieces that act (`/logout`, `/delete`, `/unsubscribe`, `/cart/add`, `/checkout`, ...);
//! - words in the link's text or URL, in several languages (log out, delete, remove, unsubscribe, cancel,
//!   buy, and their French, German, Spanish, Italian, Portuguese and Dutch forms).

/// Query parameters whose presence acts (any value).
const ACTING_PARAMS: &[&str] = &[
    "add-to-cart",
    "add_to_cart",
    "addtocart",
    "remove_item",
    "remove-item",
    "removefromcart",
    "empty-cart",
    "empty_cart",
    "unsubscribe",
    "subscribe",
    "vote",
    "upvote",
    "downvote",
    "like",
    "follow",
    "replytocom",
    "logout",
    "delete",
    "undo",
    "rollback",
    "_wpnonce",
    "nonce",
    "token",
    "csrf",
    "sectok",
];

/// `action=` / `do=` values that act (MediaWiki, DokuWiki, WordPress and generic handlers).
const ACTING_VALUES: &[&str] = &[
    "delete",
    "remove",
    "logout",
    "log-out",
    "signout",
    "unsubscribe",
    "subscribe",
    "watch",
    "unwatch",
    "rollback",
    "revert",
    "undo",
    "purge",
    "markpatrolled",
    "protect",
    "unprotect",
    "edit",
    "submit",
    "save",
    "lock",
    "unlock",
    "trash",
    "untrash",
    "spam",
    "approve",
    "unapprove",
    "vote",
    "like",
    "buy",
    "add",
    "resendpwd",
];

/// Path pieces that act.
const ACTING_PATHS: &[&str] = &[
    "logout",
    "log-out",
    "log_out",
    "signout",
    "sign-out",
    "sign_out",
    "delete",
    "destroy",
    "remove",
    "unsubscribe",
    "subscribe",
    "deactivate",
    "cancel",
    "checkout",
    "purchase",
    "buy",
    "vote",
    "upvote",
    "downvote",
    "cart/add",
    "cart/delete",
    "cart/remove",
    "wishlist/add",
    "follow",
    "unfollow",
    "empty-cart",
    // log-out paths in other languages
    "salir",
    "abmelden",
    "ausloggen",
    "deconnexion",
    "uitloggen",
    "sair",
    "esci",
];

/// Words of a link's text that act, in several languages.
const ACTING_WORDS: &[&str] = &[
    // English
    "log out",
    "logout",
    "sign out",
    "delete",
    "remove",
    "unsubscribe",
    "subscribe",
    "cancel",
    "deactivate",
    "empty cart",
    "add to cart",
    "buy now",
    "checkout",
    // French
    "déconnexion",
    "se déconnecter",
    "supprimer",
    "se désabonner",
    "s'abonner",
    "ajouter au panier",
    "acheter",
    // German
    "abmelden",
    "ausloggen",
    "löschen",
    "entfernen",
    "abbestellen",
    "abonnieren",
    "in den warenkorb",
    "kaufen",
    // Spanish and Portuguese
    "cerrar sesión",
    "salir",
    "eliminar",
    "borrar",
    "darse de baja",
    "suscribirse",
    "añadir al carrito",
    "comprar",
    "sair",
    "excluir",
    "adicionar ao carrinho",
    // Italian
    "esci",
    "disconnetti",
    "elimina",
    "cancella",
    "annulla iscrizione",
    "aggiungi al carrello",
    "acquista",
    // Dutch
    "uitloggen",
    "afmelden",
    "verwijderen",
    "in winkelwagen",
];

fn word_in(hay: &str, w: &str) -> bool {
    hay.match_indices(w).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + w.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// Why following this link would act, if it would (its URL and text; see the module docs).
pub fn acts(url: &str, text: &str) -> Option<String> {
    if let Ok(u) = url::Url::parse(url) {
        for (k, v) in u.query_pairs() {
            let (k, v) = (k.to_ascii_lowercase(), v.to_ascii_lowercase());
            if ACTING_PARAMS.contains(&k.as_str()) {
                return Some(format!("query parameter {k}"));
            }
            if matches!(k.as_str(), "action" | "do" | "op" | "task" | "cmd") {
                // DokuWiki's `do[save]`-style values and MediaWiki's `action=` alike.
                if let Some(a) = ACTING_VALUES.iter().find(|a| v == **a || v.starts_with(&format!("{a}_"))) {
                    return Some(format!("{k}={a}"));
                }
            }
        }
        let path = u.path().to_ascii_lowercase();
        if let Some(p) = ACTING_PATHS.iter().find(|p| word_in(&path, p)) {
            return Some(format!("path {p}"));
        }
    }
    let t = text.trim().to_lowercase();
    ACTING_WORDS.iter().find(|w| word_in(&t, w)).map(|w| format!("link text {w:?}"))
}

#[cfg(test)]
mod tests {
    use super::acts;

    #[test]
    fn links_that_act_and_links_that_read() {
        for (url, text, acting) in [
            ("https://shop.test/product/mug/?add-to-cart=42", "Add to basket", true),
            ("https://shop.test/?add-to-cart=42", "", true),
            ("https://w.test/index.php?title=Oak&action=delete", "", true),
            ("https://w.test/index.php?title=Oak&action=watch", "Watch", true),
            ("https://w.test/doku.php?id=a&do=logout", "", true),
            ("https://b.test/wp-login.php?action=logout&_wpnonce=1", "", true),
            ("https://b.test/post/1/?replytocom=5#respond", "Reply", true),
            ("https://n.test/list?unsubscribe=1", "", true),
            ("https://s.test/account", "Abmelden", true),
            ("https://s.test/compte", "Se déconnecter", true),
            ("https://s.test/cuenta/salir", "", true),
            ("https://s.test/admin/users/3/delete", "", true),
            ("https://s.test/checkout", "Proceed", true),
            ("https://s.test/cart/remove?id=3", "x", true),
            ("https://s.test/booking/42", "Cancel booking", true),
            // Reads.
            ("https://shop.test/product/mug/", "Mug", false),
            ("https://w.test/index.php?title=Oak&action=history", "History", false),
            ("https://w.test/doku.php?id=plants:oak", "Oaks", false),
            ("https://s.test/search?q=delete+key", "delete key results", true),
            ("https://s.test/search?q=mug&page=2", "Next page", false),
            ("https://s.test/login", "Log in", false),
            ("https://s.test/cart", "Cart", false),
            ("https://w.test/wiki/Salinity", "Salinity", false),
            ("https://w.test/wiki/Remover_(band)", "Remover", false),
        ] {
            assert_eq!(acts(url, text).is_some(), acting, "{url} {text:?}: {:?}", acts(url, text));
        }
    }
}
