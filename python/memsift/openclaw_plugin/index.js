// memsift for OpenClaw: the memory slot's memory_search and memory_get, answered by memsift.
//
// Each agent is served by one long-lived `memsift mcp --openclaw --agent <id>` child, spoken to over stdio MCP
// (newline-delimited JSON-RPC) by the small client below: started on the first call (about 1 s), then a few ms a
// call. memsift's JSON comes back unchanged, the way OpenClaw's own tools return theirs ({content, details});
// failures come back in memory-core's error shapes, with an `action` saying how to fix them.
//
// Plain ESM with no dependencies and no build step: it runs as shipped, under OpenClaw or a bare `node`.

import { spawn } from "node:child_process";

const PLUGIN_ID = "memsift";
const DEFAULT_COMMAND = "memsift";
const DEFAULT_DEADLINE_MS = 30_000; // memory-core's memory_search deadline
const STARTUP_MS = 60_000; // the first call also waits for memsift to open the index (and any local model)
const CLOSE_MS = 3_000; // how long stop() lets a child exit on stdin EOF before it is killed
const MAX_LINE_BYTES = 32 * 1024 * 1024;
const PROTOCOL_VERSION = "2025-06-18";
const SESSION_META_KEY = "memsift/sessionKey"; // the calling session, in tools/call's _meta (which no model can set)

// The children outlive a plugin instance: OpenClaw evaluates this module once per instance (full, discovery, and
// again after each config reload), and a tool may run on any of them, so the pool is process-wide.
const POOL_KEY = Symbol.for("memsift.openclaw.children");
const pool = (globalThis[POOL_KEY] ??= new Map());

// memory-core's parameter schemas, verbatim (extensions/memory-core/src/memory-tool-contract.ts).
const MemorySearchSchema = {
  type: "object",
  properties: {
    query: { type: "string" },
    maxResults: { type: "integer", minimum: 1 },
    minScore: { type: "number" },
    corpus: { type: "string", enum: ["memory", "wiki", "all", "sessions"] },
  },
  required: ["query"],
  additionalProperties: false,
};
const MemoryGetSchema = {
  type: "object",
  properties: {
    path: { type: "string" },
    from: { type: "integer", minimum: 1 },
    lines: { type: "integer", minimum: 1 },
    corpus: { type: "string", enum: ["memory", "wiki", "all"] },
  },
  required: ["path"],
  additionalProperties: false,
};

const FILES = "MEMORY.md, USER.md, Markdown files recursively under memory/ and configured extra paths";
const SEARCH_DESCRIPTION =
  `Mandatory recall step: semantically search ${FILES} (and indexed session transcripts when session memory is ` +
  "on) before answering questions about prior work, decisions, dates, people, preferences, or todos. Session " +
  "results are transcript search references, not readable memory-file paths. `corpus=memory` restricts hits to " +
  "memory files; `corpus=sessions` searches indexed session transcripts under the same visibility rules as session " +
  "history tools; `corpus=all` searches both. memsift has no compiled-wiki corpus (`corpus=wiki`). If " +
  "response has disabled=true or stale=true, tell the user and include the warning/action guidance.";
const GET_DESCRIPTION =
  `Safe exact excerpt read from ${FILES}. Session transcript paths are unsupported; use the available ` +
  "session-history workflow for session hits. Defaults to a bounded excerpt when lines are omitted and includes " +
  "truncation/continuation info when more content exists. An error means the requested read failed, not that " +
  "memory is disabled.";

const HOW_TO_POINT =
  "set plugins.entries.memsift.config.command to the memsift executable's absolute path " +
  '(or command: "python3", args: ["-m", "memsift"])';

function jsonResult(payload) {
  return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }], details: payload };
}

/** A failure of the plugin or the child (not an answer of memsift's), with what to tell the user. */
class MemsiftFailure extends Error {
  constructor(code, message, action) {
    super(message);
    this.code = code;
    this.action = action;
  }
}

function settingsOf(pluginConfig) {
  const cfg = pluginConfig && typeof pluginConfig === "object" ? pluginConfig : {};
  const command = typeof cfg.command === "string" && cfg.command.trim() ? cfg.command.trim() : DEFAULT_COMMAND;
  const args = Array.isArray(cfg.args) ? cfg.args.map(String) : [];
  const env = {};
  if (isObject(cfg.env)) for (const [name, value] of Object.entries(cfg.env)) env[name] = String(value);
  const deadlineMs = Number.isInteger(cfg.deadlineMs) && cfg.deadlineMs >= 1000 ? cfg.deadlineMs : DEFAULT_DEADLINE_MS;
  return { command, args, env, deadlineMs };
}

