//! CDP commands by name with JSON parameters, for what chromiumoxide's typed API lags behind Chromium
//! in (the accessibility tree, the layout snapshot, file inputs).

use chromiumoxide::page::Page;

use super::{bounded, BrowserError, Session};

/// A CDP command by name with JSON parameters and result.
#[derive(Debug)]
struct RawCommand {
    method: &'static str,
    params: serde_json::Value,
}

impl serde::Serialize for RawCommand {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl chromiumoxide::types::Method for RawCommand {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        self.method.into()
    }
}

impl chromiumoxide::types::Command for RawCommand {
    type Response = serde_json::Value;
}

impl Session {
    /// A CDP call by name on the active tab (for tools that need what the session does not wrap).
    pub async fn cdp(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let page = self.page()?;
        self.raw(&page, "a CDP call", method, params).await
    }

    /// A CDP call by name, for what chromiumoxide's typed protocol reads too strictly (the
    /// accessibility tree's enums grow with every Chromium).
    pub(super) async fn raw(
        &self,
        page: &Page,
        what: &'static str,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, BrowserError> {
        let r = bounded(self.opts.page_timeout, what, page.execute(RawCommand { method, params })).await?;
        Ok(r.result)
    }
}
