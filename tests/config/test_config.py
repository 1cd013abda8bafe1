"""The OpenClaw config loader: defaults, per-agent merge, clamps, validation errors and warnings."""

import os

import pytest

import memsift
import memsift.config
from memsift.config import ExtraPath, load_config
from memsift.errors import ConfigError, ConfigWarning

CONFIG_JSON5 = """
// OpenClaw config with two agents
{
  agents: {
    defaults: {
      workspace: '~/claw',
      memorySearch: {
        provider: 'openai',
        extraPaths: ['notes', 'shared/docs',],  // trailing comma
        query: { maxResults: 8, hybrid: { vectorWeight: 0.6, textWeight: 0.4, }, },
        store: { path: '/data/{agentId}/index.sqlite' },
      },
    },
    list: [
      { id: 'main' },
      {
        id: 'writer',
        workspace: '/srv/writer',
        memorySearch: {
          /* the writer searches its drafts too */
          extraPaths: ['drafts', 'notes', { path: 'wiki', pattern: '**/*.md', evergreen: true }],
          query: { hybrid: { vectorWeight: 0.5 } },
          chunking: { tokens: 200 },
        },
      },
    ],
  },
}
"""


def memory_search(**settings):
    return {'agents': {'defaults': {'memorySearch': settings}}}


def hybrid(**settings):
    return load_config(memory_search(query={'hybrid': settings})).query.hybrid


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / 'openclaw.json5'
    path.write_text(CONFIG_JSON5, encoding='utf-8')
    return path


@pytest.mark.parametrize('source', [None, {}])
def test_defaults(source):
    config = load_config(source)
    assert (config.enabled, config.provider, config.model, config.fallback) == (True, 'auto', None, 'none')
    assert config.sources == ('memory',)
    assert config.extra_paths == ()
    assert (config.chunking.tokens, config.chunking.overlap) == (400, 80)
    assert (config.query.max_results, config.query.min_score) == (6, 0.35)
    assert config.query.hybrid.vector_weight == pytest.approx(0.7)
    assert config.query.hybrid.text_weight == pytest.approx(0.3)
    assert config.query.hybrid.candidate_multiplier == 4
    assert (config.query.hybrid.mmr.enabled, config.query.hybrid.mmr.lambda_) == (False, 0.7)
    assert config.query.hybrid.temporal_decay.half_life_days == 30
    assert config.remote.batch.concurrency == 2 and config.remote.batch.poll_interval_ms == 2000
    assert config.remote.non_batch_concurrency == 4
    assert config.store.path == os.path.expanduser('~/.memsift/memory/main.sqlite')
    assert config.store.fts_tokenizer == 'unicode61'
    assert config.sync.sessions.delta_bytes == 100_000
    assert config.multimodal.max_file_bytes == 10 * 1024 * 1024
    assert config.local.context_size == 4096
    assert (config.citations, config.agent_id, config.workspace, config.source_path) == ('auto', 'main', None, None)


def test_ollama_runs_one_embedding_request_at_a_time():
    assert load_config(memory_search(provider='ollama')).remote.non_batch_concurrency == 1


def test_json5_file_agent_override_wins_key_by_key(config_file):
    config = load_config(config_file, agent_id='writer')
    assert config.source_path == str(config_file)
    assert config.provider == 'openai'
    assert config.query.max_results == 8
    assert config.query.hybrid.vector_weight == pytest.approx(0.5 / 0.9)
    assert config.query.hybrid.text_weight == pytest.approx(0.4 / 0.9)
    assert (config.chunking.tokens, config.chunking.overlap) == (200, 80)
    assert config.extra_paths == ('notes', 'shared/docs', 'drafts', ExtraPath('wiki', '**/*.md', evergreen=True))
    assert config.store.path == '/data/writer/index.sqlite'
    assert config.workspace == '/srv/writer'


def test_json5_file_agent_without_overrides_gets_defaults(config_file):
    config = load_config(str(config_file))
    assert config.query.hybrid.vector_weight == pytest.approx(0.6)
    assert config.extra_paths == ('notes', 'shared/docs')
    assert config.store.path == '/data/main/index.sqlite'
    assert config.workspace == os.path.expanduser('~/claw')


@pytest.mark.parametrize(
    ('settings', 'expected'),
    [
        ({'vectorWeight': 2, 'textWeight': 2}, (0.5, 0.5)),
        ({'vectorWeight': 0, 'textWeight': 0}, (0.7, 0.3)),
        ({'vectorWeight': 1.5, 'textWeight': 0}, (1.0, 0.0)),
        ({'vectorWeight': -1, 'textWeight': 0.3}, (0.0, 1.0)),
    ],
)
def test_weights_are_clamped_then_normalised(settings, expected):
    resolved = hybrid(**settings)
    assert (resolved.vector_weight, resolved.text_weight) == pytest.approx(expected)