/** The agent a call is for: OpenClaw's, else the one its session key names, else memsift's default. */
function agentOf(ctx) {
  if (typeof ctx?.agentId === "string" && ctx.agentId) return ctx.agentId;
  return /^agent:([^:]+):/.exec(ctx?.sessionKey ?? "")?.[1];
}

// ------------------------------------------------------------------ one memsift child, over stdio MCP

class MemsiftChild {
  constructor(settings, agentId, logger) {
    this.settings = settings;
    this.agentId = agentId;
    this.logger = logger;
    this.pending = new Map(); // JSON-RPC id -> {resolve, reject}
    this.nextId = 1;
    this.stderrTail = "";
    this.exited = false;
    // memsift answers with what it has (keyword results) by half the deadline; the rest is headroom before a kill.
    const deadlineS = String(settings.deadlineMs / 2000);
    const argv = [...settings.args, "mcp", "--openclaw", "--deadline", deadlineS];
    if (agentId) argv.push("--agent", agentId);
    this.argv = argv;
    this.child = spawn(settings.command, argv, {
      stdio: ["pipe", "pipe", "pipe"],
      // The whole environment: PATH, HOME, OPENCLAW_* (which config memsift reads) and provider API keys.
      env: { ...process.env, ...settings.env },
      windowsHide: true,
    });
    // Idle children must not keep a one-shot `openclaw agent` process alive; a pending call's timer does.
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream?.unref?.();
    this.child.stdin.on("error", () => {}); // EPIPE after a crash: the exit handler reports it
    let buffered = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) this.onLine(line);
      }
      if (buffered.length > MAX_LINE_BYTES) {
        this.fail(new MemsiftFailure("MEMSIFT_PROTOCOL", "memsift sent an over-long line", "Check the Gateway log."));
      }
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
      for (const line of chunk.split("\n")) {
        if (line.trim()) this.logger?.info?.(`memsift[${agentId ?? "default"}]: ${line.trim()}`);
      }
    });
    this.child.on("error", (error) => this.onExit(error));
    this.child.on("exit", (code, signal) => this.onExit(null, code, signal));
    this.exitedPromise = new Promise((resolve) => this.child.once("close", resolve));
    this.ready = this.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "openclaw-memsift", version: "1" },
    }, STARTUP_MS).then(() => this.notify("notifications/initialized"));
    this.ready.catch(() => {}); // each caller awaits it and reports the failure itself
  }

  send(message) {
    if (!this.exited) this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  notify(method, params) {
    this.send({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
  }

  /** One JSON-RPC request; a missed deadline kills the child (it is stuck: memsift has its own, shorter one). */
  request(method, params, timeoutMs, signal) {
    if (this.exited) return Promise.reject(this.exitError);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener?.("abort", onAbort);
        this.pending.delete(id);
      };
      const timer = setTimeout(() => {
        done();
        reject(new MemsiftFailure(
          "MEMSIFT_TIMEOUT",
          `memsift did not answer ${method} within ${timeoutMs} ms; it was stopped and starts again on the next call`,
          "Retry after a short wait. If it keeps timing out, raise plugins.entries.memsift.config.deadlineMs or " +
            "check the Gateway log (memsift's lines are prefixed memsift[agent]).",
        ));
        this.kill("SIGKILL");
      }, timeoutMs);
      // A cancelled call leaves the child running: memsift is told, and its late answer is dropped.
      const onAbort = () => {
        done();
        this.notify("notifications/cancelled", { requestId: id, reason: "cancelled by OpenClaw" });
        reject(signal.reason ?? abortError());
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener?.("abort", onAbort, { once: true });
      this.pending.set(id, {
        resolve: (value) => (done(), resolve(value)),
        reject: (error) => (done(), reject(error)),
      });
      this.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    });
  }

  onLine(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return this.logger?.warn?.(`memsift[${this.agentId ?? "default"}]: not JSON on stdout: ${line.slice(0, 200)}`);
    }
    if (message.method !== undefined) {
      // A request from the server: answer ping, decline the rest (this client offers no capabilities).
      if (message.id === undefined) return;
      if (message.method === "ping") return this.send({ jsonrpc: "2.0", id: message.id, result: {} });
      return this.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return; // the answer to a cancelled or timed-out call
    if (message.error) {
      waiter.reject(new MemsiftFailure(
        "MEMSIFT_PROTOCOL",
        `memsift refused the call: ${message.error.message ?? JSON.stringify(message.error)}`,
        "Install a memsift release that matches this plugin (pip install -U memsift), then reinstall the plugin.",
      ));
    } else {
      waiter.resolve(message.result);
    }
  }

  onExit(error, code, signal) {
    if (this.exited) return;
    this.exited = true;
    const stderr = this.stderrTail.trim().split("\n").slice(-5).join("\n");
    if (error?.code === "ENOENT") {
      this.exitError = new MemsiftFailure(
        "MEMSIFT_NOT_FOUND",
        `memsift was not found: cannot run ${this.settings.command} (${error.message})`,
        `Install memsift on the Gateway host (pip install memsift), or ${HOW_TO_POINT}.`,
      );
    } else if (error) {
      this.exitError = new MemsiftFailure(
        "MEMSIFT_SPAWN_FAILED",
        `cannot run ${this.settings.command}: ${error.message}`,
        `Check that ${this.settings.command} is executable by the Gateway's user, or ${HOW_TO_POINT}.`,
      );
    } else {
      this.exitError = new MemsiftFailure(
        "MEMSIFT_EXITED",
        `memsift exited (${signal ?? `code ${code}`}) before answering${stderr ? `: ${stderr}` : ""}`,
        "Fix what memsift reports, then retry (the next call starts it again); run " +
          `\`${[this.settings.command, ...this.argv].join(" ")}\` on the Gateway host to see it yourself.`,
      );
    }
    for (const waiter of [...this.pending.values()]) waiter.reject(this.exitError);
    if (pool.get(this.key) === this) pool.delete(this.key);
  }

  fail(error) {
    for (const waiter of [...this.pending.values()]) waiter.reject(error);
    this.kill("SIGKILL");
  }

  /** Kill the child; it leaves the pool at once, so the next call starts a fresh one without waiting for its exit. */
  kill(signal) {
    this.retired = true;
    if (pool.get(this.key) === this) pool.delete(this.key);
    if (!this.exited) this.child.kill(signal);
  }

  /** Stop: stdin EOF lets memsift close its stores; a child still there after CLOSE_MS is killed. */
  async close() {
    this.retired = true;
    if (pool.get(this.key) === this) pool.delete(this.key);
    if (this.exited) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.kill("SIGKILL"), CLOSE_MS);
    await this.exitedPromise;
    clearTimeout(timer);
  }

  /** tools/call; memsift's result dict (its structured content), or a MemsiftFailure. */
  async call(name, args, sessionKey, signal) {
    const started = await Promise.race([this.ready.then(() => true), abortPromise(signal)]);
    if (!started) throw signal.reason ?? abortError();
    const params = { name, arguments: args };
    if (sessionKey) params._meta = { [SESSION_META_KEY]: sessionKey };
    const result = await this.request("tools/call", params, this.settings.deadlineMs, signal);
    let data = result?.structuredContent;
    if (!isObject(data)) {
      const text = result?.content?.find?.((item) => item?.type === "text")?.text ?? "";
      try {
        data = JSON.parse(text);
      } catch {
        data = undefined;
      }
      if (!isObject(data)) {
        const action = "Check the call's arguments, or the Gateway log.";
        throw new MemsiftFailure("MEMSIFT_TOOL_ERROR", text || "memsift returned no result", action);
      }
    }
    return data;
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function abortError() {
  return Object.assign(new Error("memory tool call was cancelled"), { name: "AbortError" });
}

function abortPromise(signal) {
  if (!signal) return new Promise(() => {});
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(false), { once: true }));
}

