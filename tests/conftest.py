"""Shared pytest configuration: hypothesis profiles.

Choose a profile with ``HYPOTHESIS_PROFILE=fast|slow`` (default ``fast``).
"""

import os

from hypothesis import settings

settings.register_profile('fast', max_examples=60, deadline=None)
settings.register_profile('slow', max_examples=1000, deadline=None)
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'fast'))