@pytest.mark.parametrize(('value', 'expected'), [(0, 1), (-3, 1), (2.9, 2), (20, 20), (99, 20)])
def test_candidate_multiplier_is_floored_and_clamped(value, expected):
    assert hybrid(candidateMultiplier=value).candidate_multiplier == expected


@pytest.mark.parametrize(('value', 'expected'), [(0.2, 1), (-5, 1), (7.9, 7), (30, 30)])
def test_half_life_days_is_floored_with_minimum_one(value, expected):
    assert hybrid(temporalDecay={'halfLifeDays': value}).temporal_decay.half_life_days == expected


@pytest.mark.parametrize(('value', 'expected'), [(-2, 0), (1.5, 1), (0.7, 0.7)])
def test_clamped_to_unit_interval(value, expected):
    assert load_config(memory_search(query={'minScore': value})).query.min_score == expected
    assert hybrid(mmr={'lambda': value}).mmr.lambda_ == expected


@pytest.mark.parametrize(('overlap', 'expected'), [(500, 99), (-1, 0), (10, 10)])
def test_overlap_is_clamped_below_tokens(overlap, expected):
    assert load_config(memory_search(chunking={'tokens': 100, 'overlap': overlap})).chunking.overlap == expected


def test_cache_max_entries_is_floored_with_minimum_one():
    assert load_config(memory_search(cache={'maxEntries': 9.8})).cache.max_entries == 9
    assert load_config(memory_search(cache={'maxEntries': 0})).cache.max_entries == 1


@pytest.mark.parametrize(
    ('settings', 'expected'),
    [
        ({'sources': ['memory', 'sessions']}, ('memory',)),
        ({'sources': ['sessions']}, ('memory',)),
        ({'sources': []}, ('memory',)),
        ({'sources': ['memory', 'sessions'], 'experimental': {'sessionMemory': True}}, ('memory', 'sessions')),
        ({'sources': ['sessions'], 'experimental': {'sessionMemory': True}}, ('sessions',)),
    ],
)
def test_sessions_source_needs_experimental_session_memory(settings, expected):
    assert load_config(memory_search(**settings)).sources == expected


def test_newer_memory_search_form():
    root = {
        'memory': {'search': {'query': {'maxResults': 4}, 'extraPaths': ['a']}, 'citations': 'off'},
        'agents': {'entries': {'main': {'memory': {'search': {'extraPaths': ['b', 'a'], 'query': {'minScore': 0.2}}}}}},
    }
    config = load_config(root)
    assert (config.query.max_results, config.query.min_score, config.extra_paths) == (4, 0.2, ('a', 'b'))
    assert config.citations == 'off' and config.profile.name == 'openclaw-2'


def test_a_2x_config_gets_the_ranking_openclaw_2x_fixes():
    hybrid = load_config({'memory': {'search': {}}}).query.hybrid
    assert (hybrid.vector_weight, hybrid.text_weight, hybrid.mmr.enabled, hybrid.mmr.lambda_) == (0.7, 0.3, True, 0.7)
    assert (hybrid.temporal_decay.enabled, hybrid.temporal_decay.half_life_days) == (True, 30)
    classic = load_config(memory_search()).query.hybrid  # 1.x: both stages off unless the config turns them on
    assert (classic.mmr.enabled, classic.temporal_decay.enabled) == (False, False)
    assert load_config(memory_search()).profile.name == load_config(None).profile.name == 'openclaw-1'


@pytest.mark.parametrize(
    ('search', 'named'),
    [
        ({'chunking': {'tokens': 50}}, 'memory.search.chunking'),
        ({'query': {'hybrid': {'mmr': {'enabled': False}}}}, 'memory.search.query.hybrid'),
        ({'store': {'path': '/elsewhere/{agentId}.sqlite'}}, 'memory.search.store.path'),
        ({'sync': {'watch': False}}, 'memory.search.sync'),
        ({'query': {'rerank': {'enabled': True}}}, 'memory.search.query.rerank'),
        ({'extraPaths': [{'path': 'wiki', 'evergreen': True}]}, r'memory.search.extraPaths\[0\].evergreen'),
    ],
)
def test_a_key_2x_rejects_is_named_and_not_applied(search, named):
    with pytest.warns(ConfigWarning, match=f'{named}.*plugins.entries.memsift.config') as caught:
        config = load_config({'memory': {'search': search}})
    assert len(caught) == 1
    defaults = load_config({'memory': {'search': {}}})
    assert (config.chunking, config.query.hybrid, config.store.path, config.sync) == (
        defaults.chunking,
        defaults.query.hybrid,
        defaults.store.path,
        defaults.sync,
    )
    assert not config.query.rerank.enabled and all(not getattr(p, 'evergreen', False) for p in config.extra_paths)