/** The live child for these settings and agent, started when there is none (or the last one died). */
function childFor(settings, agentId, logger) {
  const key = JSON.stringify([settings, agentId ?? null]);
  let child = pool.get(key);
  if (!child || child.exited || child.retired) {
    child = new MemsiftChild(settings, agentId, logger);
    child.key = key;
    if (!child.exited) pool.set(key, child); // a spawn error can end it at once
  }
  return child;
}

async function closeAll() {
  await Promise.all([...pool.values()].map((child) => child.close()));
}

// ------------------------------------------------------------------ the tools

function searchFailure(error) {
  const warning =
    error.code === "MEMSIFT_TIMEOUT"
      ? "Memory search did not finish within its time limit."
      : "Memory search is unavailable: memsift could not answer.";
  const action = error.action ?? "Check the Gateway log, then retry memory_search.";
  return {
    results: [],
    disabled: true,
    unavailable: true,
    ...(error.code === "MEMSIFT_TIMEOUT" ? { timedOut: true } : {}),
    error: error.message,
    code: error.code,
    warning,
    action,
    debug: { warning, action, error: error.message },
  };
}

function getFailure(error, params) {
  return {
    path: typeof params?.path === "string" ? params.path : "",
    text: "",
    status: "error",
    code: error.code ?? "MEMORY_READ_FAILED",
    error: error.message,
    action: error.action ?? "Check the Gateway log, then retry memory_get.",
  };
}

function isAbort(error, signal) {
  return signal?.aborted === true || error?.name === "AbortError";
}

