//! The side-effect guard's built-in rule table (issue 60): harmless paths, fields only an act carries,
//! the fields of a published text, and the rules by path, field and control label that
//! [`super::writes`] tries in its order of evidence (its module docs).

/// Paths of harmless writes, checked before any rule.
pub(super) const SAFE_PATH: &str = r"(?i)(^|[/_.-])(search|searches|find|filter|filters|query|queries|results|result|lookup|quote|quotes|estimate|calculate|calculator|convert|translate|translation|availability|fares|flights|autocomplete|suggest|login|log-in|signin|sign-in|authenticate|logout|log-out|signout|sign-out|auth|oauth|oauth2|session|sessions|token|csrf|cart|cart/add|add-?to-?cart|addtocart|cart/update|basket|wishlist|compare|collect|beacon|analytics|track|telemetry|log|logs|metrics|rum|graphql/query|jobs|sign_out|sign_in|rates|rating|markdown|preview|preview_markdown|transform|drafts|autosaves|notifications|validate)([/_.?-]|$)";

/// The [`SAFE_PATH`] words that read what the path names after them (`/search/posts` searches posts): an
/// act's path after them is what they read, not an act. The other safe words (a log-in prefix, a flights
/// or jobs section, a quote) do not hide an act's path after them (`/oauth2/comments/post`).
pub(super) const SAFE_READS: &[&str] = &[
    "search",
    "searches",
    "find",
    "filter",
    "filters",
    "query",
    "queries",
    "results",
    "result",
    "lookup",
    "autocomplete",
    "suggest",
    "compare",
    "preview",
    "translate",
    "translation",
    "markdown",
    "validate",
];

/// Field names only an act carries: (rule, why, pattern).
pub(super) const ACT_FIELDS: &[(&str, &str, &str)] = &[
    (
        "payment",
        "pays or submits card details",
        r"^(card_?number|cardnumber|cc_?(number|num)|cvv|cvc|cvv2|card_?cvc|card_?cvv|security_?code|card\[number\]|payment\[cc_number\]|tan)$",
    ),
    (
        "purchase",
        "places an order or confirms a purchase",
        r"^(place_?order|confirm_?order|purchase|submit_?order)$",
    ),
    (
        "message",
        "sends a message or email",
        r"^(recipient|recipients|to_?email|to_?address|to_?user(name)?|cc|bcc|send_?to|message\[to\])$",
    ),
    ("post", "saves a page edit", r"^(do\[save\]|wptextbox1)$"),
    // The fourteenth round: a sworn statement (a benefit claim's, an appointment's attestation).
    ("post", "submits a signed attestation", r"^(attestation|attest|attested)$"),
    (
        "account",
        "creates or changes an account",
        r"^(password[-_]?(confirm|confirmation|again|repeat|validate|verify|2)|confirm_?password|repeat_?password|password2|passwordconfirm|new_?password|current_?password|user\[password_confirmation\]|pass2)$",
    ),
];

/// Fields that hold a published text when their value is long or multi-line.
pub(super) const TEXT_FIELDS: &str = r"(^|[\[_-])(body|comment|comments|review|reply|content|message|text|post|detail|details|description|note|raw)(\]|$)";
/// Fields that hold a published text's title (a post when a body comes with it).
pub(super) const TITLE_FIELDS: &str = r"(^|[\[_-])(title|subject|headline)(\]|$)";
/// A password field (a log-in form when no confirmation comes with it).
pub(super) const PASSWORD_FIELD: &str = r"(^|[\[_-])(password|passwd|pass|pwd)(\]|$)";

/// One built-in rule: (id, why, methods, path, field names, control label). Empty patterns match nothing.
pub(super) type Row =
    (&'static str, &'static str, &'static [&'static str], &'static str, &'static str, &'static str);