def test_memsift_settings_of_a_2x_config_live_in_its_plugin_entry(tmp_path):
    own = {'store': {'path': str(tmp_path / '{agentId}.sqlite')}, 'query': {'hybrid': {'mmr': {'enabled': False}}}}
    root = {'memory': {'search': {'query': {'maxResults': 2}}}, 'plugins': {'entries': {'memsift': {'config': own}}}}
    config = load_config(root, 'work')
    assert (config.store.path, config.query.hybrid.mmr.enabled) == (str(tmp_path / 'work.sqlite'), False)
    assert config.query.max_results == 2 and config.query.hybrid.temporal_decay.enabled
    with pytest.raises(ConfigError, match=r'plugins\.entries\.memsift\.config\.query\.maxResults'):
        load_config(
            {'memory': {'search': {}}, 'plugins': {'entries': {'memsift': {'config': {'query': {'maxResults': 0}}}}}}
        )


def test_memory_search_wins_over_a_legacy_block_beside_it_as_doctor_merges_them():
    root = {
        **memory_search(query={'maxResults': 2, 'minScore': 0.1}, chunking={'tokens': 50}),
        'memory': {'search': {'query': {'maxResults': 9}}},
    }
    with pytest.warns(ConfigWarning) as caught:
        config = load_config(root)
    messages = [str(w.message) for w in caught]
    assert any('agents.defaults.memorySearch: the OpenClaw 1.x form; memory.search wins' in m for m in messages)
    assert any('agents.defaults.memorySearch.chunking' in m for m in messages)
    assert (config.query.max_results, config.query.min_score, config.chunking.tokens) == (9, 0.1, 400)
    root['agents']['defaults']['memorySearch']['extraPaths'] = ['legacy']
    root['memory']['search']['extraPaths'] = ['current']
    with pytest.warns(ConfigWarning):
        assert load_config(root).extra_paths == ('current',)  # doctor keeps memory.search's list, drops the legacy one


def test_multimodal_all_expands():
    settings = {'provider': 'gemini', 'model': 'gemini-embedding-2-preview', 'multimodal': {'enabled': True}}
    assert load_config(memory_search(**settings)).multimodal.modalities == ('image', 'audio')
    settings['multimodal'] = {'enabled': True, 'modalities': ['audio']}
    assert load_config(memory_search(**settings)).multimodal.modalities == ('audio',)


@pytest.mark.parametrize(
    'settings',
    [
        {'provider': 'openai'},
        {'provider': 'gemini', 'model': 'gemini-embedding-001'},
        {'provider': 'gemini', 'model': 'gemini-embedding-2-preview', 'fallback': 'openai'},
    ],
)
def test_multimodal_needs_gemini_embedding_2_without_fallback(settings):
    with pytest.raises(ConfigError, match=r'agents\.defaults\.memorySearch\.multimodal\.enabled'):
        load_config(memory_search(multimodal={'enabled': True}, **settings))


@pytest.mark.parametrize(
    ('settings', 'path', 'shown'),
    [
        ({'query': {'maxResults': 'many'}}, 'query.maxResults', "'many'"),
        ({'query': {'maxResults': -1}}, 'query.maxResults', '-1'),
        ({'query': {'minScore': float('nan')}}, 'query.minScore', 'nan'),
        ({'query': {'hybrid': {'enabled': 1}}}, 'query.hybrid.enabled', '1'),
        ({'query': {'hybrid': {'vectorWeight': True}}}, 'query.hybrid.vectorWeight', 'True'),
        ({'chunking': {'tokens': 0}}, 'chunking.tokens', '0'),
        ({'provider': 7}, 'provider', '7'),
        ({'store': {'fts': {'tokenizer': 'porter'}}}, 'store.fts.tokenizer', "'porter'"),
        ({'sources': ['memory', 'web']}, 'sources[1]', "'web'"),
        ({'extraPaths': ['ok', 3]}, 'extraPaths[1]', '3'),
        ({'query': 'fast'}, 'query', "'fast'"),
    ],
)
def test_invalid_values_name_the_key_path_and_value(settings, path, shown):
    with pytest.raises(ConfigError) as caught:
        load_config(memory_search(**settings))
    message = str(caught.value)
    assert f'agents.defaults.memorySearch.{path}: got {shown};' in message
    assert caught.value.key_path == f'agents.defaults.memorySearch.{path}'


def test_invalid_agent_value_names_its_list_index():
    bad = {'id': 'main', 'memorySearch': {'query': {'hybrid': {'vectorWeight': 'x'}}}}
    root = {'agents': {'list': [{'id': 'other'}, bad]}}
    with pytest.raises(ConfigError, match=r"agents\.list\[1\]\.memorySearch\.query\.hybrid\.vectorWeight: got 'x'"):
        load_config(root)