function createTools(api, settings) {
  const logger = api.logger;
  const run = async ({ name, args, ctx, signal, failure, params }) => {
    try {
      const child = childFor(settings, agentOf(ctx), logger);
      return jsonResult(await child.call(name, args, ctx?.sessionKey, signal));
    } catch (error) {
      if (isAbort(error, signal)) throw error;
      const known =
        error instanceof MemsiftFailure ? error : new MemsiftFailure("MEMSIFT_FAILED", String(error?.message ?? error));
      logger?.warn?.(`${PLUGIN_ID}: ${name} failed: ${known.message}`);
      return jsonResult(failure(known, params));
    }
  };

  const memorySearch = (ctx) => ({
    name: "memory_search",
    label: "Memory Search",
    description: SEARCH_DESCRIPTION,
    parameters: MemorySearchSchema,
    async execute(_toolCallId, params, signal) {
      const args = { query: String(params?.query ?? "") };
      if (Number.isInteger(params?.maxResults)) args.maxResults = params.maxResults;
      // memsift takes 0..1; memory-core takes any number, which this keeps meaning the same (none kept, or all).
      if (typeof params?.minScore === "number" && Number.isFinite(params.minScore)) {
        args.minScore = Math.min(1, Math.max(0, params.minScore));
      }
      if (typeof params?.corpus === "string") args.corpus = params.corpus;
      return run({ name: "memory_search", args, ctx, signal, failure: searchFailure, params });
    },
  });

  const memoryGet = (ctx) => ({
    name: "memory_get",
    label: "Memory Get",
    description: GET_DESCRIPTION,
    parameters: MemoryGetSchema,
    async execute(_toolCallId, params, signal) {
      const args = { path: String(params?.path ?? "") };
      if (Number.isInteger(params?.from)) args.from = params.from;
      if (Number.isInteger(params?.lines)) args.lines = params.lines;
      if (typeof params?.corpus === "string") args.corpus = params.corpus;
      return run({ name: "memory_get", args, ctx, signal, failure: getFailure, params });
    },
  });

  return { memorySearch, memoryGet };
}

// memory-core's "## Memory Recall" section (buildMemoryPromptSection): the only way into the system prompt.
function promptBuilder({ availableTools, citationsMode }) {
  const hasSearch = availableTools.has("memory_search");
  const hasGet = availableTools.has("memory_get");
  if (!hasSearch && !hasGet) return [];
  const guidance = hasSearch
    ? "Before answering anything about prior work, decisions, dates, people, preferences, or todos: run memory_search" +
      `${hasGet ? "; for memory-file hits, use memory_get to pull only the needed lines" : ""}. ` +
      "If low confidence after search, say you checked."
    : "Before answering anything about prior work, decisions, dates, people, preferences, or todos that point to a " +
      "specific memory file: run memory_get to pull only the needed lines. If low confidence after reading, say you " +
      "checked.";
  // sessions_search / sessions_history stay OpenClaw core tools: point the model at them as memory-core does.
  const sessions = !hasSearch
    ? []
    : [
        availableTools.has("sessions_search")
          ? "For session hits, use sessions_search with distinctive snippet text (and sessionKey set to the " +
            "transcript ID when known)" +
            (availableTools.has("sessions_history")
              ? ", then sessions_history with the returned sessionKey, messageId, and sessionId for a bounded " +
                "sanitized excerpt."
              : "; exact session history is unavailable with the enabled tools.")
          : availableTools.has("sessions_history")
            ? "For session hits, use sessions_history with a known session key or transcript ID and a small limit; " +
              "paginate its returned history metadata to locate the excerpt."
            : "Session hits are search snippets only; exact session history is unavailable with the enabled tools.",
        "Session search line numbers are not history offsets. Never read raw transcript files to expand session hits.",
      ];
  return [
    "## Memory Recall",
    guidance,
    ...sessions,
    "Report partial, unavailable, or stale recall to the user, including returned warning and action guidance.",
    citationsMode === "off"
      ? "Citations are disabled: do not mention file paths or line numbers in replies unless the user explicitly asks."
      : "Citations: include Source: <path#line> when it helps the user verify memory snippets.",
    "",
  ];
}

export default {
  id: PLUGIN_ID,
  name: "memsift memory",
  description: "memory_search and memory_get answered by memsift",
  register(api) {
    const settings = settingsOf(api.pluginConfig);
    const { memorySearch, memoryGet } = createTools(api, settings);
    api.registerMemoryCapability?.({ deterministicRecallToolName: "memory_search", promptBuilder });
    api.registerTool(memorySearch, { names: ["memory_search"] });
    api.registerTool(memoryGet, { names: ["memory_get"] });
    api.registerService?.({
      id: "memsift-mcp",
      start() {
        const command = [settings.command, ...settings.args].join(" ");
        api.logger?.info?.(`${PLUGIN_ID}: serving memory_search/memory_get with ${command} mcp --openclaw`);
      },
      // A reload stops the old instance before starting the new one: every child goes, and restarts on demand.
      async stop() {
        await closeAll();
      },
    });
  },
};