/// The built-in rules, in the order they are tried.
pub(super) const RULES: &[Row] = &[
    (
        "purchase",
        "places an order or confirms a purchase",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(checkout|place-?order|placeorder|purchase|buy-?now|order/(create|submit|confirm|place)|orders/(create|submit|confirm|place))(/|$|\.)",
        r"^(place_?order|confirm_?order|purchase)$",
        r"^(place (your |\w+ )?order|buy now|complete (your )?(order|purchase)|confirm (order|purchase)|submit order|purchase|bestellen|jetzt kaufen|kaufen|zahlungspflichtig bestellen|commander|acheter|comprar|finalizar (compra|pedido)|購入する|注文を確定する|注文する|bestellen en betalen|bestelling plaatsen|afrekenen|valider (ma|la) commande|confirmer (ma|la) commande|(kostenpflichtig|zahlungspflichtig|verbindlich|jetzt verbindlich) (bestellen|buchen|abschließen|kaufen)|jetzt (verbindlich )?abschließen|koupit|objednat|zamów|kup teraz|comprar ahora|完成訂位|訂購|購買|確認訂單|立即購買|구매|주문하기|결제하기|acquista( ora)?|conferma (l'|l’)?ordine|procedi all'ordine|nu kopen|bestelling afronden|köp|köp nu|slutför (köp|beställning|köpet)|beställ|kjøp|kjøp nå|fullfør (kjøp|bestilling)|køb|køb nu|gennemfør (køb|bestilling)|osta|tilaa|osta nyt|kupuję i płacę|zamawiam i płacę|złóż zamówienie|satın al|siparişi (tamamla|onayla)|finalizar compra|comprar agora|купить|оформить заказ|подтвердить заказ|提交订单|立即购买|beli sekarang|buat pesanan|đặt hàng|mua ngay|fazer pedido|finalizar pedido|make (an )?offer|faire une offre|angebot (machen|senden)|hacer (una )?oferta|fazer oferta|注文を確定|購入手続きへ進む)$",
    ),
    (
        "payment",
        "pays or submits card details",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(pay|payment|payments|charge|charges|billing/submit|paiement|pago|pagar|payer|zahlung|bezahlen|betaling)(/|$|\.)",
        r"^(card_?number|cc_?(number|num)|cvv|cvc|card_?cvc|card_?cvv)$",
        r"^(pay|pay now|pay \S.*|confirm payment|submit payment|pagar|payer|bezahlen|jetzt bezahlen|支払う|(valider|confirmer|bestellen|bestätigen|confirmar) (et|und|en|y|e) (payer|bezahlen|betalen|pagar)|betalen|pagar \S.*|payer \S.*|je donne|faire un don|donner|spenden|jetzt spenden|donar|doar|donate( now)?|paga|paga ora|betaal|nu betalen|betala|betal|maksa|zapłać|öde|ödeme yap|оплатить|支付|立即支付|付款|결제|bayar|thanh toán)$",
    ),
    (
        "booking",
        "books or reserves",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(book|booking|bookings|reserve|reservation|reservations)(/|$|\.)",
        "",
        r"^(book|book now|reserve|reserve now|confirm (booking|reservation)|complete (booking|reservation)|reservar|réserver|buchen|jetzt buchen|予約する|prenota|prenota ora|boek|boeken|nu boeken|reserveer|boka|boka tid|bestill time|varaa|zarezerwuj|rezervasyon yap|预订|立即预订|예약하기|予約を確定する|reservar agora|termin buchen|termin vereinbaren|agendar|agendar visita|prendre rendez-vous|borrow|ausleihen|emprunter|エントリー|応募する)$",
    ),
    (
        "post",
        "publishes a post, comment, review or reply",
        &["POST", "PUT"],
        r"(^|/)(posts|comment|comments|reply|replies|review|reviews|answers|publish|thread|threads|topic|topics)(/|$|\.)",
        r"^(comment|review|reply)$",
        r"^(post|publish|upload|reply|comment|add comment|post comment|submit review|post review|submit comment|post reply|publish post|cast|publicar|publier|veröffentlichen|投稿する|pubblica|invia commento|rispondi|plaatsen|reageer|publiceer|publicera|skicka kommentar|opublikuj|dodaj komentarz|yayınla|发布|发表评论|게시|опубликовать|send inn|skicka in|sende inn|indsend|lähetä hakemus|post to journal|書き込む|投稿|perguntar|ask( a)? question|ask questions|fazer pergunta|hacer (una )?pregunta|poser une question|indienen|odeslat|vložit inzerát)$",
    ),
    (
        "vote",
        "votes, likes, follows or subscribes",
        &["POST", "PUT"],
        r"(^|/)(vote|upvote|downvote|like|unlike|follow|unfollow|subscribe|subscribers|star)(/|$|\.)",
        "",
        r"^(upvote|downvote|vote|like|follow|subscribe|subscribe now|sign up for (the )?newsletter|star|add friend|endorse|watch|abonnieren|thema abonnieren|s'abonner|s'inscrire|suscribirse|inscrever-se|seguir|folgen|suivre|フォローする|kudos|sign (this|the) petition|unterschreiben|signer (la )?pétition|firmar|mitzeichnen|unterzeichnen|assinar|add your name|sign now|segui|iscriviti|mi piace|volgen|abonneren|vind ik leuk|följ|prenumerera|gilla|obserwuj|subskrybuj|takip et|abone ol|beğen|подписаться|нравится|关注|订阅|点赞|팔로우|구독|좋아요|いいね|チャンネル登録)$",
    ),
    (
        "message",
        "sends a message or email",
        &["POST", "PUT"],
        r"(^|/)(message|messages)(/(send|new|create|reply))?(/?$|\?|\.)|(^|/)(send|sendmail|contact|compose|mail|chat|share/email)(/|$|\.)",
        "",
        r"^(send|send message|send email|send now|email this|share by email|enviar|envoyer|senden|送信|invia|invia messaggio|verstuur|verzenden|versturen|skicka|send|lähetä|wyślij|gönder|отправить|发送|보내기|전송|送信する|enviar mensagem|enviar mensaje|envoyer le message|nachricht senden|問い合わせる|お問い合わせ|send gift|send as gift|anfrage senden|demander une visite)$",
    ),
    (
        "delete-account",
        "deletes or closes an account",
        &["POST", "PUT", "PATCH", "DELETE"],
        r"(delete|remove|close|deactivate|cancel)[-_/]?(account|profile|membership|user)(/|$|\.)",
        "",
        r"^(delete|close|deactivate) (my )?(account|profile)$",
    ),
    (
        "account",
        "creates or changes an account",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(register|registration|signup|sign-up|create-?account|join)(/|$|\.)|(^|/)(account|settings|profile)/(edit|update|password|email)(/|$|\.)",
        "",
        r"^(create (an |my )?account|sign up|register|join now|save changes|update (my )?(profile|account)|change password)$",
    ),
    (
        "delete",
        "deletes content",
        &["POST", "DELETE"],
        r"(^|/)(delete|destroy|remove)(/|$|\.)",
        "",
        r"^(delete|delete (this )?(post|comment|page|item|review)|remove (this )?(post|comment)|eliminar|supprimer|löschen|excluir|削除|elimina|verwijderen|verwijder|ta bort|radera|slett|slet|poista|usuń|sil|удалить|删除|삭제|résilier|résilier mon contrat|kündigen|vertrag kündigen|jetzt kündigen|opzeggen|disdire|cancelar (assinatura|contrato|suscripción))$",
    ),
    (
        "post",
        "runs a command on what the user runs or owns",
        &["POST", "PUT", "PATCH"],
        "",
        "",
        r"^(run|run now|run job|run pipeline|run workflow|build|build now|deploy|deploy now|redeploy|abort|cancel build|purge( all| cache)?|freeze( card)?|unfreeze( card)?|unlock|clock in|clock out|trigger( build| run| pipeline)?)$",
    ),
    (
        "delete-account",
        "deletes or closes an account",
        &["DELETE"],
        r"(^|/)(account|accounts|profile|me|user|users)(/[^/]*)?$",
        "",
        "",
    ),
];

/// Field names of a job application's attachments.
pub(super) const RESUME: &[&str] =
    &["resume", "cv", "cover_letter", "coverletter", "resume_1", "resume_text"];

/// Path words under which DELETE, PUT and PATCH change only the session's own state.
pub(super) const VERB_SAFE: &[&str] = &[
    "cart",
    "carts",
    "basket",
    "typing",
    "settings",
    "logout",
    "sign_out",
    "signout",
    "session",
    "sessions",
    "notifications",
    "notification",
    "drafts",
    "draft",
    "checkout",
    "checkouts",
    "preferences",
    "prefs",
    "player",
    "markers",
    "search",
    "mark-read",
    "ack",
];
