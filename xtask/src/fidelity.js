// The browser side of `cargo xtask bench fidelity`: load one page N times in headless Chromium (Playwright
// driving the system Chromium through executablePath) and record, per load, every request the page made
// and how it ended, the page text's and the screenshot's SHA-256, and (webfreeze) the replay report.
//
// argv[2] is JSON: {pw, chromium, url, loads, proxy?, har?, webfreeze?}
//   proxy: "127.0.0.1:PORT" for webfreeze replay and mitmproxy server replay (certificates ignored);
//   har:   a HAR file for Playwright's own routeFromHAR (notFound: abort);
//   webfreeze: reset the replay episode before each load and read its report after it.
"use strict";
const crypto = require("crypto");
const cfg = JSON.parse(process.argv[2]);
const { chromium } = require(cfg.pw + "/node_modules/playwright-core");

const sha = (b) => crypto.createHash("sha256").update(b).digest("hex");
// Every browser call is bounded: a replayer that never answers must not stall the benchmark.
const bounded = (p, ms, fallback) =>
  Promise.race([p.catch(() => fallback), new Promise((r) => setTimeout(() => r(fallback), ms))]);

(async () => {
  const browser = await chromium.launch({
    executablePath: cfg.chromium,
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      // No HTTPS-Upgrades: an http:// capture is asked for as http:// under every system alike.
      "--disable-features=NetworkTimeServiceQuerying,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
    ],
    proxy: cfg.proxy ? { server: "http://" + cfg.proxy, bypass: "<-loopback>" } : undefined,
  });
  const loads = [];
  for (let i = 0; i < cfg.loads; i++) {
    if (cfg.webfreeze) await fetch(`http://${cfg.proxy}/__webfreeze/reset`, { method: "POST" });
    const ctx = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1024, height: 768 },
      serviceWorkers: "block",
    });
    if (cfg.har) await ctx.routeFromHAR(cfg.har, { notFound: "abort" });
    const page = await ctx.newPage();
    page.setDefaultTimeout(10000);
    const seen = new Map();
    const pending = [];
    page.on("request", (r) => {
      if (!r.url().startsWith("data:") && !r.url().startsWith("blob:")) {
        seen.set(r, { url: r.url(), status: null, failed: false, marker: null });
      }
    });
    page.on("requestfinished", (r) => {
      const rec = seen.get(r);
      if (!rec) return;
      pending.push(
        r.response().then((res) => {
          if (res) {
            rec.status = res.status();
            rec.marker = res.headers()["x-webfreeze"] || null;
          }
        }).catch(() => {}),
      );
    });
    page.on("requestfailed", (r) => {
      const rec = seen.get(r);
      if (rec) rec.failed = true;
    });
    let error = null;
    try {
      await page.goto(cfg.url, { waitUntil: "load", timeout: 30000 });
    } catch (e) {
      error = String(e).split("\n")[0];
    }
    await bounded(page.waitForLoadState("networkidle", { timeout: 5000 }), 6000, null);
    const text = await bounded(page.evaluate(() => (document.body ? document.body.innerText : "")), 5000, "");
    const shot = await bounded(page.screenshot({ timeout: 10000 }), 11000, Buffer.alloc(0));
    await bounded(Promise.all(pending), 5000, null);
    let report = null;
    if (cfg.webfreeze) report = await (await fetch(`http://${cfg.proxy}/__webfreeze/report`)).json();
    loads.push({ error, requests: [...seen.values()], text: sha(text), shot: sha(shot), report });
    await bounded(ctx.close(), 5000, null);
  }
  await bounded(browser.close(), 5000, null);
  process.stdout.write(JSON.stringify({ loads }), () => process.exit(0));
})().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