def test_long_values_are_truncated():
    with pytest.raises(ConfigError) as caught:
        load_config(memory_search(query={'maxResults': 'x' * 500}))
    assert "'xxx" in str(caught.value) and len(str(caught.value)) < 200


@pytest.mark.parametrize(
    'remote',
    [{'apiKey': 12345678}, {'headers': {'Authorization': 12345678}}, {'headers': '12345678'}],
)
def test_secrets_never_appear_in_messages(remote):
    with pytest.raises(ConfigError) as caught:
        load_config(memory_search(remote=remote))
    assert '12345678' not in str(caught.value)
    assert "'***'" in str(caught.value)


def test_secrets_inside_a_bad_object_are_masked():
    with pytest.raises(ConfigError) as caught:
        load_config({'agents': {'defaults': {'memorySearch': [{'remote': {'apiKey': 'sk-12345678'}}]}}})
    assert 'sk-12345678' not in str(caught.value)


def test_unknown_keys_warn_with_their_path():
    with pytest.warns(ConfigWarning, match=r'agents\.defaults\.memorySearch\.query\.maxResult: unknown key'):
        config = load_config(memory_search(query={'maxResult': 3}))
    assert config.query.max_results == 6


def test_malformed_file_names_file_and_line(tmp_path):
    path = tmp_path / 'broken.json5'
    path.write_text('{\n  agents: {\n    defaults: },\n}\n', encoding='utf-8')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(path) in str(caught.value) and 'line 3' in str(caught.value)
    assert caught.value.file == str(path)


def test_invalid_value_in_file_names_the_file(config_file):
    config_file.write_text("{agents: {defaults: {memorySearch: {query: {maxResults: 'many'}}}}}", encoding='utf-8')
    with pytest.raises(ConfigError, match=r'openclaw\.json5: agents\.defaults\.memorySearch\.query\.maxResults'):
        load_config(config_file)


def test_missing_file(tmp_path):
    path = tmp_path / 'nope.json5'
    with pytest.raises(ConfigError, match='not found') as caught:
        load_config(path)
    assert str(path) in str(caught.value)


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / 'latin1.json5'
    path.write_bytes('{memory: {citations: "\u00e9"}}'.encode('latin-1'))
    with pytest.raises(ConfigError, match='UTF-8'):
        load_config(path)


def test_file_that_is_not_an_object(tmp_path):
    path = tmp_path / 'list.json5'
    path.write_text('[1, 2]', encoding='utf-8')
    with pytest.raises(ConfigError, match='expected an object'):
        load_config(path)


def test_config_error_is_a_memsift_error():
    assert issubclass(ConfigError, memsift.MemsiftError)
    assert issubclass(ConfigWarning, UserWarning)


def test_repr_of_a_resolved_config_never_shows_secrets():
    config = load_config(
        {
            'agents': {
                'defaults': {
                    'memorySearch': {
                        'provider': 'openai',
                        'remote': {'apiKey': 'sk-live-SECRET', 'headers': {'X-Token': 'hdr-SECRET'}},
                    }
                }
            }
        }
    )
    assert config.remote.api_key == 'sk-live-SECRET'
    assert 'SECRET' not in repr(config) and 'SECRET' not in str(config)


def test_sessions_search_mode_defaults_to_ranked_and_can_restore_all_terms():
    assert load_config({}).session_tools.search_mode == 'ranked'
    strict = load_config({'tools': {'sessions': {'search': {'mode': 'all-terms'}}}})
    assert strict.session_tools.search_mode == 'all-terms'
    store = memsift.SessionStore.from_config(':memory:', 'main', strict.session_tools)
    assert store.search_mode == 'all-terms'
    store.close()
    with pytest.raises(ConfigError, match=r"tools\.sessions\.search\.mode: got 'fuzzy'"):
        load_config({'tools': {'sessions': {'search': {'mode': 'fuzzy'}}}})


def test_read_replicas_on_sqlite_are_ignored_with_a_warning(tmp_path):
    config = load_config({'agents': {'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'a.sqlite'),
                                                          'readDsn': 'postgresql://u:secret@replica/db'}}}}})  # fmt: skip
    from memsift.index.backend import open_memory_store

    with pytest.warns(ConfigWarning, match='store.readDsn is set but store.backend is "sqlite"') as caught:
        store = open_memory_store(config)
    store.close()
    assert 'secret' not in str(caught[0].message)


def test_a_top_level_memory_search_block_is_the_lowest_layer():
    """The oldest form, a top-level ``memorySearch``, gives way to ``agents.defaults.memorySearch``."""
    root = {'memorySearch': {'query': {'maxResults': 2, 'minScore': 0.2}}, **memory_search(query={'maxResults': 3})}
    config = load_config(root)
    assert (config.query.max_results, config.query.min_score) == (3, 0.2)
