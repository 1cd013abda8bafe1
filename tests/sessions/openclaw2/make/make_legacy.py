#!/usr/bin/env python3
"""Write a 1.x-style OpenClaw state dir (agents/<id>/sessions/*.jsonl + sessions.json)
that `openclaw doctor --session-sqlite import` accepts.  Deterministic ids/timestamps."""

import datetime
import json
import os
import sys

root = sys.argv[1]
state = os.path.join(root, 'state')
BASE = 1767261600000  # 2026-01-01T10:00:00Z


def iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%S.'
    ) + '%03dZ' % (ms % 1000)


USAGE = {
    'input': 10,
    'output': 5,
    'cacheRead': 0,
    'cacheWrite': 0,
    'totalTokens': 15,
    'cost': {'input': 0, 'output': 0, 'cacheRead': 0, 'cacheWrite': 0, 'total': 0},
}


def user(text, t):
    return {'role': 'user', 'content': [{'type': 'text', 'text': text}], 'timestamp': t}


def assistant(blocks, t, stop='stop'):
    if isinstance(blocks, str):
        blocks = [{'type': 'text', 'text': blocks}]
    return {
        'role': 'assistant',
        'content': blocks,
        'api': 'anthropic-messages',
        'provider': 'anthropic',
        'model': 'claude-sonnet-4-5',
        'usage': USAGE,
        'stopReason': stop,
        'timestamp': t,
    }


def tool_result(call_id, name, text, t):
    return {
        'role': 'toolResult',
        'toolCallId': call_id,
        'toolName': name,
        'content': [{'type': 'text', 'text': text}],
        'isError': False,
        'timestamp': t,
    }


class T:
    def __init__(self, sid, t0, cwd='/tmp/ocws'):
        self.sid, self.t = sid, t0
        self.lines = [{'type': 'session', 'version': 3, 'id': sid, 'timestamp': iso(t0), 'cwd': cwd}]
        self.leaf = None
        self.n = 0

    def _id(self):
        self.n += 1
        return '%s-e%02d' % (self.sid[-4:], self.n)

    def add(self, entry, parent='leaf'):
        self.t += 1000
        eid = self._id()
        e = {
            'type': entry.pop('type'),
            'id': eid,
            'parentId': self.leaf if parent == 'leaf' else parent,
            'timestamp': iso(self.t),
        }
        e.update(entry)
        self.lines.append(e)
        self.leaf = eid
        return eid

    def msg(self, m, parent='leaf'):
        return self.add({'type': 'message', 'message': m}, parent)


def write(agent, store, sid, tr, key, entry):
    d = os.path.join(state, 'agents', agent, 'sessions')
    os.makedirs(d, exist_ok=True)
    os.makedirs(os.path.join(state, 'agents', agent, 'agent'), exist_ok=True)
    p = os.path.join(d, sid + '.jsonl')
    with open(p, 'w') as f:
        for line in tr.lines:
            f.write(json.dumps(line, ensure_ascii=False) + '\n')
    e = {'sessionId': sid, 'updatedAt': tr.t, 'sessionFile': p}
    e.update(entry)
    store.setdefault(agent, {})[key] = e


stores = {}


def sid(n):
    return '00000000-0000-4000-8000-%012d' % n


# 1. main agent, main DM session: tool call, thinking, an edited (branched) user turn,
#    a large (>1 KiB, compressible) assistant message, and a compaction entry.
t = T(sid(1), BASE)
u1 = t.msg(user('What is the capital of France? zebra-marker-one', t.t + 1000))
t.msg(
    assistant(
        [
            {'type': 'thinking', 'thinking': 'Easy geography question.', 'thinkingSignature': 'sig'},
            {'type': 'text', 'text': 'Paris is the capital of France.'},
        ],
        t.t + 1000,
    )
)
u2 = t.msg(user('Run ls for me please', t.t + 1000))
t.msg(
    assistant(
        [{'type': 'toolCall', 'id': 'call_ls_1', 'name': 'exec', 'arguments': {'command': 'ls'}}], t.t + 1000, 'toolUse'
    )
)
t.msg(tool_result('call_ls_1', 'exec', 'README.md\nsrc\n', t.t + 1000))
t.msg(assistant('The directory has README.md and src.', t.t + 1000))
# old branch: user message that gets edited later
old = t.msg(user('Tell me about mangos (typo-branch-marker)', t.t + 1000))
t.msg(assistant('Mangos are tropical fruit (old branch answer).', t.t + 1000))
# edit: new child of the same parent as `old` -> active branch continues from here
t.leaf = old_parent = next(line for line in t.lines if line.get('id') == old)['parentId']
t.msg(user('Tell me about mangoes (edited-branch-marker)', t.t + 1000))
t.msg(assistant('Mangoes are tropical stone fruit. ' + ('Mango facts repeat. ' * 80), t.t + 1000))
t.add(
    {
        'type': 'compaction',
        'summary': 'User asked about France, ls, and mangoes.',
        'firstKeptEntryId': t.leaf,
        'tokensBefore': 4321,
    }
)
t.msg(user('After compaction: what about papayas? papaya-marker', t.t + 1000))
t.msg(assistant('Papayas are also tropical.', t.t + 1000))
write('main', stores, sid(1), t, 'agent:main:main', {'chatType': 'direct', 'displayName': 'Main DM'})

