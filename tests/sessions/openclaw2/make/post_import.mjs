// Exercise OpenClaw 2026.9.6's own SQLite transcript writers on the imported fixture.
// Run with OPENCLAW_STATE_DIR / OPENCLAW_CONFIG_PATH / HOME pointing at the fixture.
const DIST = process.env.OPENCLAW_DIST;  // the installed openclaw@2026.9.6 package's dist/ (build.sh sets it)
const { SessionManager } = await import(`${DIST}/plugin-sdk/agent-sessions.js`);
const tr = await import(`${DIST}/plugin-sdk/session-transcript-runtime.js`);
const store = await import(`${DIST}/plugin-sdk/session-store-runtime.js`);

const STATE = process.env.OPENCLAW_STATE_DIR;
const dbPath = (agent) => `${STATE}/agents/${agent}/agent/openclaw-agent.sqlite`;
const sid = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }], api: "openai-responses", provider: "openai", model: "gpt-x", usage, stopReason: "stop", timestamp: Date.now() });
const log = (...a) => console.log(...a);

// 1. Main session: branch back to an earlier entry with SessionManager (leaf control), compaction, reset boundary.
{
  const target = { agentId: "main", sessionKey: "agent:main:main", sessionId: sid(1), storePath: dbPath("main") };
  const sm = SessionManager.open(target);
  log("main leaf before:", sm.getLeafId());
  sm.branch("0001-e13");                       // explicit navigation (no-op position) ...
  sm.branch("0001-e12");                       // ... then re-branch from the user turn before the last reply
  const a1 = sm.appendMessage(assistant("Regenerated answer: papayas are tropical and sweet. regen-marker"));
  log("regenerated assistant:", a1);
  const big = "Guava notes: " + "guava is a tropical fruit rich in vitamin C. ".repeat(60) + "guava-big-marker";
  const u = sm.appendMessage(user("Tell me about guava please guava-marker"));
  const b = sm.appendMessage(assistant(big));
  log("big assistant (zstd candidate):", b);
  const c = sm.appendCompaction("Summary: France, ls, mangoes, papayas, guava.", u, 9999);
  log("compaction:", c);
  const r = sm.appendResetBoundary("new");
  log("reset boundary:", r);
  sm.appendMessage(user("First message after /new in main: kumquat-marker"));
  sm.appendMessage(assistant("Kumquats are small citrus fruit."));
  sm.flushPendingPersistence?.();
}

// 2. Plain append through the plugin-SDK accessor (what a channel/gateway writer uses).
{
  const res = await tr.appendSessionTranscriptMessageByIdentity({
    agentId: "main", sessionKey: "agent:main:telegram:direct:5550001", sessionId: sid(2), // sessionId is required
    message: user("follow-up in the private DM: bring the insurance card insurance-marker"),
  });
  log("dm append:", res.appended, res.messageId, "parent", res.effectiveParentId);
}

// 3. Rollover: give an existing key a brand-new sessionId (like daily/idle reset). The old window stays.
{
  const key = "agent:main:webchat:direct:alice";
  const old = store.getSessionEntry({ agentId: "main", sessionKey: key });
  await store.upsertSessionEntry({ agentId: "main", sessionKey: key,
    entry: { ...old, sessionId: sid(17), previousSessionId: old.sessionId, sessionStartedAt: Date.now(), updatedAt: Date.now() } });
  const res = await tr.appendSessionTranscriptMessageByIdentity({ agentId: "main", sessionKey: key, sessionId: sid(17),
    message: user("new day, new session for alice rollover-marker") });
  log("rollover append:", res.appended, res.messageId);
}

// 4. Brand-new session created by the writer.
{
  const key = "agent:main:telegram:direct:5550002";
  await store.upsertSessionEntry({ agentId: "main", sessionKey: key,
    entry: { sessionId: sid(18), updatedAt: Date.now(), chatType: "direct", channel: "telegram" } });
  for (const m of [user("hello from a new telegram contact newcontact-marker"), assistant("Welcome, new contact!")]) {
    const res = await tr.appendSessionTranscriptMessageByIdentity({ agentId: "main", sessionKey: key, sessionId: sid(18), message: m });
    log("new-session append:", res.appended, res.messageId);
  }
}

// 5. Delete a session with a transcript archive (session_transcript_archives + *.jsonl.deleted.*.zst).
{
  const deleted = await store.deleteSessionEntry({ agentId: "main", sessionKey: "agent:main:discord:channel:987654", archiveTranscript: true });
  log("deleted discord channel:", JSON.stringify(deleted));
}
// 6. Rewind ("leaf" control row) in the private DM, then append on the rewound branch.
//    The leaf control marks the projection dirty (needs_rebuild=1); a search-triggered reconcile rebuilds it.
{
  const target = { agentId: "main", sessionKey: "agent:main:telegram:direct:5550001", sessionId: sid(2), storePath: dbPath("main") };
  const sm = SessionManager.open(target);
  const ctl = sm.appendLeafControl({ targetId: "0002-e01", appendParentId: "0002-e01" });
  log("leaf control:", JSON.stringify(ctl));
  const res = await tr.appendSessionTranscriptMessageByIdentity({ ...target,
    message: assistant("Rewound answer: the dentist is Wednesday. rewind-marker") });
  log("append after rewind:", res.appended, res.messageId, "parent", res.effectiveParentId);
  const search = await import(`${DIST}/session-transcript-search-Bet2CIxE.mjs`);
  const r1 = await search.n({ agentId: "main", query: "dentist", limit: 25 }); // starts the background reconcile
  log("search while indexing:", r1.indexing, r1.hits.length);
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const r2 = search.r({ agentId: "main", query: "dentist", limit: 25 });
    if (!r2.indexing) { log("search after reconcile:", JSON.stringify(r2.hits.map((h) => [h.sessionKey, h.messageId, h.role]))); break; }
  }
}
process.exit(0);
