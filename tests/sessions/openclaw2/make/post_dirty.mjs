// Leave one session with a stale projection (session_transcript_index_state.needs_rebuild = 1,
// indexed_seq < max(seq)) so a reader's fallback path can be tested.  No search runs afterwards.
const DIST = process.env.OPENCLAW_DIST;  // the installed openclaw@2026.9.6 package's dist/ (build.sh sets it)
const { SessionManager } = await import(`${DIST}/plugin-sdk/agent-sessions.js`);
const tr = await import(`${DIST}/plugin-sdk/session-transcript-runtime.js`);
const STATE = process.env.OPENCLAW_STATE_DIR;
const target = { agentId: "main", sessionKey: "agent:main:subagent:11111111-2222-4333-8444-555555555555",
  sessionId: "00000000-0000-4000-8000-000000000005", storePath: `${STATE}/agents/main/agent/openclaw-agent.sqlite` };
const sm = SessionManager.open(target);
console.log("leaf control:", JSON.stringify(sm.appendLeafControl({ targetId: "0005-e01", appendParentId: "0005-e01" })));
const res = await tr.appendSessionTranscriptMessageByIdentity({ ...target, message: { role: "assistant",
  content: [{ type: "text", text: "Recount after rewind: uno dos tres. dirty-marker" }], api: "x", provider: "x", model: "x",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop", timestamp: Date.now() } });
console.log("append after rewind (projection left dirty):", res.appended, res.messageId, "parent", res.effectiveParentId);
process.exit(0);