# 2. per-peer DM session (private) on telegram
t = T(sid(2), BASE + 3600_000)
t.msg(user('private dm about the dentist appointment dentist-marker', t.t + 1000))
t.msg(assistant('Your dentist appointment is on Tuesday.', t.t + 1000))
write(
    'main',
    stores,
    sid(2),
    t,
    'agent:main:telegram:direct:5550001',
    {
        'chatType': 'direct',
        'channel': 'telegram',
        'lastChannel': 'telegram',
        'lastTo': '5550001',
        'origin': {'provider': 'telegram', 'chatType': 'direct', 'from': 'telegram:5550001'},
    },
)

# 3. telegram group
t = T(sid(3), BASE + 2 * 3600_000)
t.msg(user('group chat about pineapple pizza pineapple-marker', t.t + 1000))
t.msg(assistant('Pineapple on pizza is divisive.', t.t + 1000))
write(
    'main',
    stores,
    sid(3),
    t,
    'agent:main:telegram:group:-100123',
    {'chatType': 'group', 'channel': 'telegram', 'groupId': '-100123', 'subject': 'Pizza fans'},
)

# 4. discord channel
t = T(sid(4), BASE + 3 * 3600_000)
t.msg(user('channel talk about release planning release-marker', t.t + 1000))
t.msg(assistant('Release is planned for Friday.', t.t + 1000))
write(
    'main',
    stores,
    sid(4),
    t,
    'agent:main:discord:channel:987654',
    {'chatType': 'channel', 'channel': 'discord', 'groupId': '987654', 'subject': '#releases'},
)

# 5. subagent spawned by main
t = T(sid(5), BASE + 4 * 3600_000)
t.msg(user('subagent task: count to three subagent-marker', t.t + 1000))
t.msg(assistant('one two three', t.t + 1000))
write(
    'main',
    stores,
    sid(5),
    t,
    'agent:main:subagent:11111111-2222-4333-8444-555555555555',
    {'chatType': 'direct', 'spawnedBy': 'agent:main:main', 'label': 'counter'},
)

# 6. cron (legacy non-canonical key `cron:<job>`; doctor --fix canonicalises to agent:main:cron:<job>)
t = T(sid(6), BASE + 5 * 3600_000)
t.msg(user('cron: produce the daily report cron-marker', t.t + 1000))
t.msg(assistant('Daily report: all good.', t.t + 1000))
write('main', stores, sid(6), t, 'cron:daily-report', {'chatType': 'direct'})

# 7. a session whose transcript contains an explicit reset boundary (keeps sessionId)
t = T(sid(7), BASE + 6 * 3600_000)
t.msg(user('before reset: remember the word walrus walrus-marker', t.t + 1000))
t.msg(assistant('Noted: walrus.', t.t + 1000))
t.add({'type': 'reset', 'reason': 'new'})
t.msg(user('after reset: hello again afterreset-marker', t.t + 1000))
t.msg(assistant('Hi! Fresh start.', t.t + 1000))
write('main', stores, sid(7), t, 'agent:main:webchat:direct:alice', {'chatType': 'direct', 'channel': 'webchat'})

# 8. second agent "work": its own DB
t = T(sid(8), BASE + 7 * 3600_000)
t.msg(user('work agent: quarterly budget numbers budget-marker', t.t + 1000))
t.msg(assistant('Q3 budget is 1.2M.', t.t + 1000))
write('work', stores, sid(8), t, 'agent:work:main', {'chatType': 'direct'})

for agent, store in stores.items():
    with open(os.path.join(state, 'agents', agent, 'sessions', 'sessions.json'), 'w') as f:
        json.dump(store, f, indent=2)

os.makedirs(os.path.join(root, 'cfg'), exist_ok=True)
os.makedirs(os.path.join(root, 'home'), exist_ok=True)
with open(os.path.join(root, 'cfg', 'openclaw.json'), 'w') as f:
    # maintenance "warn": otherwise the first session write prunes (delete + archive) the synthetic cron/subagent
    # sessions because their 2026-01-01 timestamps are older than session.maintenance.pruneAfter (30d).
    json.dump(
        {'agents': {'entries': {'main': {'default': True}, 'work': {}}}, 'session': {'maintenance': {'mode': 'warn'}}},
        f,
        indent=2,
    )
print('wrote legacy state under', state)
